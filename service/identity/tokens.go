package identity

import (
	"context"
	"errors"
	"strings"
	"time"

	"holdco/models"
	"holdco/service"
)

// maxTokenLifetime bounds expires_in_days of a personal access token.
const maxTokenDays = 365

// CreatedToken is a new personal access token; Raw is shown exactly once.
type CreatedToken struct {
	Key models.APIKey
	Raw string
}

// CreatePersonalToken mints a personal access token for the caller. It
// needs a user credential that holds conglomerate scope.
func (s *Service) CreatePersonalToken(ctx context.Context, name string, expiresInDays *int) (CreatedToken, error) {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return CreatedToken{}, err
	}
	if p.ConglomerateID == "" {
		return CreatedToken{}, models.Errorf(models.CodeForbidden, "Creating a token needs a credential with conglomerate scope.")
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return CreatedToken{}, models.Errorf(models.CodeInvalidArgument, "The token name must not be blank.").WithField("name")
	}
	key := models.APIKey{UserID: p.UserID, ConglomerateID: p.ConglomerateID, Kind: models.APIKeyPersonal, Name: name}
	if expiresInDays != nil {
		if *expiresInDays < 1 || *expiresInDays > maxTokenDays {
			return CreatedToken{}, models.Errorf(models.CodeInvalidArgument, "expires_in_days must be from 1 to 365.").WithField("expires_in_days")
		}
		at := s.now().Add(time.Duration(*expiresInDays) * 24 * time.Hour)
		key.ExpiresAt = &at
	}
	raw, hash := service.NewCredential(service.PrefixUserKey)
	key.TokenHash = hash
	if err := s.store.Identity().CreateAPIKey(ctx, &key); err != nil {
		return CreatedToken{}, err
	}
	return CreatedToken{Key: key, Raw: raw}, nil
}

// ListPersonalTokens lists the caller's live personal access tokens; CLI
// session keys and web sessions are not listed.
func (s *Service) ListPersonalTokens(ctx context.Context) ([]models.APIKey, error) {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return nil, err
	}
	return s.store.Identity().ListLiveAPIKeys(ctx, p.UserID, models.APIKeyPersonal, s.now())
}

// RevokePersonalToken soft-revokes one of the caller's personal access
// tokens; revoking it again is a no-op. A missing token is 404, another
// user's 403.
func (s *Service) RevokePersonalToken(ctx context.Context, id string) error {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return err
	}
	key, err := s.store.Identity().GetAPIKey(ctx, id)
	if errors.Is(err, models.ErrNotFound) || err == nil && key.Kind != models.APIKeyPersonal {
		return models.Errorf(models.CodeNotFound, "No personal access token has id %s.", id)
	}
	if err != nil {
		return err
	}
	if key.UserID != p.UserID {
		return models.Errorf(models.CodeForbidden, "Token %s belongs to another user.", id)
	}
	if err := s.store.Identity().RevokeAPIKey(ctx, key.ID, s.now()); err != nil {
		return err
	}
	s.userKeys.Delete(key.TokenHash)
	return nil
}
