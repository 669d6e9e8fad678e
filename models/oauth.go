package models

import (
	"time"

	"gorm.io/gorm"
)

// OAuthClientKind tells how an assistant (an OAuth client of the
// authorization server) registered. Pre-registered clients come from the
// configuration and have no row.
type OAuthClientKind string

const (
	// OAuthClientDynamic registered itself at POST /oidc/register
	// (RFC 7591).
	OAuthClientDynamic OAuthClientKind = "dynamic"
	// OAuthClientMetadata is named by a client ID metadata document: its
	// client_id is the document's https URL; the row caches the document.
	OAuthClientMetadata OAuthClientKind = "metadata"
)

// OAuthClient is a self-registered assistant. RedirectURIs is a JSON
// array. A dynamic client nobody ever got a code for (UsedAt nil) expires.
type OAuthClient struct {
	ID              string          `gorm:"primaryKey;size:2048"`
	Kind            OAuthClientKind `gorm:"size:16;not null"`
	Name            string          `gorm:"size:256;not null"`
	ClientURI       string          `gorm:"size:2048;not null"`
	ApplicationType string          `gorm:"size:16;not null"`
	RedirectURIs    string          `gorm:"column:redirect_uris;type:text;not null"`
	CreatedAt       time.Time       `gorm:"not null;index:idx_oauth_clients_created"`
	UsedAt          *time.Time
	// CacheUntil is when a metadata document must be fetched again.
	CacheUntil *time.Time
}

func (OAuthClient) TableName() string { return "oauth_clients" }

// OAuthConsent is a user's approval of a client for one redirect URI
// (rule 10): RedirectSet is a digest of the client's redirect list and
// Version the consent page's version at approval. The row is the user's
// "connected assistant"; disconnecting deletes it.
type OAuthConsent struct {
	ID          string    `gorm:"primaryKey;size:36"`
	UserID      string    `gorm:"size:36;not null;uniqueIndex:idx_oauth_consents_user_client,priority:1"`
	ClientID    string    `gorm:"size:2048;not null;uniqueIndex:idx_oauth_consents_user_client,priority:2;index:idx_oauth_consents_client"`
	ClientName  string    `gorm:"size:256;not null"`
	RedirectURI string    `gorm:"size:2048;not null"`
	RedirectSet string    `gorm:"size:64;not null"`
	Version     int       `gorm:"not null"`
	CreatedAt   time.Time `gorm:"not null"`
	ApprovedAt  time.Time `gorm:"not null"`
}

func (c *OAuthConsent) BeforeCreate(*gorm.DB) error { ensureID(&c.ID); return nil }

func (OAuthConsent) TableName() string { return "oauth_consents" }

// OAuthCode is a single-use authorization code (its hash), bound to the
// client, the redirect URI, the PKCE challenge and the resource. TokenID
// is the token its exchange issued, revoked if the code is replayed.
type OAuthCode struct {
	CodeHash      string    `gorm:"primaryKey;size:64"`
	ClientID      string    `gorm:"size:2048;not null"`
	UserID        string    `gorm:"size:36;not null"`
	RedirectURI   string    `gorm:"size:2048;not null"`
	CodeChallenge string    `gorm:"size:64;not null"`
	Resource      string    `gorm:"size:2048;not null"`
	Scope         string    `gorm:"size:256;not null"`
	CreatedAt     time.Time `gorm:"not null"`
	ExpiresAt     time.Time `gorm:"not null;index:idx_oauth_codes_expires"`
	UsedAt        *time.Time
	TokenID       *string `gorm:"size:36"`
}

func (OAuthCode) TableName() string { return "oauth_codes" }

// OAuthToken is an opaque access token (its hash) of an assistant acting
// as a user on the connector. It never expires; revocation is soft.
type OAuthToken struct {
	ID        string    `gorm:"primaryKey;size:36"`
	TokenHash string    `gorm:"size:64;not null;uniqueIndex:idx_oauth_tokens_hash"`
	UserID    string    `gorm:"size:36;not null;index:idx_oauth_tokens_user_client,priority:1"`
	ClientID  string    `gorm:"size:2048;not null;index:idx_oauth_tokens_user_client,priority:2"`
	Resource  string    `gorm:"size:2048;not null"`
	Scope     string    `gorm:"size:256;not null"`
	CreatedAt time.Time `gorm:"not null"`
	RevokedAt *time.Time
}

func (t *OAuthToken) BeforeCreate(*gorm.DB) error { ensureID(&t.ID); return nil }

func (OAuthToken) TableName() string { return "oauth_tokens" }

// OAuthSession is the authorization server's own sign-in session (its
// cookie's hash): it never authenticates anywhere else.
type OAuthSession struct {
	ID        string    `gorm:"primaryKey;size:36"`
	TokenHash string    `gorm:"size:64;not null;uniqueIndex:idx_oauth_sessions_hash"`
	UserID    string    `gorm:"size:36;not null;index:idx_oauth_sessions_user"`
	CreatedAt time.Time `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null"`
	RevokedAt *time.Time
}

func (s *OAuthSession) BeforeCreate(*gorm.DB) error { ensureID(&s.ID); return nil }

func (OAuthSession) TableName() string { return "oauth_sessions" }
