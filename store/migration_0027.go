package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0027CreditReservations adds credit reservations: credits held
// for a call whose price is known only after it (a model call holds its
// maximum) or whose effect must not happen unpaid (a billable tool holds
// its price before the effect). A spend or another reservation sees the
// balance minus the live reservations, so concurrent calls cannot promise
// the same credits twice.
func migration0027CreditReservations() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0027_credit_reservations",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0027CreditReservation{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("credit_reservations")
		},
	}
}

type m0027Conglomerate struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0027Conglomerate) TableName() string { return "conglomerates" }

type m0027CreditReservation struct {
	// ID is the ledger entry id the reservation settles into (derived
	// from the charge's key).
	ID             string             `gorm:"primaryKey;size:36"`
	ConglomerateID string             `gorm:"size:36;not null;index:idx_credit_reservations_live,priority:1"`
	Conglomerate   *m0027Conglomerate `gorm:"foreignKey:ConglomerateID;constraint:OnDelete:CASCADE"`
	Type           string             `gorm:"size:32;not null"`
	Amount         int64              `gorm:"not null"`
	RunID          *string            `gorm:"size:64"`
	CompanyID      *string            `gorm:"size:36"`
	CreatedAt      time.Time          `gorm:"not null"`
	ExpiresAt      time.Time          `gorm:"not null;index:idx_credit_reservations_live,priority:2"`
}

func (m0027CreditReservation) TableName() string { return "credit_reservations" }
