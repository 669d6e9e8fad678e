package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// The authorization server's rows (oauth/, service/oauth). They belong to
// a user, never to a company, so the methods take the user id the use case
// authenticated.

// CreateOAuthClient stores a dynamically registered client.
func (s OAuth) CreateOAuthClient(ctx context.Context, c *models.OAuthClient) error {
	return wrap("create oauth client", s.db.WithContext(ctx).Create(c).Error)
}

// SaveOAuthMetadataClient stores (or refreshes) the cached metadata
// document of a client named by its URL; UsedAt is kept.
func (s OAuth) SaveOAuthMetadataClient(ctx context.Context, c models.OAuthClient) error {
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "id"}},
		DoUpdates: clause.AssignmentColumns([]string{"name", "client_uri", "application_type", "redirect_uris", "cache_until"}),
	}).Create(&c).Error
	return wrap("save oauth metadata client", err)
}

// GetOAuthClient returns a self-registered client, or models.ErrNotFound.
func (s OAuth) GetOAuthClient(ctx context.Context, id string) (models.OAuthClient, error) {
	var c models.OAuthClient
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&c).Error
	return c, wrap("get oauth client", err)
}

// CountUnusedOAuthClientsSince counts the dynamic clients registered since t
// that nobody used yet (the bound on pending registrations).
func (s OAuth) CountUnusedOAuthClientsSince(ctx context.Context, t time.Time) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.OAuthClient{}).
		Where("kind = ? AND used_at IS NULL AND created_at > ?", models.OAuthClientDynamic, t).Count(&n).Error
	return n, wrap("count oauth clients", err)
}

// DeleteUnusedOAuthClients deletes the dynamic clients registered before t
// that never got a code: a registration nobody completes expires.
func (s OAuth) DeleteUnusedOAuthClients(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("kind = ? AND used_at IS NULL AND created_at < ?", models.OAuthClientDynamic, before).
		Delete(&models.OAuthClient{})
	return res.RowsAffected, wrap("delete unused oauth clients", res.Error)
}

// DeleteExpiredOAuthCodes deletes codes that expired before t.
func (s OAuth) DeleteExpiredOAuthCodes(ctx context.Context, before time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Where("expires_at < ?", before).Delete(&models.OAuthCode{})
	return res.RowsAffected, wrap("delete expired oauth codes", res.Error)
}

// GetOAuthConsent returns the user's consent for the client, or
// models.ErrNotFound.
func (s OAuth) GetOAuthConsent(ctx context.Context, userID, clientID string) (models.OAuthConsent, error) {
	var c models.OAuthConsent
	err := s.db.WithContext(ctx).Where("user_id = ? AND client_id = ?", userID, clientID).Take(&c).Error
	return c, wrap("get oauth consent", err)
}

// GetOAuthConsentByID returns a consent by id, whoever's, or
// models.ErrNotFound.
func (s OAuth) GetOAuthConsentByID(ctx context.Context, id string) (models.OAuthConsent, error) {
	var c models.OAuthConsent
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&c).Error
	return c, wrap("get oauth consent", err)
}

// SaveOAuthConsent records the user's approval, replacing an earlier one
// for the same client (the last approved redirect URI is remembered).
func (s OAuth) SaveOAuthConsent(ctx context.Context, c models.OAuthConsent) error {
	c.CreatedAt = c.ApprovedAt
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}, {Name: "client_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"client_name", "redirect_uri", "redirect_set", "version", "approved_at"}),
	}).Create(&c).Error
	return wrap("save oauth consent", err)
}

// OAuthRedirectApproved reports whether any user approved the client for
// the redirect URI.
func (s OAuth) OAuthRedirectApproved(ctx context.Context, clientID, redirectURI string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.OAuthConsent{}).
		Where("client_id = ? AND redirect_uri = ?", clientID, redirectURI).Limit(1).Count(&n).Error
	return n > 0, wrap("oauth redirect approved", err)
}

