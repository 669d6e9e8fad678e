package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0010ProvisioningOutbox adds the provisioning intent of each
// company (an outbox the worker sweeps) and the Idempotency-Keys of
// company creation. Existing companies get an intent row: marked started
// when any resource row exists, pending otherwise, so companies that a
// crash left unprovisioned before this release are provisioned by the
// sweeper after the upgrade.
func migration0010ProvisioningOutbox() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0010_provisioning_outbox",
		Migrate: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.CreateTable(&m0010CompanyProvisioning{}, &m0010CompanyCreateKey{}); err != nil {
				return err
			}
			return tx.Exec(`INSERT INTO company_provisioning (company_id, seed_repo, requested_at, started_at)
				SELECT c.id, ?, c.created_at,
					CASE WHEN EXISTS (SELECT 1 FROM company_resources r WHERE r.company_id = c.id) THEN c.created_at END
				FROM companies c WHERE c.status <> 'archived'`, true).Error
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("company_create_keys", "company_provisioning")
		},
	}
}

type m0010Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0010Company) TableName() string { return "companies" }

type m0010CompanyProvisioning struct {
	CompanyID   string        `gorm:"primaryKey;size:36"`
	Company     *m0010Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	SeedRepo    bool          `gorm:"not null"`
	RequestedAt time.Time     `gorm:"not null"`
	StartedAt   *time.Time
}

func (m0010CompanyProvisioning) TableName() string { return "company_provisioning" }

type m0010CompanyCreateKey struct {
	KeyHash        string    `gorm:"primaryKey;size:64"`
	ConglomerateID string    `gorm:"size:36;not null"`
	UserID         string    `gorm:"size:36;not null"`
	Fingerprint    string    `gorm:"size:64;not null"`
	CompanyID      string    `gorm:"size:36;not null"`
	CreatedAt      time.Time `gorm:"not null"`
	ExpiresAt      time.Time `gorm:"not null;index:idx_company_create_keys_expires_at"`
}

func (m0010CompanyCreateKey) TableName() string { return "company_create_keys" }
