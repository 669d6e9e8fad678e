package store

import (
	"context"
	"errors"

	"holdco/models"
	"holdco/providers/devoidc"
)

// DevIdPUsers adapts the store to the development identity provider's user
// set.
type DevIdPUsers struct{ S *Store }

var _ devoidc.Users = DevIdPUsers{}

func (d DevIdPUsers) UserByEmail(ctx context.Context, email string) (devoidc.User, []byte, error) {
	var u models.DevIdPUser
	err := d.S.db.WithContext(ctx).Where("email = ?", email).Take(&u).Error
	if err != nil {
		return devoidc.User{}, nil, devIdPError("get dev idp user by email", err)
	}
	return devoidc.User{ID: u.ID, Email: u.Email, Name: u.Name}, u.PasswordHash, nil
}

func (d DevIdPUsers) UserByID(ctx context.Context, id string) (devoidc.User, error) {
	var u models.DevIdPUser
	if err := d.S.db.WithContext(ctx).Where("id = ?", id).Take(&u).Error; err != nil {
		return devoidc.User{}, devIdPError("get dev idp user", err)
	}
	return devoidc.User{ID: u.ID, Email: u.Email, Name: u.Name}, nil
}

func (d DevIdPUsers) CreateUser(ctx context.Context, user devoidc.User, hash []byte) (devoidc.User, error) {
	u := models.DevIdPUser{Email: user.Email, Name: user.Name, PasswordHash: hash, CreatedAt: now()}
	if err := d.S.db.WithContext(ctx).Create(&u).Error; err != nil {
		return devoidc.User{}, devIdPError("create dev idp user", err)
	}
	return devoidc.User{ID: u.ID, Email: u.Email, Name: u.Name}, nil
}

func devIdPError(op string, err error) error {
	err = wrap(op, err)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return devoidc.ErrUserNotFound
	case errors.Is(err, models.ErrDuplicate):
		return devoidc.ErrEmailTaken
	}
	return err
}