// ListOAuthConsents lists the user's connected assistants, most recently
// approved first.
func (s OAuth) ListOAuthConsents(ctx context.Context, userID string) ([]models.OAuthConsent, error) {
	var cs []models.OAuthConsent
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("approved_at DESC, id").Find(&cs).Error
	return cs, wrap("list oauth consents", err)
}

// DisconnectOAuthClient deletes the user's consent for the client and
// revokes the user's live tokens of that client, in one transaction. It
// returns the revoked tokens' hashes (for the caches).
func (s OAuth) DisconnectOAuthClient(ctx context.Context, userID, clientID string, at time.Time) ([]string, error) {
	var hashes []string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("user_id = ? AND client_id = ?", userID, clientID).Delete(&models.OAuthConsent{}).Error; err != nil {
			return err
		}
		live := tx.Model(&models.OAuthToken{}).Where("user_id = ? AND client_id = ? AND revoked_at IS NULL", userID, clientID)
		if err := live.Session(&gorm.Session{}).Pluck("token_hash", &hashes).Error; err != nil {
			return err
		}
		return live.Session(&gorm.Session{}).Update("revoked_at", at).Error
	})
	return hashes, wrap("disconnect oauth client", err)
}

// CreateOAuthCode stores an authorization code (its hash).
func (s OAuth) CreateOAuthCode(ctx context.Context, c *models.OAuthCode) error {
	return wrap("create oauth code", s.db.WithContext(ctx).Create(c).Error)
}

// ErrOAuthCodeReplayed is returned by RedeemOAuthCode for a code that was
// already redeemed; the token it issued has been revoked.
var ErrOAuthCodeReplayed = errors.New("store: oauth code already redeemed")

// Redemption is the outcome of RedeemOAuthCode.
type Redemption struct {
	Code models.OAuthCode
	// Token is the issued token (zero when check refused the code).
	Token models.OAuthToken
	// RevokedHashes are the hashes of tokens revoked: the oldest beyond
	// the per-client limit, or the token a replayed code had issued.
	RevokedHashes []string
}

// RedeemOAuthCode spends a code and issues tok for it, in one transaction:
// the first attempt uses the code up whatever its outcome; check (the
// bindings: client, redirect URI, verifier, resource, expiry) may refuse
// it, and its error is returned with nothing issued. A code already spent
// answers ErrOAuthCodeReplayed after revoking the token it issued; an
// unknown one models.ErrNotFound. The user keeps at most maxLive live
// tokens of the client: the oldest beyond are revoked in the same
// transaction, serialized per user and client (an advisory lock on
// Postgres; SQLite transactions begin IMMEDIATE).
func (s OAuth) RedeemOAuthCode(ctx context.Context, codeHash string, at time.Time, check func(models.OAuthCode) error, tok models.OAuthToken, maxLive int) (Redemption, error) {
	var out Redemption
	var checkErr, replayed error
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.OAuthCode{}).Where("code_hash = ? AND used_at IS NULL", codeHash).Update("used_at", at)
		if res.Error != nil {
			return res.Error
		}
		if err := tx.Where("code_hash = ?", codeHash).Take(&out.Code).Error; err != nil {
			return err
		}
		if res.RowsAffected != 1 {
			replayed = ErrOAuthCodeReplayed
			if out.Code.TokenID == nil {
				return nil
			}
			revoke := tx.Model(&models.OAuthToken{}).Where("id = ? AND revoked_at IS NULL", *out.Code.TokenID)
			if err := revoke.Session(&gorm.Session{}).Pluck("token_hash", &out.RevokedHashes).Error; err != nil {
				return err
			}
			return revoke.Session(&gorm.Session{}).Update("revoked_at", at).Error
		}
		if checkErr = check(out.Code); checkErr != nil {
			return nil // the code stays spent
		}
		if s.dialect == DialectPostgres {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtext(?))", "holdco.oauth-tokens."+out.Code.UserID+" "+out.Code.ClientID).Error; err != nil {
				return err
			}
		}
		tok.UserID, tok.ClientID, tok.CreatedAt = out.Code.UserID, out.Code.ClientID, at
		if err := tx.Create(&tok).Error; err != nil {
			return err
		}
		if err := tx.Model(&models.OAuthCode{}).Where("code_hash = ?", codeHash).Update("token_id", tok.ID).Error; err != nil {
			return err
		}
		if err := tx.Model(&models.OAuthClient{}).Where("id = ? AND used_at IS NULL", tok.ClientID).Update("used_at", at).Error; err != nil {
			return err
		}
		var over []models.OAuthToken
		if err := tx.Select("id", "token_hash").Where("user_id = ? AND client_id = ? AND revoked_at IS NULL", tok.UserID, tok.ClientID).
			Order("created_at DESC, id DESC").Offset(maxLive).Limit(1_000_000).Find(&over).Error; err != nil {
			return err
		}
		if len(over) > 0 {
			ids := make([]string, len(over))
			for i, o := range over {
				ids[i] = o.ID
				out.RevokedHashes = append(out.RevokedHashes, o.TokenHash)
			}
			if err := tx.Model(&models.OAuthToken{}).Where("id IN ?", ids).Update("revoked_at", at).Error; err != nil {
				return err
			}
		}
		out.Token = tok
		return nil
	})
	switch {
	case err != nil:
		return out, wrap("redeem oauth code", err)
	case replayed != nil:
		return out, replayed
	case checkErr != nil:
		return out, checkErr
	}
	return out, nil
}

