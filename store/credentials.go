package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// InstanceSecret returns the named secret, creating it with generate on
// first use. Concurrent first calls (several replicas starting) agree on
// one value: the insert is skipped when a row exists and the row is read
// back.
func (s Identity) InstanceSecret(ctx context.Context, name string, generate func() []byte) ([]byte, error) {
	row := models.InstanceSecret{Name: name, Value: generate(), CreatedAt: now()}
	db := s.db.WithContext(ctx)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return nil, wrap("create instance secret", err)
	}
	var got models.InstanceSecret
	if err := db.Where("name = ?", name).Take(&got).Error; err != nil {
		return nil, wrap("get instance secret", err)
	}
	return got.Value, nil
}

// CreateWebSession records a web session.
func (s Identity) CreateWebSession(ctx context.Context, sess *models.WebSession) error {
	sess.CreatedAt = now()
	return wrap("create web session", s.db.WithContext(ctx).Create(sess).Error)
}

// GetWebSession returns a web session record.
func (s Identity) GetWebSession(ctx context.Context, id string) (models.WebSession, error) {
	var sess models.WebSession
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&sess).Error
	return sess, wrap("get web session", err)
}

// RevokeWebSessionsOfUser ends every live sign-in session of the user,
// in one transaction: the web sessions (tokens and page cookies) and the
// authorization server's sign-in sessions (its SSO cookie), so a logout
// leaves no browser that can approve an assistant as the user.
func (s Identity) RevokeWebSessionsOfUser(ctx context.Context, userID string, at time.Time) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, row := range []any{&models.WebSession{}, &models.OAuthSession{}} {
			if err := tx.Model(row).Where("user_id = ? AND revoked_at IS NULL", userID).Update("revoked_at", at).Error; err != nil {
				return err
			}
		}
		return nil
	})
	return wrap("revoke web sessions", err)
}

// CreateAPIKey stores a user API key (its hash).
func (s Identity) CreateAPIKey(ctx context.Context, k *models.APIKey) error {
	k.CreatedAt = now()
	return wrap("create api key", s.db.WithContext(ctx).Create(k).Error)
}

// GetAPIKeyByHash finds a key by the hash of its raw value, revoked or not.
func (s Identity) GetAPIKeyByHash(ctx context.Context, hash string) (models.APIKey, error) {
	var k models.APIKey
	err := s.db.WithContext(ctx).Where("token_hash = ?", hash).Take(&k).Error
	return k, wrap("get api key by hash", err)
}

// GetAPIKey finds a key by id, revoked or not.
func (s Identity) GetAPIKey(ctx context.Context, id string) (models.APIKey, error) {
	var k models.APIKey
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&k).Error
	return k, wrap("get api key", err)
}

// ListLiveAPIKeys lists a user's keys of one kind that are neither revoked
// nor expired at now, newest first.
func (s Identity) ListLiveAPIKeys(ctx context.Context, userID string, kind models.APIKeyKind, at time.Time) ([]models.APIKey, error) {
	var keys []models.APIKey
	err := s.db.WithContext(ctx).
		Where("user_id = ? AND kind = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", userID, kind, at).
		Order("created_at DESC, id").Find(&keys).Error
	return keys, wrap("list api keys", err)
}

// TouchAPIKey records that a key was used.
func (s Identity) TouchAPIKey(ctx context.Context, id string, at time.Time) error {
	err := s.db.WithContext(ctx).Model(&models.APIKey{}).Where("id = ?", id).Update("last_used_at", at).Error
	return wrap("touch api key", err)
}

// RevokeAPIKey soft-revokes a key; revoking it again keeps the first time.
func (s Identity) RevokeAPIKey(ctx context.Context, id string, at time.Time) error {
	err := s.db.WithContext(ctx).Model(&models.APIKey{}).
		Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", at).Error
	return wrap("revoke api key", err)
}

// CreateCLIAuthCode stores a CLI one-time code (its hash).
func (s Identity) CreateCLIAuthCode(ctx context.Context, c *models.CLIAuthCode) error {
	c.CreatedAt = now()
	return wrap("create cli auth code", s.db.WithContext(ctx).Create(c).Error)
}

// ConsumeCLIAuthCode marks the code used and returns it. Only the first
// call for a code succeeds; later ones get models.ErrNotFound, whatever the
// outcome of the first.
func (s Identity) ConsumeCLIAuthCode(ctx context.Context, hash string, at time.Time) (models.CLIAuthCode, error) {
	var c models.CLIAuthCode
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.CLIAuthCode{}).Where("code_hash = ? AND used_at IS NULL", hash).Update("used_at", at)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return gorm.ErrRecordNotFound
		}
		return tx.Where("code_hash = ?", hash).Take(&c).Error
	})
	return c, wrap("consume cli auth code", err)
}

// CreateWebLoginCode stores a browser sign-in's one-time code (its hash).
func (s Identity) CreateWebLoginCode(ctx context.Context, c *models.WebLoginCode) error {
	c.CreatedAt = now()
	return wrap("create web login code", s.db.WithContext(ctx).Create(c).Error)
}

