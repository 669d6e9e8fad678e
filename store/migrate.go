package store

import (
	"context"
	"fmt"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// MigrationsTable records the ids of applied migrations (the one table a
// freshly migrated database has rows in).
const MigrationsTable = "schema_migrations"

// migrations is the schema history, oldest first. Append only: an applied
// migration is never edited, and each declares its own snapshot structs so
// later changes to models/ cannot change what it creates.
func migrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{
		migration0001IdentityAndCompanies(),
		migration0002Credentials(),
		migration0003DevIdPUsers(),
		migration0004CompanyAPIKeys(),
		migration0005CompanyResources(),
		migration0006CompanyOIDCClients(),
		migration0007CreditLedger(),
		migration0008Billing(),
		migration0009WebLoginCodes(),
		migration0010ProvisioningOutbox(),
		migration0011ActivityDocumentsMilestones(),
		migration0012CompanyFiles(),
		migration0013CompanyEmail(),
		migration0014CompanySales(),
		migration0015Tasks(),
		migration0016Turns(),
		migration0017Prospects(),
		migration0018Founding(),
		migration0019OAuth(),
		migration0020Analytics(),
		migration0021DomainsAds(),
		migration0022Connector(),
		migration0024Money(),
		migration0025SignInCodeExpiry(),
		migration0026PageSessionsAndAttempts(),
		migration0027CreditReservations(),
		migration0028AnalyticsCountry(),
		migration0030KeyedEffects(),
		migration0032SiteDeploys(),
		migration0034ClusterShared(),
		migration0035DevIdPState(),
		migration0036TurnIdempotencyKey(),
		migration0037AnalyticsInbox(),
		migration0038OneActiveTurn(),
		migration0039CompanySummaries(),
		migration0040OpenTasksIndex(),
	}
}

// Migrate applies the migrations the database has not seen yet. It is safe
// to call on every start and from several replicas at once: all of it runs
// in one transaction, which on SQLite begins IMMEDIATE (one writer at a time)
// and on Postgres first takes an advisory lock scoped to the current schema.
// A failed migration leaves nothing behind.
//
// On Postgres it then makes the company summaries again when their
// triggers name another schema than the current one (summary_heal.go).
func (s *Store) Migrate(ctx context.Context) error {
	return migrationTx(ctx, s, func(tx *gorm.DB) error {
		m := gormigrate.New(tx, &gormigrate.Options{
			TableName:    MigrationsTable,
			IDColumnName: "id",
			IDColumnSize: 255,
			// The surrounding transaction already covers every migration.
			UseTransaction: false,
			// An id this binary does not know means a newer release has
			// migrated; an older replica still running during a rolling
			// deploy must keep working, so unknown ids are allowed.
			ValidateUnknownMigrations: false,
		}, migrations())
		if err := m.Migrate(); err != nil {
			return err
		}
		stale, err := summaryTriggersStale(tx)
		if err != nil {
			return fmt.Errorf("check the company summaries' triggers: %w", err)
		}
		if !stale {
			return nil
		}
		s.logger.Warn("store: the company summaries' triggers name another schema (the database was moved); making them again")
		return rebuildSummaries(tx)
	})
}

// migrationTx runs fn in one transaction of s, on Postgres after taking
// the migrations' advisory lock of the current schema.
func migrationTx(ctx context.Context, s *Store, fn func(tx *gorm.DB) error) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == DialectPostgres {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtext('holdco.migrate.' || current_schema()))").Error; err != nil {
				return fmt.Errorf("lock: %w", err)
			}
		}
		return fn(tx)
	})
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	return nil
}

// AppliedMigrations returns the ids of the applied migrations in order. A
// database that was never migrated has none.
func (s *Store) AppliedMigrations(ctx context.Context) ([]string, error) {
	db := s.db.WithContext(ctx)
	if !db.Migrator().HasTable(MigrationsTable) {
		return []string{}, nil
	}
	ids := []string{}
	if err := db.Table(MigrationsTable).Order("id").Pluck("id", &ids).Error; err != nil {
		return nil, wrap("applied migrations", err)
	}
	return ids, nil
}

// KnownMigrations returns the ids of the migrations this binary carries, in
// order; compared with AppliedMigrations it tells whether the schema is
// current.
func KnownMigrations() []string {
	ms := migrations()
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}
