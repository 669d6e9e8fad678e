package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0035DevIdPState moves the development identity provider's
// sign-in state out of process memory: dev_idp_auth_requests (sign-ins in
// progress and their codes) and dev_idp_tokens (access tokens for its
// userinfo endpoint), both with an indexed expiry for the sweep, so a
// sign-in started on one API process finishes on any other.
func migration0035DevIdPState() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0035_dev_idp_state",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0035DevIdPAuthRequest{}, &m0035DevIdPToken{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("dev_idp_auth_requests", "dev_idp_tokens")
		},
	}
}

type m0035DevIdPAuthRequest struct {
	ID        string  `gorm:"primaryKey;size:36"`
	ClientID  string  `gorm:"size:255;not null"`
	Request   string  `gorm:"not null"`
	CodeHash  *string `gorm:"size:64;uniqueIndex:idx_dev_idp_auth_requests_code"`
	UserID    string  `gorm:"size:36;not null"`
	Done      bool    `gorm:"not null"`
	AuthTime  *time.Time
	CreatedAt time.Time `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null;index:idx_dev_idp_auth_requests_expires_at"`
}

func (m0035DevIdPAuthRequest) TableName() string { return "dev_idp_auth_requests" }

type m0035DevIdPToken struct {
	ID        string    `gorm:"primaryKey;size:36"`
	Subject   string    `gorm:"size:36;not null"`
	ClientID  string    `gorm:"size:255;not null"`
	Scopes    string    `gorm:"size:1000;not null"`
	CreatedAt time.Time `gorm:"not null"`
	ExpiresAt time.Time `gorm:"not null;index:idx_dev_idp_tokens_expires_at"`
}

func (m0035DevIdPToken) TableName() string { return "dev_idp_tokens" }
