// Package testenv builds real dependencies for tests: a migrated database
// (NewStore) and, in temporal.go, a Temporal server. Tests use these instead
// of fakes so that what they exercise is what runs in production; each call
// gets its own isolated instance, so tests can run in parallel.
package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	// database/sql driver "pgx", for the admin connection that creates and
	// drops the per-test schema.
	_ "github.com/jackc/pgx/v5/stdlib"

	"holdco/store"
)

// DatabaseURLEnv names the variable that switches NewStore to Postgres, for
// example postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const DatabaseURLEnv = "TEST_DATABASE_URL"

// NewStore returns a migrated, empty store that is closed (and on Postgres
// dropped) when the test ends.
//
// Without TEST_DATABASE_URL it is a SQLite file in t.TempDir(). With it, it
// is a fresh Postgres schema with a random name in that database, reached
// through search_path, so parallel tests never see each other's rows.
func NewStore(t testing.TB) *store.Store {
	t.Helper()
	return NewStoreWith(t, slog.New(slog.DiscardHandler))
}

// NewStoreWith is NewStore with the store's logger and Open options given,
// for tests that read what the store logs.
func NewStoreWith(t testing.TB, logger *slog.Logger, opts ...store.Option) *store.Store {
	t.Helper()
	s, _ := newStore(t, logger, opts...)
	return s
}

// NewStoreAndSQL is NewStore with a second, plain database/sql connection
// to the same database, for benchmarks that seed large amounts of rows in
// bulk (the write paths themselves are measured elsewhere). It answers the
// connection and its placeholder style: "?" on SQLite, "$" on Postgres.
func NewStoreAndSQL(t testing.TB) (*store.Store, *sql.DB, string) {
	t.Helper()
	s, dsn := newStore(t, slog.New(slog.DiscardHandler))
	driver, style := "sqlite", "?"
	if s.Dialect() == store.DialectPostgres {
		driver, style = "pgx", "$"
	} else {
		dsn = "file:" + dsn + "?_pragma=busy_timeout(5000)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatalf("testenv: open seeding connection: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return s, db, style
}

func newStore(t testing.TB, logger *slog.Logger, opts ...store.Option) (*store.Store, string) {
	t.Helper()
	ctx := context.Background()

	dsn := filepath.Join(t.TempDir(), "holdco.db")
	if base := os.Getenv(DatabaseURLEnv); base != "" {
		dsn, _ = newPostgresSchema(t, base)
	} else {
		// A copy of the binary's migrated database: migrating costs most
		// of a second of CPU under -race, and the suite opens a store in
		// nearly every test (a property test in each of its iterations).
		// Migrate below then finds every migration applied.
		SeedMigratedSQLite(t, dsn)
	}
	s, err := store.Open(ctx, dsn, logger, opts...)
	if err != nil {
		t.Fatalf("testenv: open store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("testenv: close store: %v", err)
		}
	})
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("testenv: migrate store: %v", err)
	}
	return s, dsn
}

// SeedMigratedSQLite writes the test binary's migrated SQLite database to
// path unless a file is there already: a whole app whose data directory
// holds it starts on a migrated database (its Migrate finds every
// migration applied) instead of migrating an empty one. An app restarted
// on the same directory keeps its file.
func SeedMigratedSQLite(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	image, err := migratedSQLite()
	if err != nil {
		t.Fatalf("testenv: migrated SQLite image: %v", err)
	}
	if err := os.WriteFile(path, image, 0o600); err != nil {
		t.Fatalf("testenv: seed %s: %v", filepath.Base(path), err)
	}
}

// migratedSQLite is the bytes of a freshly migrated SQLite database,
// made once per test binary (the file it was made in is removed at once).
var migratedSQLite = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "holdco-testenv-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "holdco.db")
	ctx := context.Background()
	s, err := store.Open(ctx, path, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	// Closing the last connection checkpoints the write-ahead log into the
	// file and removes the log, so the file alone is the database.
	if err := s.Close(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, fmt.Errorf("the write-ahead log of %s outlived its last connection", path)
	}
	return os.ReadFile(path)
})

