package store

import (
	"context"
	"time"

	"holdco/models"
)

// DevIdPUserByEmail returns the development identity provider's user with
// this email; models.ErrNotFound when there is none.
func (s Identity) DevIdPUserByEmail(ctx context.Context, email string) (models.DevIdPUser, error) {
	var u models.DevIdPUser
	err := s.db.WithContext(ctx).Where("email = ?", email).Take(&u).Error
	return u, wrap("get dev idp user by email", err)
}

// DevIdPUserByID returns the development identity provider's user with
// this id (the subject it asserts); models.ErrNotFound when there is none.
func (s Identity) DevIdPUserByID(ctx context.Context, id string) (models.DevIdPUser, error) {
	var u models.DevIdPUser
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&u).Error
	return u, wrap("get dev idp user", err)
}

// CreateDevIdPUser stores a new development identity provider user;
// models.ErrDuplicate when the email is taken.
func (s Identity) CreateDevIdPUser(ctx context.Context, u models.DevIdPUser) (models.DevIdPUser, error) {
	u.CreatedAt = now()
	if err := s.db.WithContext(ctx).Create(&u).Error; err != nil {
		return models.DevIdPUser{}, wrap("create dev idp user", err)
	}
	return u, nil
}

// CreateDevIdPAuthRequest stores a sign-in in progress at the development
// identity provider.
func (s Identity) CreateDevIdPAuthRequest(ctx context.Context, r models.DevIdPAuthRequest) error {
	return wrap("create dev idp auth request", s.db.WithContext(ctx).Create(&r).Error)
}

// DevIdPAuthRequest returns the sign-in with this id unless it expired
// at the given time; models.ErrNotFound otherwise.
func (s Identity) DevIdPAuthRequest(ctx context.Context, id string, at time.Time) (models.DevIdPAuthRequest, error) {
	var r models.DevIdPAuthRequest
	err := s.db.WithContext(ctx).Where("id = ? AND expires_at > ?", id, at).Take(&r).Error
	return r, wrap("get dev idp auth request", err)
}

// DevIdPAuthRequestByCode returns the unexpired sign-in whose code has
// this hash; models.ErrNotFound otherwise.
func (s Identity) DevIdPAuthRequestByCode(ctx context.Context, codeHash string, at time.Time) (models.DevIdPAuthRequest, error) {
	var r models.DevIdPAuthRequest
	err := s.db.WithContext(ctx).Where("code_hash = ? AND expires_at > ?", codeHash, at).Take(&r).Error
	return r, wrap("get dev idp auth request by code", err)
}

// UpdateDevIdPAuthRequest sets what a step of the sign-in changed (the
// user who signed in, the code's hash) on the unexpired sign-in with this
// id; models.ErrNotFound when there is none.
func (s Identity) UpdateDevIdPAuthRequest(ctx context.Context, id string, at time.Time, set map[string]any) error {
	res := s.db.WithContext(ctx).Model(&models.DevIdPAuthRequest{}).Where("id = ? AND expires_at > ?", id, at).Updates(set)
	if res.Error != nil {
		return wrap("update dev idp auth request", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("update dev idp auth request", models.ErrNotFound)
	}
	return nil
}

// DeleteDevIdPAuthRequest deletes a sign-in (its code was redeemed) and
// says whether it was there: of two processes redeeming one code at once,
// one deletes it.
func (s Identity) DeleteDevIdPAuthRequest(ctx context.Context, id string) (bool, error) {
	res := s.db.WithContext(ctx).Where("id = ?", id).Delete(&models.DevIdPAuthRequest{})
	return res.RowsAffected > 0, wrap("delete dev idp auth request", res.Error)
}

// CreateDevIdPToken stores an access token of the development identity
// provider.
func (s Identity) CreateDevIdPToken(ctx context.Context, t models.DevIdPToken) error {
	return wrap("create dev idp token", s.db.WithContext(ctx).Create(&t).Error)
}

// DevIdPToken returns the access token with this id unless it expired at
// the given time; models.ErrNotFound otherwise.
func (s Identity) DevIdPToken(ctx context.Context, id string, at time.Time) (models.DevIdPToken, error) {
	var t models.DevIdPToken
	err := s.db.WithContext(ctx).Where("id = ? AND expires_at > ?", id, at).Take(&t).Error
	return t, wrap("get dev idp token", err)
}

// DeleteDevIdPToken revokes an access token.
func (s Identity) DeleteDevIdPToken(ctx context.Context, id string) error {
	return wrap("delete dev idp token", s.db.WithContext(ctx).Where("id = ?", id).Delete(&models.DevIdPToken{}).Error)
}
