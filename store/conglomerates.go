package store

import (
	"context"

	"holdco/models"
)

// ListConglomeratesForUser returns the conglomerates the user is a member
// of, oldest first.
func (s Identity) ListConglomeratesForUser(ctx context.Context, userID string) ([]models.Conglomerate, error) {
	congls := []models.Conglomerate{}
	err := s.db.WithContext(ctx).
		Joins("JOIN memberships ON memberships.conglomerate_id = conglomerates.id").
		Where("memberships.user_id = ?", userID).
		Order("conglomerates.created_at, conglomerates.id").
		Find(&congls).Error
	if err != nil {
		return nil, wrap("list conglomerates for user", err)
	}
	return congls, nil
}

// GetConglomerate returns one conglomerate by id (the tenant itself), or
// models.ErrNotFound. It does not check who asks: service/ calls IsMember
// first.
func (s Identity) GetConglomerate(ctx context.Context, id string) (models.Conglomerate, error) {
	var c models.Conglomerate
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&c).Error; err != nil {
		return models.Conglomerate{}, wrap("get conglomerate", err)
	}
	return c, nil
}

// IsMember reports whether the user belongs to the conglomerate, in any
// role. It is the tenant check behind every conglomerate-scoped request.
func (s Identity) IsMember(ctx context.Context, conglomerateID, userID string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.Membership{}).
		Where("conglomerate_id = ? AND user_id = ?", conglomerateID, userID).
		Count(&n).Error
	if err != nil {
		return false, wrap("is member", err)
	}
	return n > 0, nil
}
