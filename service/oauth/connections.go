package oauth

import (
	"context"
	"errors"
	"time"

	"holdco/models"
	"holdco/service"
)

// Connection is an assistant the user approved (GET /auth/connections).
type Connection struct {
	ID          string
	ClientID    string
	ClientName  string
	Verified    bool
	RedirectURI string
	ApprovedAt  time.Time
	LiveTokens  int64
}

// ListConnections lists the acting user's connected assistants, most
// recently approved first.
func (s *Service) ListConnections(ctx context.Context) ([]Connection, error) {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return nil, err
	}
	consents, err := s.store.OAuth().ListOAuthConsents(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	counts, err := s.store.OAuth().OAuthTokenCounts(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := make([]Connection, 0, len(consents))
	for _, c := range consents {
		_, pre := s.preregistered[c.ClientID]
		out = append(out, Connection{ID: c.ID, ClientID: c.ClientID, ClientName: c.ClientName, Verified: pre,
			RedirectURI: c.RedirectURI, ApprovedAt: c.ApprovedAt, LiveTokens: counts[c.ClientID]})
	}
	return out, nil
}

// Disconnect forgets the acting user's consent for an assistant and
// revokes the user's tokens of that assistant (404 when no such
// connection, 403 when it is another user's). Credentials the assistant
// already obtained through its tools (a database connection string, a
// company API key, …) are not revoked (rule 13).
func (s *Service) Disconnect(ctx context.Context, connectionID string) error {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return err
	}
	c, err := s.store.OAuth().GetOAuthConsentByID(ctx, connectionID)
	if errors.Is(err, models.ErrNotFound) {
		return models.Errorf(models.CodeNotFound, "No such connected assistant.")
	}
	if err != nil {
		return err
	}
	if c.UserID != p.UserID {
		return models.Errorf(models.CodeForbidden, "This connected assistant belongs to another user.")
	}
	hashes, err := s.store.OAuth().DisconnectOAuthClient(ctx, p.UserID, c.ClientID, s.now())
	if err != nil {
		return err
	}
	s.forget(hashes)
	return nil
}
