package store

import (
	"context"

	"holdco/models"
)

// DevIdPUserByEmail returns the development identity provider's user with
// this email; models.ErrNotFound when there is none.
func (s *Store) DevIdPUserByEmail(ctx context.Context, email string) (models.DevIdPUser, error) {
	var u models.DevIdPUser
	err := s.db.WithContext(ctx).Where("email = ?", email).Take(&u).Error
	return u, wrap("get dev idp user by email", err)
}

// DevIdPUserByID returns the development identity provider's user with
// this id (the subject it asserts); models.ErrNotFound when there is none.
func (s *Store) DevIdPUserByID(ctx context.Context, id string) (models.DevIdPUser, error) {
	var u models.DevIdPUser
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&u).Error
	return u, wrap("get dev idp user", err)
}

// CreateDevIdPUser stores a new development identity provider user;
// models.ErrDuplicate when the email is taken.
func (s *Store) CreateDevIdPUser(ctx context.Context, u models.DevIdPUser) (models.DevIdPUser, error) {
	u.CreatedAt = now()
	if err := s.db.WithContext(ctx).Create(&u).Error; err != nil {
		return models.DevIdPUser{}, wrap("create dev idp user", err)
	}
	return u, nil
}