// ConsumeWebLoginCode marks the code used and returns it. Only the first
// call for a code succeeds; later ones get models.ErrNotFound.
func (s Identity) ConsumeWebLoginCode(ctx context.Context, hash string, at time.Time) (models.WebLoginCode, error) {
	var c models.WebLoginCode
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&models.WebLoginCode{}).Where("code_hash = ? AND used_at IS NULL", hash).Update("used_at", at)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return gorm.ErrRecordNotFound
		}
		return tx.Where("code_hash = ?", hash).Take(&c).Error
	})
	return c, wrap("consume web login code", err)
}

// CreateDeviceAuthorization stores a device-flow grant.
func (s Identity) CreateDeviceAuthorization(ctx context.Context, d *models.DeviceAuthorization) error {
	return wrap("create device authorization", s.db.WithContext(ctx).Create(d).Error)
}

// GetDeviceAuthorizationByDeviceCode finds a grant by its device code hash.
func (s Identity) GetDeviceAuthorizationByDeviceCode(ctx context.Context, hash string) (models.DeviceAuthorization, error) {
	var d models.DeviceAuthorization
	err := s.db.WithContext(ctx).Where("device_code_hash = ?", hash).Take(&d).Error
	return d, wrap("get device authorization", err)
}

// GetDeviceAuthorizationByUserCode finds a grant by its user code.
func (s Identity) GetDeviceAuthorizationByUserCode(ctx context.Context, userCode string) (models.DeviceAuthorization, error) {
	var d models.DeviceAuthorization
	err := s.db.WithContext(ctx).Where("user_code = ?", userCode).Take(&d).Error
	return d, wrap("get device authorization by user code", err)
}

// RecordDevicePoll notes a poll and the (possibly lengthened) interval.
func (s Identity) RecordDevicePoll(ctx context.Context, id string, at time.Time, intervalSeconds int) error {
	err := s.db.WithContext(ctx).Model(&models.DeviceAuthorization{}).Where("id = ?", id).
		Updates(map[string]any{"last_polled_at": at, "interval_seconds": intervalSeconds}).Error
	return wrap("record device poll", err)
}

// TransitionDevice moves a grant from one status to another and reports
// whether this call made the move (false when the status had changed).
// userID, when given, records who decided.
func (s Identity) TransitionDevice(ctx context.Context, id string, from, to models.DeviceStatus, userID *string) (bool, error) {
	updates := map[string]any{"status": to, "updated_at": now()}
	if userID != nil {
		updates["user_id"] = *userID
	}
	res := s.db.WithContext(ctx).Model(&models.DeviceAuthorization{}).
		Where("id = ? AND status = ?", id, from).Updates(updates)
	if res.Error != nil {
		return false, wrap("transition device authorization", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// CreateAdminToken stores an operator token (its hash).
func (s Identity) CreateAdminToken(ctx context.Context, t *models.AdminToken) error {
	t.CreatedAt = now()
	return wrap("create admin token", s.db.WithContext(ctx).Create(t).Error)
}

// GetAdminTokenByHash finds an operator token by hash.
func (s Identity) GetAdminTokenByHash(ctx context.Context, hash string) (models.AdminToken, error) {
	var t models.AdminToken
	err := s.db.WithContext(ctx).Where("token_hash = ?", hash).Take(&t).Error
	return t, wrap("get admin token", err)
}

// DeleteExpiredSignInCodes deletes the browser login codes, CLI loopback
// codes, device-flow grants and the development identity provider's
// sign-ins and access tokens that expired before the given time, used
// or not, at most batch rows per statement, and says how many went.
func (s Identity) DeleteExpiredSignInCodes(ctx context.Context, before time.Time, batch int) (int64, error) {
	var total int64
	for _, t := range []struct{ table, key string }{
		{"web_login_codes", "code_hash"}, {"cli_auth_codes", "code_hash"}, {"device_authorizations", "id"},
		{"dev_idp_auth_requests", "id"}, {"dev_idp_tokens", "id"},
	} {
		for {
			res := s.db.WithContext(ctx).Exec("DELETE FROM "+t.table+" WHERE "+t.key+" IN (SELECT "+t.key+" FROM "+t.table+" WHERE expires_at < ? LIMIT ?)", before, batch)
			if res.Error != nil {
				return total, wrap("delete expired "+t.table, res.Error)
			}
			total += res.RowsAffected
			if res.RowsAffected < int64(batch) {
				break
			}
		}
	}
	return total, nil
}

// GetWebSessionByCookieHash returns the page session whose SSO cookie has
// the hash.
func (s Identity) GetWebSessionByCookieHash(ctx context.Context, hash string) (models.WebSession, error) {
	var sess models.WebSession
	err := s.db.WithContext(ctx).Where("cookie_hash = ?", hash).Take(&sess).Error
	return sess, wrap("get page session", err)
}