// newPostgresSchema gives the test an empty, migrated schema of base and
// returns base with search_path pointing at it. In a binary whose
// TestMain is Main the schema comes from the binary's pool and goes back
// to it, emptied, when the test ends (pgpool.go); elsewhere it is created
// now, unmigrated, and dropped when the test ends.
func newPostgresSchema(t testing.TB, base string) (dsn, schema string) {
	t.Helper()
	if _, err := url.Parse(base); err != nil {
		// Not %v of err: a *url.Error quotes the URL with its password.
		t.Fatalf("testenv: %s is not a URL", DatabaseURLEnv)
	}
	if poolingEnabled() {
		pool := poolFor(base)
		schema, err := pool.take()
		if err != nil {
			t.Fatalf("testenv: a schema on %s: %v", DatabaseURLEnv, err)
		}
		// Registered before NewStore registers Close, so it runs after it.
		t.Cleanup(func() {
			if err := pool.give(schema); err != nil {
				t.Errorf("testenv: return schema %s: %v", schema, err)
			}
		})
		return withSearchPath(base, schema), schema
	}

	schema = "test_" + randomHex(8)
	// The name is ours (hex), so quoting is all the escaping it needs.
	if err := execAdmin(base, `CREATE SCHEMA "`+schema+`"`); err != nil {
		t.Fatalf("testenv: create schema on %s: %v", DatabaseURLEnv, err)
	}
	// Registered before NewStore registers Close, so it runs after it.
	t.Cleanup(func() {
		if err := dropCompanyDatabases(base, schema); err != nil {
			t.Errorf("testenv: drop the company databases of schema %s: %v", schema, err)
		}
		if err := execAdmin(base, `DROP SCHEMA "`+schema+`" CASCADE`); err != nil {
			t.Errorf("testenv: drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(base, schema), schema
}

// withSearchPath is base (a URL newPostgresSchema has parsed) with
// search_path set to schema, and commits that do not wait for the WAL's
// flush to disk (synchronous_commit off, unless base sets it): a test never
// outlives a crash of Postgres, and each commit then costs a third of its
// time (0.3 ms -> 0.1 ms measured with pgbench on the test machine).
func withSearchPath(base, schema string) string {
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	if !q.Has("synchronous_commit") {
		q.Set("synchronous_commit", "off")
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// BulkInsert writes rows into table through a seeding connection of
// NewStoreAndSQL, several hundred rows per statement.
func BulkInsert(t testing.TB, db *sql.DB, style, table string, cols []string, rows [][]any) {
	t.Helper()
	per := max(1, 900/len(cols)) // SQLite allows 999 parameters per statement by default
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		var b strings.Builder
		fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, strings.Join(cols, ", "))
		args := make([]any, 0, len(chunk)*len(cols))
		for i, r := range chunk {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(")
			for j := range cols {
				if j > 0 {
					b.WriteString(", ")
				}
				args = append(args, r[j])
				if style == "$" {
					fmt.Fprintf(&b, "$%d", len(args))
				} else {
					b.WriteString("?")
				}
			}
			b.WriteString(")")
		}
		if _, err := db.Exec(b.String(), args...); err != nil {
			t.Fatalf("testenv: bulk insert into %s: %v", table, err)
		}
	}
}

// DatabaseURL is a DATABASE_URL for a whole app under test (app.Start):
// with TEST_DATABASE_URL a fresh Postgres schema of that database, dropped
// when the test ends; without it "" (the app's own SQLite file under its
// data directory).
func DatabaseURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(DatabaseURLEnv)
	if base == "" {
		return ""
	}
	dsn, _ := newPostgresSchema(t, base)
	return dsn
}

// SQLiteOnly skips the test in the Postgres pass (TEST_DATABASE_URL set),
// for a test whose subject does not depend on the database — a browser
// driving pages whose REST paths other tests run on Postgres. why says so
// in the skip.
func SQLiteOnly(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(DatabaseURLEnv) != "" {
		t.Skip("SQLite pass only: " + why)
	}
}
