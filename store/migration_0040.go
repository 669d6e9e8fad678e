package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0040OpenStatuses are the open task statuses of migration 0040's
// index, as SQL (a snapshot, as every migration's are): the dashboard's
// open-tasks read names the same list (openTaskStatuses), and
// TestOpenTaskStatusesAreTheIndexs fails when models.OpenTaskStatuses
// changes, until a migration recreates the index.
const migration0040OpenStatuses = "('pending', 'dispatched', 'running')"

// migration0040OpenTasksIndex adds a partial index over the open tasks, in
// the dashboard's order (newest first, then id). The dashboard's open
// tasks were read through idx_company_tasks_recent, each of the company's
// tasks checked for its status and all the open ones sorted before the
// first 20 were kept: work that grew with every task a company ever had.
// Through this index the read stops at the 20th open task, with no sort.
func migration0040OpenTasksIndex() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0040_open_tasks_index",
		Migrate: func(tx *gorm.DB) error {
			return tx.Exec("CREATE INDEX idx_company_tasks_open ON company_tasks (company_id, created_at, id) WHERE status IN " +
				migration0040OpenStatuses).Error
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Exec("DROP INDEX IF EXISTS idx_company_tasks_open").Error
		},
	}
}
