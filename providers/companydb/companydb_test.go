package companydb_test

import (
	"context"
	"database/sql"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/companydb"
)

type adapter interface {
	Ensure(ctx context.Context, companyID string) (string, error)
	Check(ctx context.Context, companyID string) error
	DSN(companyID string) string
	Drop(ctx context.Context, companyID string) error
}

func adapters(t *testing.T) map[string]adapter {
	t.Helper()
	sqlite, err := companydb.NewSQLite(t.TempDir())
	require.NoError(t, err)
	out := map[string]adapter{"sqlite": sqlite}
	if dsn := os.Getenv("TEST_DATABASE_URL"); dsn != "" {
		pg, err := companydb.NewPostgres(dsn, []byte("test secret"))
		require.NoError(t, err)
		t.Cleanup(func() { pg.Close() })
		out["postgres"] = pg
	}
	return out
}

func driver(dsn string) string {
	if strings.HasPrefix(dsn, "postgres") {
		return "pgx"
	}
	return "sqlite"
}

func TestEnsureCheckDropHeal(t *testing.T) {
	ctx := context.Background()
	for name, a := range adapters(t) {
		t.Run(name, func(t *testing.T) {
			id := uuid.NewString()
			t.Cleanup(func() { _ = a.Drop(ctx, id) })
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() { _, errs[i] = a.Ensure(ctx, id) })
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err)
			}
			require.NoError(t, a.Check(ctx, id))

			// The company's own connection can create tables.
			db, err := sql.Open(driver(a.DSN(id)), a.DSN(id))
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, "CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT)")
			require.NoError(t, err)
			require.NoError(t, db.Close())

			require.NoError(t, a.Drop(ctx, id))
			assert.Error(t, a.Check(ctx, id), "a dropped database fails the check")
			_, err = a.Ensure(ctx, id)
			require.NoError(t, err)
			require.NoError(t, a.Check(ctx, id), "Ensure heals it")
		})
	}
}

func TestTenantsAreIsolated(t *testing.T) {
	dsn := os.Getenv("TEST_DATABASE_URL")
	if dsn == "" {
		t.Skip("TEST_DATABASE_URL not set (SQLite files have no roles)")
	}
	ctx := context.Background()
	pg, err := companydb.NewPostgres(dsn, []byte("test secret"))
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() }) // registered first, so it runs after the drops
	a, b := uuid.NewString(), uuid.NewString()
	for _, id := range []string{a, b} {
		t.Cleanup(func() { _ = pg.Drop(ctx, id) })
		_, err := pg.Ensure(ctx, id)
		require.NoError(t, err)
	}
	// Company A's role, pointed at company B's database.
	cross := strings.Replace(pg.DSN(a), "/"+companydb.Name(a), "/"+companydb.Name(b), 1)
	db, err := sql.Open("pgx", cross)
	require.NoError(t, err)
	defer db.Close()
	err = db.PingContext(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "permission denied")
}

func TestSQLiteRefusesBadIDsAndForeignFiles(t *testing.T) {
	ctx := context.Background()
	s, err := companydb.NewSQLite(t.TempDir())
	require.NoError(t, err)
	_, err = s.Ensure(ctx, "../escape")
	assert.Error(t, err)
	assert.Error(t, s.Check(ctx, uuid.NewString()), "a database never created")
}