// GetOAuthTokenByHash finds an access token by its hash, revoked or not.
func (s OAuth) GetOAuthTokenByHash(ctx context.Context, hash string) (models.OAuthToken, error) {
	var t models.OAuthToken
	err := s.db.WithContext(ctx).Where("token_hash = ?", hash).Take(&t).Error
	return t, wrap("get oauth token", err)
}

// RevokeOAuthToken revokes the token with this hash if the client holds
// it; it reports whether a live token was revoked.
func (s OAuth) RevokeOAuthToken(ctx context.Context, hash, clientID string, at time.Time) (bool, error) {
	res := s.db.WithContext(ctx).Model(&models.OAuthToken{}).
		Where("token_hash = ? AND client_id = ? AND revoked_at IS NULL", hash, clientID).Update("revoked_at", at)
	return res.RowsAffected > 0, wrap("revoke oauth token", res.Error)
}

// CountLiveOAuthTokens counts the user's live tokens of the client.
func (s OAuth) CountLiveOAuthTokens(ctx context.Context, userID, clientID string) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.OAuthToken{}).
		Where("user_id = ? AND client_id = ? AND revoked_at IS NULL", userID, clientID).Count(&n).Error
	return n, wrap("count oauth tokens", err)
}

// OAuthTokenCounts counts the user's live tokens by client id (the
// connections list).
func (s OAuth) OAuthTokenCounts(ctx context.Context, userID string) (map[string]int64, error) {
	var rows []struct {
		ClientID string
		N        int64
	}
	err := s.db.WithContext(ctx).Model(&models.OAuthToken{}).Select("client_id, COUNT(*) AS n").
		Where("user_id = ? AND revoked_at IS NULL", userID).Group("client_id").Scan(&rows).Error
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.ClientID] = r.N
	}
	return out, wrap("count oauth tokens by client", err)
}

// CreateOAuthSession records an authorization-server sign-in session.
func (s OAuth) CreateOAuthSession(ctx context.Context, sess *models.OAuthSession) error {
	return wrap("create oauth session", s.db.WithContext(ctx).Create(sess).Error)
}

// GetOAuthSessionByHash finds a session by its cookie's hash.
func (s OAuth) GetOAuthSessionByHash(ctx context.Context, hash string) (models.OAuthSession, error) {
	var sess models.OAuthSession
	err := s.db.WithContext(ctx).Where("token_hash = ?", hash).Take(&sess).Error
	return sess, wrap("get oauth session", err)
}

// RevokeOAuthSession ends a session.
func (s OAuth) RevokeOAuthSession(ctx context.Context, id string, at time.Time) error {
	err := s.db.WithContext(ctx).Model(&models.OAuthSession{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", at).Error
	return wrap("revoke oauth session", err)
}
