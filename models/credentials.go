package models

import (
	"time"

	"gorm.io/gorm"
)

// WebSession is the server-side record behind a web session JWT (its `sid`
// claim) or behind the SSO cookie of holdco's own pages (CookieHash). Revoking the record ends the session even though the JWT itself
// has not expired.
type WebSession struct {
	ID        string `gorm:"primaryKey;size:36"`
	UserID    string `gorm:"size:36;not null;index:idx_web_sessions_user_id"`
	CreatedAt time.Time
	ExpiresAt time.Time `gorm:"not null"`
	RevokedAt *time.Time
	// CookieHash is set on the session of holdco's own pages (the SSO
	// cookie, an opaque value of which this is the hash). Such a session
	// never authenticates a REST request; a JWT session has none.
	CookieHash *string `gorm:"size:64;uniqueIndex:idx_web_sessions_cookie_hash"`
}

func (s *WebSession) BeforeCreate(*gorm.DB) error { ensureID(&s.ID); return nil }

// Live reports whether the session can still authenticate at now.
func (s *WebSession) Live(now time.Time) bool {
	return s.RevokedAt == nil && now.Before(s.ExpiresAt)
}

// APIKeyKind tells a CLI session key from a personal access token; both
// carry the svc_u_v1_ prefix.
type APIKeyKind string

const (
	APIKeySession  APIKeyKind = "session"  // minted by CLI login (loopback or device)
	APIKeyPersonal APIKeyKind = "personal" // personal access token, POST /auth/tokens
)

// APIKey is a user credential. Only the SHA-256 hash of the raw value is
// stored. Revocation is soft (RevokedAt) so the list of past tokens stays.
type APIKey struct {
	ID             string     `gorm:"primaryKey;size:36"`
	UserID         string     `gorm:"size:36;not null;index:idx_api_keys_user_id"`
	ConglomerateID string     `gorm:"size:36;not null"`
	Kind           APIKeyKind `gorm:"size:16;not null"`
	Name           string     `gorm:"size:100;not null"`
	TokenHash      string     `gorm:"size:64;not null;uniqueIndex:idx_api_keys_token_hash"`
	CreatedAt      time.Time
	LastUsedAt     *time.Time
	ExpiresAt      *time.Time
	RevokedAt      *time.Time
}

func (k *APIKey) BeforeCreate(*gorm.DB) error { ensureID(&k.ID); return nil }

// Live reports whether the key can still authenticate at now.
func (k *APIKey) Live(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// CLIAuthCode is the one-time code of the CLI loopback login, bound to the
// CLI's PKCE challenge. UsedAt is set by the first exchange attempt, right
// or wrong, so a code can never be tried twice.
type CLIAuthCode struct {
	CodeHash      string `gorm:"primaryKey;size:64"`
	UserID        string `gorm:"size:36;not null"`
	CodeChallenge string `gorm:"size:64;not null"`
	Env           string `gorm:"size:64;not null"`
	CreatedAt     time.Time
	ExpiresAt     time.Time `gorm:"not null;index:idx_cli_auth_codes_expires_at"`
	UsedAt        *time.Time
}

// WebLoginCode is the one-time code browser sign-in appends to the
// frontend address (?login_code=); the frontend trades it for a web session
// token. It lives a minute and the first exchange uses it up.
type WebLoginCode struct {
	CodeHash  string `gorm:"primaryKey;size:64"`
	UserID    string `gorm:"size:36;not null"`
	CreatedAt time.Time
	ExpiresAt time.Time `gorm:"not null;index:idx_web_login_codes_expires_at"`
	UsedAt    *time.Time
}

// DeviceStatus is the state of a device-flow grant (RFC 8628).
type DeviceStatus string

const (
	DevicePending  DeviceStatus = "pending"
	DeviceApproved DeviceStatus = "approved"
	DeviceDenied   DeviceStatus = "denied"
	DeviceConsumed DeviceStatus = "consumed" // the session key was handed out
)

// DeviceAuthorization is one device-flow grant: the CLI polls with the
// device code (stored hashed) while the user approves the user code in a
// browser.
type DeviceAuthorization struct {
	ID              string       `gorm:"primaryKey;size:36"`
	DeviceCodeHash  string       `gorm:"size:64;not null;uniqueIndex:idx_device_authorizations_device_code_hash"`
	UserCode        string       `gorm:"size:16;not null;uniqueIndex:idx_device_authorizations_user_code"`
	Status          DeviceStatus `gorm:"size:16;not null"`
	UserID          *string      `gorm:"size:36"`
	IntervalSeconds int          `gorm:"not null"`
	LastPolledAt    *time.Time
	ExpiresAt       time.Time `gorm:"not null;index:idx_device_authorizations_expires_at"`
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

func (d *DeviceAuthorization) BeforeCreate(*gorm.DB) error { ensureID(&d.ID); return nil }

// AdminToken is an operator credential created by `holdco admin create-token`.
type AdminToken struct {
	ID        string `gorm:"primaryKey;size:36"`
	Name      string `gorm:"size:100;not null"`
	TokenHash string `gorm:"size:64;not null;uniqueIndex:idx_admin_tokens_token_hash"`
	CreatedAt time.Time
	RevokedAt *time.Time
}

func (a *AdminToken) BeforeCreate(*gorm.DB) error { ensureID(&a.ID); return nil }

// InstanceSecret is a random key shared by every replica (signing web
// session JWTs and CLI login state). It is created once, on first use.
type InstanceSecret struct {
	Name      string `gorm:"primaryKey;size:64"`
	Value     []byte `gorm:"not null"`
	CreatedAt time.Time
}
