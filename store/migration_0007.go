package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0007CreditLedger creates the credit ledger: append-only entries,
// the page groups kept with them, and the balance row per conglomerate.
// Welcome credits are granted once per account by a unique partial index,
// not by a check before the insert.
func migration0007CreditLedger() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0007_credit_ledger",
		Migrate: func(tx *gorm.DB) error {
			for _, t := range []any{&m0007Entry{}, &m0007Group{}, &m0007Account{}} {
				if err := tx.Migrator().CreateTable(t); err != nil {
					return err
				}
			}
			return tx.Exec("CREATE UNIQUE INDEX idx_credit_entries_welcome_once ON credit_ledger_entries (conglomerate_id) WHERE type = 'GRANT_WELCOME'").Error
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("credit_accounts", "credit_ledger_groups", "credit_ledger_entries")
		},
	}
}

// Snapshot types of migration 0007 (package level for their TableName).
type m0007Entry struct {
	ID             string    `gorm:"primaryKey;size:36"`
	ConglomerateID string    `gorm:"size:36;not null;index:idx_credit_entries_conglomerate,priority:1"`
	Type           string    `gorm:"size:32;not null"`
	Amount         int64     `gorm:"not null"`
	RunID          *string   `gorm:"size:64"`
	CompanyID      *string   `gorm:"size:36"`
	Reference      string    `gorm:"size:200;not null"`
	GroupKey       string    `gorm:"size:120;not null"`
	CreatedAt      time.Time `gorm:"not null;index:idx_credit_entries_conglomerate,priority:2"`
}

func (m0007Entry) TableName() string { return "credit_ledger_entries" }

type m0007Group struct {
	ConglomerateID string    `gorm:"primaryKey;size:36;index:idx_credit_groups_page,priority:1"`
	GroupKey       string    `gorm:"primaryKey;size:120"`
	Type           string    `gorm:"size:32;not null"`
	RunID          *string   `gorm:"size:64"`
	CompanyID      *string   `gorm:"size:36"`
	Reference      string    `gorm:"size:200;not null"`
	Amount         int64     `gorm:"not null"`
	Entries        int64     `gorm:"not null"`
	FirstAt        time.Time `gorm:"not null"`
	LastAt         time.Time `gorm:"not null;index:idx_credit_groups_page,priority:2,sort:desc"`
}

func (m0007Group) TableName() string { return "credit_ledger_groups" }

type m0007Account struct {
	ConglomerateID string    `gorm:"primaryKey;size:36"`
	Balance        int64     `gorm:"not null"`
	Groups         int64     `gorm:"not null"`
	SpentDay       time.Time `gorm:"not null"`
	SpentToday     int64     `gorm:"not null"`
	UpdatedAt      time.Time `gorm:"not null"`
}

func (m0007Account) TableName() string { return "credit_accounts" }
