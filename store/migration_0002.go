package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0002Credentials creates the sign-in and credential tables: web
// sessions, API keys (CLI session keys and personal access tokens), CLI
// one-time codes, device-flow grants, admin tokens and the instance secret.
// Only hashes of secrets are stored. Rows of a user go with the user.
func migration0002Credentials() *gormigrate.Migration {
	type user struct {
		ID string `gorm:"primaryKey;size:36"`
	}
	type webSession struct {
		ID        string    `gorm:"primaryKey;size:36"`
		UserID    string    `gorm:"size:36;not null;index:idx_web_sessions_user_id"`
		User      *user     `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		CreatedAt time.Time `gorm:"not null"`
		ExpiresAt time.Time `gorm:"not null"`
		RevokedAt *time.Time
	}
	type apiKey struct {
		ID             string    `gorm:"primaryKey;size:36"`
		UserID         string    `gorm:"size:36;not null;index:idx_api_keys_user_id"`
		User           *user     `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		ConglomerateID string    `gorm:"size:36;not null"`
		Kind           string    `gorm:"size:16;not null"`
		Name           string    `gorm:"size:100;not null"`
		TokenHash      string    `gorm:"size:64;not null;uniqueIndex:idx_api_keys_token_hash"`
		CreatedAt      time.Time `gorm:"not null"`
		LastUsedAt     *time.Time
		ExpiresAt      *time.Time
		RevokedAt      *time.Time
	}
	type cliAuthCode struct {
		CodeHash      string    `gorm:"primaryKey;size:64"`
		UserID        string    `gorm:"size:36;not null"`
		User          *user     `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		CodeChallenge string    `gorm:"size:64;not null"`
		Env           string    `gorm:"size:64;not null"`
		CreatedAt     time.Time `gorm:"not null"`
		ExpiresAt     time.Time `gorm:"not null"`
		UsedAt        *time.Time
	}
	type deviceAuthorization struct {
		ID              string  `gorm:"primaryKey;size:36"`
		DeviceCodeHash  string  `gorm:"size:64;not null;uniqueIndex:idx_device_authorizations_device_code_hash"`
		UserCode        string  `gorm:"size:16;not null;uniqueIndex:idx_device_authorizations_user_code"`
		Status          string  `gorm:"size:16;not null"`
		UserID          *string `gorm:"size:36"`
		User            *user   `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		IntervalSeconds int     `gorm:"not null"`
		LastPolledAt    *time.Time
		ExpiresAt       time.Time `gorm:"not null"`
		CreatedAt       time.Time `gorm:"not null"`
		UpdatedAt       time.Time `gorm:"not null"`
	}
	type adminToken struct {
		ID        string    `gorm:"primaryKey;size:36"`
		Name      string    `gorm:"size:100;not null"`
		TokenHash string    `gorm:"size:64;not null;uniqueIndex:idx_admin_tokens_token_hash"`
		CreatedAt time.Time `gorm:"not null"`
		RevokedAt *time.Time
	}
	type instanceSecret struct {
		Name      string    `gorm:"primaryKey;size:64"`
		Value     []byte    `gorm:"not null"`
		CreatedAt time.Time `gorm:"not null"`
	}
	return &gormigrate.Migration{
		ID: "0002_credentials",
		Migrate: func(tx *gorm.DB) error {
			for _, table := range []any{&webSession{}, &apiKey{}, &cliAuthCode{}, &deviceAuthorization{}, &adminToken{}, &instanceSecret{}} {
				if err := tx.Migrator().CreateTable(table); err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("instance_secrets", "admin_tokens", "device_authorizations", "cli_auth_codes", "api_keys", "web_sessions")
		},
	}
}
