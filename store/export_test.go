package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"holdco/models"
)

// GormDB exposes the store's connection to the external tests that run
// statements the store has no method for (a failing one, a raw scan).
func GormDB(s *Store) *gorm.DB { return s.db }

// RecordActivityAt records an event at a chosen instant, so tests can make
// events with equal timestamps.
func RecordActivityAt(s *Store, ctx context.Context, c CompanyScope, a models.ActivityInput, at time.Time) error {
	return s.recordActivityAt(ctx, c.id, a, at)
}

// Migration0038 is the migration that makes one active turn per company a
// rule of the rows.
var Migration0038 = migration0038OneActiveTurn

// Migration0039 is the migration that adds the company summaries and
// their triggers.
var Migration0039 = migration0039CompanySummaries

// RawScanRow is one row read both ways by ScanBothWays.
type RawScanRow struct {
	Raw, Scanned    []any // the destinations after scanRaw, after pgx's rows.Scan
	Decoded         bool  // scanRaw decoded the row (false: scanRow leaves it to rows.Scan)
	RawErr, ScanErr error
}

// ScanBothWays runs q (? placeholders) with args on a Postgres pipeline
// and reads each row twice, into fresh destinations from dest: by scanRaw
// and by pgx's rows.Scan.
func ScanBothWays(ctx context.Context, s *Store, q string, args []any, dest func() []any) ([]RawScanRow, error) {
	var out []RawScanRow
	err := pipeline(ctx, s, pipelined{q: newFixedSQL(q), args: args, read: func(rows rowSource) error {
		for rows.Next() {
			var r RawScanRow
			r.Raw, r.Scanned = dest(), dest()
			r.Decoded, r.RawErr = scanRaw(rows.(rawRows), r.Raw)
			r.ScanErr = rows.Scan(r.Scanned...)
			out = append(out, r)
		}
		return rows.Err()
	}})
	if n := len(out); err != nil && n > 0 && out[n-1].ScanErr != nil && errors.Is(err, out[n-1].ScanErr) {
		err = nil // pgx ends the rows with the failed scan's error: the row's, not the statement's
	}
	return out, err
}

// DashboardStatements are the dashboard's two pipelined statements for
// the company, with their arguments and destinations.
func DashboardStatements(dialect, companyID string, h HeadlineDays) (qs []string, args [][]any, dests []func() []any) {
	summary := func() []any {
		var c models.Company
		var r summaryRow
		return r.dest(companyDest(&c)...)
	}
	lists := func() []any {
		var l listRow
		return l.dest()
	}
	return []string{authorizedSummarySQL.sqlite, dashboardListsQuery(dialect, 10, 21, 20)},
		[][]any{companySummaryArgs("", companyID, h), dashboardListsArgs(companyID)}, []func() []any{summary, lists}
}

// NewAnyTime is a fresh anyTime destination.
func NewAnyTime() any { return new(anyTime) }

// EmptyIfNull is the destination that reads a NULL text as "".
func EmptyIfNull(s *string) any { return emptyIfNull{s} }

// OpenTaskStatuses is the open statuses as the store's statements write
// them, and Migration0040OpenStatuses as migration 0040's index does.
var OpenTaskStatuses, Migration0040OpenStatuses = openTaskStatuses, migration0040OpenStatuses
