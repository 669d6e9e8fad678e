package companydb_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"net/url"
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
		pg, err := companydb.NewPostgres(dsn, []byte("test secret"), nil)
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

// withDatabase is dsn pointed at another database.
func withDatabase(t *testing.T, dsn, database string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.Path = "/" + database
	return u.String()
}

// connectError is the error of connecting with dsn (nil when it works).
func connectError(ctx context.Context, t *testing.T, dsn string) error {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	return db.PingContext(ctx)
}

// A company's role reaches only its own database: not another company's,
// not holdco's own, not postgres or template1; it has no role attributes
// beyond LOGIN. Temporary tables are allowed in its own database (they
// live and die with its session there). A database or role left open by
// an earlier version is closed again by the next Ensure.
func TestTenantsAreIsolated(t *testing.T) {
	dsn := os.Getenv("TEST_DATABASE_URL")
	if dsn == "" {
		t.Skip("TEST_DATABASE_URL not set (SQLite files have no roles)")
	}
	ctx := context.Background()
	pg, err := companydb.NewPostgres(dsn, []byte("test secret"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() }) // registered first, so it runs after the drops
	a, b := uuid.NewString(), uuid.NewString()
	for _, id := range []string{a, b} {
		t.Cleanup(func() { _ = pg.Drop(ctx, id) })
		_, err := pg.Ensure(ctx, id)
		require.NoError(t, err)
	}
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	holdcoDB := strings.TrimPrefix(u.Path, "/")
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	// postgres and template1 are shared with the server's other users:
	// holdco leaves them alone and logs what to run; this is the operator
	// running it (docs/companies.md).
	for _, database := range []string{"postgres", "template1"} {
		_, err := admin.ExecContext(ctx, "REVOKE CONNECT, TEMPORARY ON DATABASE "+database+" FROM PUBLIC")
		require.NoError(t, err)
	}

	assertIsolated := func(t *testing.T) {
		t.Helper()
		for _, database := range []string{companydb.Name(b), holdcoDB, "postgres", "template1"} {
			err := connectError(ctx, t, withDatabase(t, pg.DSN(a), database))
			if assert.Error(t, err, "company A's role connected to %s", database) {
				assert.Contains(t, err.Error(), "permission denied", database)
			}
		}
		var super, createDB, createRole, repl, bypass bool
		require.NoError(t, admin.QueryRowContext(ctx,
			"SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = $1",
			companydb.Name(a)).Scan(&super, &createDB, &createRole, &repl, &bypass))
		assert.False(t, super || createDB || createRole || repl || bypass, "company role attributes")
	}
	assertIsolated(t)

	own, err := sql.Open("pgx", pg.DSN(a))
	require.NoError(t, err)
	defer own.Close()
	conn, err := own.Conn(ctx)
	require.NoError(t, err)
	_, err = conn.ExecContext(ctx, "CREATE TEMP TABLE scratch (n int)")
	require.NoError(t, err, "temporary tables in its own database")
	require.NoError(t, conn.Close())

	// What an earlier version left: PUBLIC may connect and create temporary
	// tables everywhere, and the role was given CREATEDB and CREATEROLE.
	for _, stmt := range []string{
		`GRANT CONNECT, TEMPORARY ON DATABASE "` + companydb.Name(b) + `" TO PUBLIC`,
		`GRANT CONNECT, TEMPORARY ON DATABASE "` + holdcoDB + `" TO PUBLIC`,
		`ALTER ROLE "` + companydb.Name(a) + `" CREATEDB CREATEROLE`,
	} {
		_, err := admin.ExecContext(ctx, stmt)
		require.NoError(t, err, stmt)
	}
	require.NoError(t, connectError(ctx, t, withDatabase(t, pg.DSN(a), companydb.Name(b))), "the old state is open")
	for _, id := range []string{a, b} {
		_, err := pg.Ensure(ctx, id)
		require.NoError(t, err)
	}
	assertIsolated(t)
}

func TestSQLiteRefusesBadIDsAndForeignFiles(t *testing.T) {
	ctx := context.Background()
	s, err := companydb.NewSQLite(t.TempDir())
	require.NoError(t, err)
	_, err = s.Ensure(ctx, "../escape")
	assert.Error(t, err)
	assert.Error(t, s.Check(ctx, uuid.NewString()), "a database never created")
}

// Databases shared with the server's other users (postgres here) are not
// changed by holdco: it logs the statement an operator should run.
func TestSharedDatabasesAreLeftToTheOperator(t *testing.T) {
	dsn := os.Getenv("TEST_DATABASE_URL")
	if dsn == "" {
		t.Skip("TEST_DATABASE_URL not set (SQLite files have no roles)")
	}
	ctx := context.Background()
	admin, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close() })
	_, err = admin.ExecContext(ctx, "GRANT CONNECT, TEMPORARY ON DATABASE postgres TO PUBLIC")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.ExecContext(ctx, "REVOKE CONNECT, TEMPORARY ON DATABASE postgres FROM PUBLIC") })

	var logs bytes.Buffer
	pg, err := companydb.NewPostgres(dsn, []byte("test secret"), slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	id := uuid.NewString()
	t.Cleanup(func() { _ = pg.Drop(ctx, id) })
	_, err = pg.Ensure(ctx, id)
	require.NoError(t, err)

	var open bool
	require.NoError(t, admin.QueryRowContext(ctx, "SELECT has_database_privilege('public', 'postgres', 'CONNECT')").Scan(&open))
	assert.True(t, open, "holdco changed the postgres database")
	assert.Contains(t, logs.String(), `database=postgres statement=`)
}
