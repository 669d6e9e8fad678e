package store

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// The company summaries' trigger functions (migration 0039) name
// company_summaries and turns with the schema that was current when they
// were made: a trigger runs with its writer's search path, which need not
// be holdco's. A database restored or renamed into another schema keeps
// functions that point at the old one, and then every write of a
// summarised table fails at its commit. Migrate checks for that on every
// start (summaryTriggersStale) and makes the summaries again
// (rebuildSummaries); `holdco migrate --rebuild-summaries` does it on
// demand. A later migration that changes the summary's table or triggers
// must change rebuildSummaries with it (TestSummaryCoversEveryKind fails
// for a new kind until one exists).

// summaryTriggersStale reports whether a trigger function of the
// summaries in the current schema names another schema's
// company_summaries (Postgres; false on SQLite, whose triggers name no
// schema).
func summaryTriggersStale(tx *gorm.DB) (bool, error) {
	if tx.Dialector.Name() != "postgres" {
		return false, nil
	}
	names := make([]string, 0, len(m0039Triggers()))
	for _, t := range m0039Triggers() {
		names = append(names, t.name())
	}
	// The current schema's company_summaries as m0039Qualifier writes it.
	var stale int64
	err := tx.Raw(`SELECT COUNT(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = current_schema() AND p.proname IN ?
		AND strpos(p.prosrc, '"' || replace(current_schema(), '"', '""') || '".company_summaries') = 0`, names).Scan(&stale).Error
	return stale > 0, err
}

// rebuildSummaries drops the summaries' table and triggers and makes them
// again in the current schema, summarising every company from its rows
// (migration 0039's Rollback, then its Migrate), in tx.
func rebuildSummaries(tx *gorm.DB) error {
	m := migration0039CompanySummaries()
	if err := m.Rollback(tx); err != nil {
		return fmt.Errorf("drop the company summaries: %w", err)
	}
	if err := m.Migrate(tx); err != nil {
		return fmt.Errorf("make the company summaries again: %w", err)
	}
	return nil
}

// RebuildCompanySummaries makes the company summaries and their triggers
// again from the companies' rows, in one transaction under the
// migrations' lock (writers of the summarised tables wait for it). For an
// operator: after moving the database to another schema (Migrate does it
// by itself when it finds the triggers naming another schema), or to
// check a summary against the rows it sums.
func (s *Store) RebuildCompanySummaries(ctx context.Context) error {
	return migrationTx(ctx, s, rebuildSummaries)
}

// m0039Qualifier is how migration 0039 qualifies a name with schema on
// Postgres.
func m0039Qualifier(schema string) string {
	return `"` + strings.ReplaceAll(schema, `"`, `""`) + `".`
}
