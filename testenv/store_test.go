package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/companydb"
	"holdco/store"
)

func TestNewStoreIsMigratedAndIsolated(t *testing.T) {
	ctx := context.Background()
	a, b := NewStore(t), NewStore(t)

	for _, s := range []*store.Store{a, b} {
		require.NoError(t, s.Ping(ctx))
		applied, err := s.AppliedMigrations(ctx)
		require.NoError(t, err)
		assert.Equal(t, store.KnownMigrations(), applied)
	}
	if os.Getenv(DatabaseURLEnv) != "" {
		assert.Equal(t, store.DialectPostgres, a.Dialect())
	} else {
		assert.Equal(t, store.DialectSQLite, a.Dialect())
	}

	// The same platform-unique handle in both: each store is its own
	// database (or schema), so neither sees the other.
	for _, s := range []*store.Store{a, b} {
		_, c, err := s.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "t@example.com", NormalizedEmail: "t@example.com"}, "t")
		require.NoError(t, err)
		_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Same", Handle: "same-handle"})
		require.NoError(t, err)
	}
}

// postgresBase is TEST_DATABASE_URL, or skips the test.
func postgresBase(t *testing.T) string {
	t.Helper()
	base := os.Getenv(DatabaseURLEnv)
	if base == "" {
		t.Skip(DatabaseURLEnv + " not set")
	}
	return base
}

// withPooling runs f with pooling set to on, then restores it (the tests
// of this file do not run in parallel with each other).
func withPooling(t *testing.T, on bool, f func()) {
	t.Helper()
	pgPoolsMu.Lock()
	was := pooling
	pooling = on
	pgPoolsMu.Unlock()
	defer func() {
		pgPoolsMu.Lock()
		pooling = was
		pgPoolsMu.Unlock()
	}()
	f()
}

func TestPostgresSchemaIsDroppedAfterTheTestWithoutMain(t *testing.T) {
	base := postgresBase(t)
	var schema string
	withPooling(t, false, func() {
		t.Run("uses a schema", func(t *testing.T) {
			var dsn string
			dsn, schema = newPostgresSchema(t, base)
			s, err := store.Open(context.Background(), dsn, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			require.NoError(t, s.Migrate(context.Background()))
			require.True(t, schemaExists(t, base, schema))
		})
	})
	assert.False(t, schemaExists(t, base, schema), "schema %s is left behind", schema)
}

// A pooled schema comes back with no rows but the applied migrations and
// its sequences restarted, and the binary drops it after its tests.
func TestPooledSchemaIsEmptiedAfterTheTest(t *testing.T) {
	base := postgresBase(t)
	var schema string
	withPooling(t, true, func() {
		t.Run("uses a schema", func(t *testing.T) {
			var dsn string
			dsn, schema = newPostgresSchema(t, base)
			assert.Zero(t, rowsOutsideMigrations(t, base, schema), "a schema from the pool has rows")
			s, err := store.Open(context.Background(), dsn, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			require.NoError(t, s.Migrate(context.Background()))
			ctx := context.Background()
			u, c, err := s.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "p@example.com", NormalizedEmail: "p@example.com"}, "p")
			require.NoError(t, err)
			_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Pooled", Handle: "pooled"})
			require.NoError(t, err)
			require.NotEmpty(t, u.ID)
			execSQL(t, base, `SELECT nextval('"`+schema+`"."`+firstSequence(t, base, schema)+`"')`)
			require.NotZero(t, rowsOutsideMigrations(t, base, schema))
		})
	})
	require.True(t, schemaExists(t, base, schema), "schema %s was dropped, not pooled", schema)
	assert.Zero(t, rowsOutsideMigrations(t, base, schema), "schema %s kept rows", schema)
	var called bool
	db := adminDB(t, base)
	require.NoError(t, db.QueryRow(`SELECT is_called FROM "`+schema+`"."`+firstSequence(t, base, schema)+`"`).Scan(&called))
	assert.False(t, called, "the sequence was not restarted")

	applied, err := adminStoreOn(t, base, schema).AppliedMigrations(context.Background())
	require.NoError(t, err)
	assert.Equal(t, store.KnownMigrations(), applied)
}

// The databases and roles an app on Postgres makes for its companies
// (outside the schema) go when the test's schema is given back, pooled or
// not.
func TestCompanyDatabasesGoWithTheSchema(t *testing.T) {
	base := postgresBase(t)
	for _, pooled := range []bool{true, false} {
		var name string
		withPooling(t, pooled, func() {
			t.Run(fmt.Sprintf("pooled=%v", pooled), func(t *testing.T) {
				dsn, _ := newPostgresSchema(t, base)
				s, err := store.Open(context.Background(), dsn, nil)
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Close() })
				require.NoError(t, s.Migrate(context.Background()))
				ctx := context.Background()
				_, c, err := s.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "d@example.com", NormalizedEmail: "d@example.com"}, "d")
				require.NoError(t, err)
				co, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "With DB", Handle: "with-db"})
				require.NoError(t, err)
				name = companydb.Name(co.ID)
				execSQL(t, base, `CREATE ROLE "`+name+`"`)
				execSQL(t, base, `CREATE DATABASE "`+name+`" OWNER "`+name+`"`)
			})
		})
		var n int
		require.NoError(t, adminDB(t, base).QueryRow(`SELECT (SELECT count(*) FROM pg_database WHERE datname = $1) + (SELECT count(*) FROM pg_roles WHERE rolname = $1)`, name).Scan(&n))
		assert.Zero(t, n, "pooled=%v: the company's database or role is left behind", pooled)
	}
}

