package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0004CompanyAPIKeys creates company API keys. At most one live
// key per company is kept by the store (rotation revokes in the same
// transaction); the partial unique index below makes it a database rule.
func migration0004CompanyAPIKeys() *gormigrate.Migration {
	type company struct {
		ID string `gorm:"primaryKey;size:36"`
	}
	type companyAPIKey struct {
		ID        string    `gorm:"primaryKey;size:36"`
		CompanyID string    `gorm:"size:36;not null;index:idx_company_api_keys_company_id"`
		Company   *company  `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
		TokenHash string    `gorm:"size:64;not null;uniqueIndex:idx_company_api_keys_token_hash"`
		Sealed    []byte    `gorm:"not null"`
		CreatedAt time.Time `gorm:"not null"`
		RevokedAt *time.Time
	}
	return &gormigrate.Migration{
		ID: "0004_company_api_keys",
		Migrate: func(tx *gorm.DB) error {
			if err := tx.Migrator().CreateTable(&companyAPIKey{}); err != nil {
				return err
			}
			// Same syntax on SQLite and Postgres.
			return tx.Exec("CREATE UNIQUE INDEX idx_company_api_keys_live ON company_api_keys (company_id) WHERE revoked_at IS NULL").Error
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("company_api_keys") },
	}
}
