package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0019OAuth adds the authorization server's tables: the
// self-registered clients, the users' consents, the single-use codes, the
// access tokens and the sign-in sessions of its own origin.
func migration0019OAuth() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0019_oauth",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0019Client{}, &m0019Consent{}, &m0019Code{}, &m0019Token{}, &m0019Session{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("oauth_sessions", "oauth_tokens", "oauth_codes", "oauth_consents", "oauth_clients")
		},
	}
}

type m0019Client struct {
	ID              string    `gorm:"primaryKey;size:2048"`
	Kind            string    `gorm:"size:16;not null"`
	Name            string    `gorm:"size:256;not null"`
	ClientURI       string    `gorm:"size:2048;not null"`
	ApplicationType string    `gorm:"size:16;not null"`
	RedirectURIs    string    `gorm:"column:redirect_uris;type:text;not null"`
	CreatedAt       time.Time `gorm:"not null;index:idx_oauth_clients_created"`
	UsedAt          *time.Time
	CacheUntil      *time.Time
}

func (m0019Client) TableName() string { return "oauth_clients" }

type m0019Consent struct {
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

func (m0019Consent) TableName() string { return "oauth_consents" }

type m0019Code struct {
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

func (m0019Code) TableName() string { return "oauth_codes" }

type m0019Token struct {
	ID        string    `gorm:"primaryKey;size:36"`
	TokenHash string    `gorm:"size:64;not null;uniqueIndex:idx_oauth_tokens_hash"`
	UserID    string    `gorm:"size:36;not null;index:idx_oauth_tokens_user_client,priority:1"`
	ClientID  string    `gorm:"size:2048;not null;index:idx_oauth_tokens_user_client,priority:2"`
	Resource  string    `gorm:"size:2048;not null"`
	Scope     string    `gorm:"size:256;not null"`
	CreatedAt time.Time `gorm:"not null"`
	RevokedAt *time.Time
}

func (m0019Token) TableName() string { return "oauth_tokens" }

type m0019Session struct {
	ID        string    `gorm:"primaryKey;size:36"`
	TokenHash string    `gorm:"size:64;not null;uniqueIndex:idx_oauth_sessions_hash"`
	UserID    string    `gorm:"size:36;not null;index:idx_oauth_sessions_user"`
	CreatedAt time.Time `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null"`
	RevokedAt *time.Time
}

func (m0019Session) TableName() string { return "oauth_sessions" }
