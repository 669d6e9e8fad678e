package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0008Billing adds the billing state to conglomerates, the table
// of handled payment events (a replayed event acts once), and makes paid
// credit grants unique by their reference (a checkout session, payment or
// invoice credits once whichever event reports it).
func migration0008Billing() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0008_billing",
		Migrate: func(tx *gorm.DB) error {
			m := tx.Migrator()
			for _, col := range m0008BillingColumns {
				if err := m.AddColumn(&m0008Conglomerate{}, col); err != nil {
					return err
				}
			}
			if err := m.CreateTable(&m0008PaymentEvent{}); err != nil {
				return err
			}
			for _, q := range []string{
				"CREATE UNIQUE INDEX idx_conglomerates_customer_id ON conglomerates (customer_id)",
				"CREATE UNIQUE INDEX idx_conglomerates_connect_account_id ON conglomerates (connect_account_id)",
				"CREATE UNIQUE INDEX idx_credit_entries_paid_once ON credit_ledger_entries (reference) WHERE type IN ('TOP_UP', 'PLAN_GRANT') AND reference <> ''",
			} {
				if err := tx.Exec(q).Error; err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			m := tx.Migrator()
			for _, idx := range []string{"idx_credit_entries_paid_once", "idx_conglomerates_connect_account_id", "idx_conglomerates_customer_id"} {
				if err := tx.Exec("DROP INDEX IF EXISTS " + idx).Error; err != nil {
					return err
				}
			}
			if err := m.DropTable("payment_events"); err != nil {
				return err
			}
			for _, col := range m0008BillingColumns {
				if err := m.DropColumn(&m0008Conglomerate{}, col); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

var m0008BillingColumns = []string{
	"Plan", "PlanStatus", "PlanRenewsAt", "CustomerID", "SubscriptionID", "BlockedAt", "BlockedReason",
	"AutoTopUpEnabled", "AutoTopUpThreshold", "AutoTopUpCredits",
	"ConnectAccountID", "ConnectChargesEnabled", "ConnectPayoutsEnabled", "ConnectDetailsSubmitted", "ConnectRequirements",
}

// m0008Conglomerate holds the columns migration 0008 adds.
type m0008Conglomerate struct {
	Plan                    string `gorm:"size:16;not null;default:free"`
	PlanStatus              string `gorm:"size:24;not null;default:''"`
	PlanRenewsAt            *time.Time
	CustomerID              *string `gorm:"size:64"`
	SubscriptionID          *string `gorm:"size:64"`
	BlockedAt               *time.Time
	BlockedReason           string  `gorm:"size:200;not null;default:''"`
	AutoTopUpEnabled        bool    `gorm:"not null;default:false"`
	AutoTopUpThreshold      int64   `gorm:"not null;default:0"`
	AutoTopUpCredits        int64   `gorm:"not null;default:0"`
	ConnectAccountID        *string `gorm:"size:64"`
	ConnectChargesEnabled   bool    `gorm:"not null;default:false"`
	ConnectPayoutsEnabled   bool    `gorm:"not null;default:false"`
	ConnectDetailsSubmitted bool    `gorm:"not null;default:false"`
	ConnectRequirements     string  `gorm:"size:1000;not null;default:''"`
}

func (m0008Conglomerate) TableName() string { return "conglomerates" }

type m0008PaymentEvent struct {
	ID          string    `gorm:"primaryKey;size:255"`
	Type        string    `gorm:"size:100;not null"`
	Livemode    bool      `gorm:"not null"`
	ProcessedAt time.Time `gorm:"not null"`
}

func (m0008PaymentEvent) TableName() string { return "payment_events" }
