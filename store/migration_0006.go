package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0006CompanyOIDCClients creates the per-company OpenID clients.
// No foreign key to companies: a revocation outlives the company row.
func migration0006CompanyOIDCClients() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID:       "0006_company_oidc_clients",
		Migrate:  func(tx *gorm.DB) error { return tx.Migrator().CreateTable(&m0006CompanyOIDCClient{}) },
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("company_oidc_clients") },
	}
}

// m0006CompanyOIDCClient is the table as migration 0006 creates it
// (package level for its TableName method).
type m0006CompanyOIDCClient struct {
	CompanyID             string    `gorm:"primaryKey;size:36"`
	ClientID              string    `gorm:"size:64;not null;uniqueIndex:idx_company_oidc_clients_client_id"`
	SecretHash            string    `gorm:"size:64;not null"`
	CreatedAt             time.Time `gorm:"not null"`
	RevokedAt             *time.Time
	RevokedReason         string `gorm:"size:500;not null"`
	RevokedConglomerateID string `gorm:"size:36;not null"`
}

func (m0006CompanyOIDCClient) TableName() string { return "company_oidc_clients" }
