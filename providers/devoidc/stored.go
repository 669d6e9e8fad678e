package devoidc

import (
	"context"
	"errors"

	"holdco/models"
)

// UserRows is where StoredUsers keeps users (holdco's store): rows of
// models.DevIdPUser, with models.ErrNotFound and models.ErrDuplicate.
type UserRows interface {
	DevIdPUserByEmail(ctx context.Context, email string) (models.DevIdPUser, error)
	DevIdPUserByID(ctx context.Context, id string) (models.DevIdPUser, error)
	CreateDevIdPUser(ctx context.Context, u models.DevIdPUser) (models.DevIdPUser, error)
}

// StoredUsers keeps the provider's users in database rows, so subjects
// survive restarts and every replica sees the same users.
type StoredUsers struct{ Rows UserRows }

var _ Users = StoredUsers{}

func (s StoredUsers) UserByEmail(ctx context.Context, email string) (User, []byte, error) {
	u, err := s.Rows.DevIdPUserByEmail(ctx, email)
	if err != nil {
		return User{}, nil, usersError(err)
	}
	return userOf(u), u.PasswordHash, nil
}

func (s StoredUsers) UserByID(ctx context.Context, id string) (User, error) {
	u, err := s.Rows.DevIdPUserByID(ctx, id)
	if err != nil {
		return User{}, usersError(err)
	}
	return userOf(u), nil
}

func (s StoredUsers) CreateUser(ctx context.Context, user User, hash []byte) (User, error) {
	u, err := s.Rows.CreateDevIdPUser(ctx, models.DevIdPUser{Email: user.Email, Name: user.Name, PasswordHash: hash})
	if err != nil {
		return User{}, usersError(err)
	}
	return userOf(u), nil
}

func userOf(u models.DevIdPUser) User { return User{ID: u.ID, Email: u.Email, Name: u.Name} }

// usersError maps the store's errors to those Users promises.
func usersError(err error) error {
	switch {
	case errors.Is(err, models.ErrNotFound):
		return ErrUserNotFound
	case errors.Is(err, models.ErrDuplicate):
		return ErrEmailTaken
	}
	return err
}
