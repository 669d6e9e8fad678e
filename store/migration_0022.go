package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0022Connector adds the connector's rate counters: one row per
// account, limit and window (get_billing_links counts 30 an hour and 200 a
// day per account), so every replica counts the same calls.
func migration0022Connector() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0022_connector",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0022RateCounter{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("rate_counters")
		},
	}
}

type m0022Conglomerate struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0022Conglomerate) TableName() string { return "conglomerates" }

type m0022RateCounter struct {
	ConglomerateID string             `gorm:"primaryKey;size:36"`
	Conglomerate   *m0022Conglomerate `gorm:"foreignKey:ConglomerateID;constraint:OnDelete:CASCADE"`
	// Name is the limit and its window, e.g. billing_links/1h.
	Name        string    `gorm:"primaryKey;size:64"`
	WindowStart time.Time `gorm:"primaryKey"`
	Count       int64     `gorm:"not null"`
	ExpiresAt   time.Time `gorm:"not null;index:idx_rate_counters_expires"`
}

func (m0022RateCounter) TableName() string { return "rate_counters" }
