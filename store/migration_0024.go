package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0024Money: domain purchases record the money actually received
// (paid_cents: a local confirmation pays nothing, so nothing is refunded)
// and when an unpaid checkout expires (expires_at); products are written
// before the provider creates them (pending), so the provider's objects are
// keyed by the row; the connector's rate limits count a sliding window of
// calls (rate_calls, one row per admitted call) instead of fixed windows
// (rate_counters, dropped).
func migration0024Money() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0024_money",
		Migrate: func(tx *gorm.DB) error {
			m := tx.Migrator()
			for _, col := range []string{"PaidCents", "ExpiresAt"} {
				if err := m.AddColumn(&m0024DomainPurchase{}, col); err != nil {
					return err
				}
			}
			if err := m.CreateIndex(&m0024DomainPurchase{}, "idx_domain_purchases_expiry"); err != nil {
				return err
			}
			// Purchases paid before this migration: a provider's payment was
			// the price; a local confirmation ("local:…") took no money.
			if err := tx.Exec(`UPDATE domain_purchases SET paid_cents = price_cents
				WHERE paid_at IS NOT NULL AND checkout_id NOT LIKE 'local:%'`).Error; err != nil {
				return err
			}
			if err := m.AddColumn(&m0024Product{}, "Pending"); err != nil {
				return err
			}
			if err := m.CreateTable(&m0024RateCall{}); err != nil {
				return err
			}
			return m.DropTable("rate_counters")
		},
		Rollback: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.DropTable("rate_calls"); err != nil {
				return err
			}
			if err := m.CreateTable(&m0022RateCounter{}); err != nil {
				return err
			}
			if err := m.DropColumn(&m0024Product{}, "Pending"); err != nil {
				return err
			}
			if err := m.DropIndex(&m0024DomainPurchase{}, "idx_domain_purchases_expiry"); err != nil {
				return err
			}
			for _, col := range []string{"ExpiresAt", "PaidCents"} {
				if err := m.DropColumn(&m0024DomainPurchase{}, col); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

type m0024DomainPurchase struct {
	ID        string     `gorm:"primaryKey;size:36"`
	State     string     `gorm:"size:20;not null;index:idx_domain_purchases_expiry,priority:1"`
	PaidCents int64      `gorm:"not null;default:0"`
	ExpiresAt *time.Time `gorm:"index:idx_domain_purchases_expiry,priority:2"`
}

func (m0024DomainPurchase) TableName() string { return "domain_purchases" }

type m0024Product struct {
	ID      string `gorm:"primaryKey;size:36"`
	Pending bool   `gorm:"not null;default:false"`
}

func (m0024Product) TableName() string { return "company_products" }

type m0024Conglomerate struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0024Conglomerate) TableName() string { return "conglomerates" }

type m0024RateCall struct {
	ID             int64              `gorm:"primaryKey;autoIncrement"`
	ConglomerateID string             `gorm:"size:36;not null;index:idx_rate_calls_window,priority:1"`
	Conglomerate   *m0024Conglomerate `gorm:"foreignKey:ConglomerateID;constraint:OnDelete:CASCADE"`
	// Name is the limit and its window, e.g. billing_links/1h.
	Name string    `gorm:"size:64;not null;index:idx_rate_calls_window,priority:2"`
	At   time.Time `gorm:"not null;index:idx_rate_calls_window,priority:3"`
}

func (m0024RateCall) TableName() string { return "rate_calls" }
