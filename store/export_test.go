package store

import (
	"context"
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
