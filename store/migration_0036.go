package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0036TurnIdempotencyKey stores the client's Idempotency-Key of a
// message on its turn (nullable: turns without a key), unique per company
// where set, so a retried or concurrent send with the same key finds the
// turn the first one created instead of starting another.
func migration0036TurnIdempotencyKey() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0036_turn_idempotency_key",
		Migrate: func(tx *gorm.DB) error {
			if err := tx.Migrator().AddColumn(&m0036Turn{}, "IdempotencyKey"); err != nil {
				return err
			}
			return tx.Exec("CREATE UNIQUE INDEX idx_turns_idempotency_key ON turns (company_id, idempotency_key) WHERE idempotency_key IS NOT NULL").Error
		},
		Rollback: func(tx *gorm.DB) error {
			if err := tx.Exec("DROP INDEX IF EXISTS idx_turns_idempotency_key").Error; err != nil {
				return err
			}
			return tx.Migrator().DropColumn(&m0036Turn{}, "IdempotencyKey")
		},
	}
}

type m0036Turn struct {
	IdempotencyKey *string `gorm:"size:255"`
}

func (m0036Turn) TableName() string { return "turns" }
