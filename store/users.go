package store

import (
	"context"

	"gorm.io/gorm"

	"holdco/models"
)

// CreateUserWithConglomerate signs a user up: it creates the user, their
// conglomerate (trial starting now) and the owner membership in one
// transaction, so no user exists without an account. A user whose
// identity (issuer, subject) is already taken gives models.ErrDuplicate;
// that includes soft-deleted users, whose rows keep their identity.
func (s Identity) CreateUserWithConglomerate(ctx context.Context, user models.User, conglomerateName string) (models.User, models.Conglomerate, error) {
	var congl models.Conglomerate
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&user).Error; err != nil {
			return err
		}
		congl = models.Conglomerate{
			Name:           conglomerateName,
			OwnerUserID:    user.ID,
			TrialStartedAt: now(),
		}
		if err := tx.Create(&congl).Error; err != nil {
			return err
		}
		return tx.Create(&models.Membership{
			ConglomerateID: congl.ID,
			UserID:         user.ID,
			Role:           models.RoleOwner,
		}).Error
	})
	if err != nil {
		return models.User{}, models.Conglomerate{}, wrap("create user with conglomerate", err)
	}
	return user, congl, nil
}

// GetUser returns a user that is not deleted, or models.ErrNotFound.
func (s Identity) GetUser(ctx context.Context, id string) (models.User, error) {
	var u models.User
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&u).Error; err != nil {
		return models.User{}, wrap("get user", err)
	}
	return u, nil
}

// GetUserBySubject finds the user signed in as subject at the identity
// provider issuer. Deleted users are not found.
func (s Identity) GetUserBySubject(ctx context.Context, issuer, subject string) (models.User, error) {
	var u models.User
	err := s.db.WithContext(ctx).
		Where("issuer = ? AND subject = ?", issuer, subject).
		Take(&u).Error
	if err != nil {
		return models.User{}, wrap("get user by subject", err)
	}
	return u, nil
}