// Every schema a test gives back goes back to the pool, not only the one
// whose shape the pool learned first: their foreign keys name their own
// schemas.
func TestEveryPooledSchemaIsReused(t *testing.T) {
	base := postgresBase(t)
	var first, second string
	withPooling(t, true, func() {
		t.Run("holds two schemas", func(t *testing.T) {
			_, first = newPostgresSchema(t, base)
			_, second = newPostgresSchema(t, base)
		})
	})
	assert.True(t, schemaExists(t, base, first), "schema %s was dropped, not pooled", first)
	assert.True(t, schemaExists(t, base, second), "schema %s was dropped, not pooled", second)
	withPooling(t, true, func() {
		t.Run("takes two schemas", func(t *testing.T) {
			_, a := newPostgresSchema(t, base)
			_, b := newPostgresSchema(t, base)
			assert.ElementsMatch(t, []string{first, second}, []string{a, b}, "the pool made new schemas while two were free")
		})
	})
}

// A test that changed its schema's shape gets it dropped, not pooled.
func TestPooledSchemaWhoseShapeChangedIsDropped(t *testing.T) {
	base := postgresBase(t)
	var schema string
	withPooling(t, true, func() {
		t.Run("alters its schema", func(t *testing.T) {
			_, schema = newPostgresSchema(t, base)
			execSQL(t, base, `ALTER TABLE "`+schema+`".companies ADD COLUMN extra text`)
		})
	})
	assert.False(t, schemaExists(t, base, schema), "schema %s was pooled after its shape changed", schema)
}

// dropAll (Main, after the tests) drops the free schemas and the ones
// still held.
func TestPoolDropsEverySchemaItMade(t *testing.T) {
	base := postgresBase(t)
	pool := &pgPool{base: base}
	t.Cleanup(func() { _ = pool.dropAll() })
	a, err := pool.take()
	require.NoError(t, err)
	b, err := pool.take()
	require.NoError(t, err)
	require.NoError(t, pool.give(a))
	c, err := pool.take()
	require.NoError(t, err)
	assert.Equal(t, a, c, "the free schema is taken before a new one is made")
	require.NoError(t, pool.give(c))
	require.NoError(t, pool.dropAll())
	for _, s := range []string{a, b} {
		assert.False(t, schemaExists(t, base, s), "schema %s is left behind", s)
	}
}

// TestPoolDropVacuumsTheCatalogs: after dropping its schemas the pool
// vacuums the system catalogs their tables left dead rows in (the test
// machine's Postgres runs without autovacuum).
func TestPoolDropVacuumsTheCatalogs(t *testing.T) {
	base := postgresBase(t)
	db, err := sql.Open("pgx", base)
	require.NoError(t, err)
	defer db.Close()
	var before time.Time
	require.NoError(t, db.QueryRow("SELECT now()").Scan(&before))
	pool := &pgPool{base: base}
	t.Cleanup(func() { _ = pool.dropAll() })
	_, err = pool.take()
	require.NoError(t, err)
	require.NoError(t, pool.dropAll())
	var last sql.NullTime
	require.NoError(t, db.QueryRow("SELECT last_vacuum FROM pg_stat_sys_tables WHERE relname = 'pg_attribute'").Scan(&last))
	require.True(t, last.Valid, "pg_attribute was never vacuumed")
	assert.False(t, last.Time.Before(before), "pg_attribute was vacuumed at %s, before the drop (%s)", last.Time, before)
}

func TestReferrersFirst(t *testing.T) {
	tables := []string{"accounts", "companies", "files", "users"}
	refs := map[string][]string{
		"companies": {"accounts"},
		"files":     {"companies", "users"},
		"users":     {"accounts"},
	}
	order, err := referrersFirst(tables, refs)
	require.NoError(t, err)
	pos := map[string]int{}
	for i, name := range order {
		pos[name] = i
	}
	require.Len(t, order, len(tables))
	for from, tos := range refs {
		for _, to := range tos {
			assert.Less(t, pos[from], pos[to], "%s references %s: it is emptied first", from, to)
		}
	}

	_, err = referrersFirst([]string{"a", "b"}, map[string][]string{"a": {"b"}, "b": {"a"}})
	assert.ErrorContains(t, err, "cycle")
}

func adminDB(t *testing.T, base string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", base)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func adminStoreOn(t *testing.T, base, schema string) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), withSearchPath(base, schema), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func execSQL(t *testing.T, base, stmt string) {
	t.Helper()
	_, err := adminDB(t, base).Exec(stmt)
	require.NoError(t, err)
}

func firstSequence(t *testing.T, base, schema string) string {
	t.Helper()
	var name string
	require.NoError(t, adminDB(t, base).QueryRow(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind = 'S' ORDER BY c.relname LIMIT 1`, schema).Scan(&name))
	return name
}

// rowsOutsideMigrations counts the rows of schema's tables but the
// applied migrations.
func rowsOutsideMigrations(t *testing.T, base, schema string) int {
	t.Helper()
	db := adminDB(t, base)
	tables, err := queryStrings(context.Background(), db, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND c.relname <> $2`, schema, store.MigrationsTable)
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	total := 0
	for _, table := range tables {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM "`+schema+`"."`+table+`"`).Scan(&n))
		total += n
	}
	return total
}

func schemaExists(t *testing.T, base, schema string) bool {
	t.Helper()
	db, err := sql.Open("pgx", base)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n))
	return n > 0
}
