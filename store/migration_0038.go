package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0038OneActiveTurn makes "one turn of a company at a time" a
// rule of the rows: a unique index on the company over the turns that have
// not ended. Until now the company's turn workflow id was that lock, so a
// message had to wait for Temporal's answer before it could be answered.
// Rows a crash left behind (a refused message whose row was not removed)
// are ended first, keeping per company the running turn, else the oldest
// queued one: the turn that the workflow runs or would start.
func migration0038OneActiveTurn() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0038_one_active_turn",
		Migrate: func(tx *gorm.DB) error {
			at := time.Now().UTC()
			// The kept row is never updated, so the order in which the
			// statement visits the others does not matter.
			err := tx.Exec(`UPDATE turns SET status = 'failed', error_code = 'conflict',
	error_detail = 'Another turn was running when this message was due to start; send it again.',
	started_at = COALESCE(started_at, ?), ended_at = ?, updated_at = ?
WHERE status IN ('queued', 'running') AND EXISTS (
	SELECT 1 FROM turns o WHERE o.company_id = turns.company_id AND o.id <> turns.id AND o.status IN ('queued', 'running')
	AND ((o.status = 'running' AND turns.status = 'queued')
		OR (o.status = turns.status AND (o.created_at < turns.created_at OR (o.created_at = turns.created_at AND o.id < turns.id)))))`,
				at, at, at).Error
			if err != nil {
				return err
			}
			return tx.Exec("CREATE UNIQUE INDEX idx_turns_one_active ON turns (company_id) WHERE status IN ('queued', 'running')").Error
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Exec("DROP INDEX IF EXISTS idx_turns_one_active").Error
		},
	}
}
