package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"holdco/providers/companydb"
	"holdco/store"
)

// Postgres test schemas are reused within a test binary. Migrating a new
// schema takes about a second on Postgres 15, most of it fsyncs: each new
// btree index (every primary key and index of the migrations) is synced to
// disk as it is built. Emptying a migrated schema's tables takes a few
// milliseconds. So a schema a test is done with is emptied and handed to
// the next test, and the binary drops its schemas when it exits.
//
// Only a binary whose TestMain is Main pools (Main drops the schemas after
// the tests); elsewhere each test's schema is dropped when the test ends.
// A schema goes back to the pool only if its tables, columns, indexes,
// constraints and applied migrations are still those of a freshly
// migrated one: a test that changes the schema itself gets it dropped.

// pgPools is the binary's pools, one per TEST_DATABASE_URL (in practice
// one). pooling is set by Main.
var (
	pgPoolsMu sync.Mutex
	pgPools   = map[string]*pgPool{}
	pooling   bool
)

// pgPool is the migrated schemas of one database that no test holds.
type pgPool struct {
	base string

	mu   sync.Mutex
	free []string
	// made is every schema this pool created, dropped by dropAll.
	made []string
	// shape is the fingerprint of a freshly migrated schema; empty is
	// the statements that empty one (rows deleted children first,
	// sequences restarted). Both are set with the first schema.
	shape string
	empty func(schema string) string
}

func poolFor(base string) *pgPool {
	pgPoolsMu.Lock()
	defer pgPoolsMu.Unlock()
	p, ok := pgPools[base]
	if !ok {
		p = &pgPool{base: base}
		pgPools[base] = p
	}
	return p
}

// take returns an empty migrated schema: a free one, or a new one made
// and migrated now.
func (p *pgPool) take() (string, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		schema := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return schema, nil
	}
	p.mu.Unlock()

	schema := "test_" + randomHex(8)
	if err := execAdmin(p.base, `CREATE SCHEMA "`+schema+`"`); err != nil {
		return "", fmt.Errorf("create schema: %w", err)
	}
	p.mu.Lock()
	p.made = append(p.made, schema)
	p.mu.Unlock()
	if err := migrateSchema(p.base, schema); err != nil {
		return "", err
	}
	if err := p.learnShape(schema); err != nil {
		return "", err
	}
	return schema, nil
}

// give empties schema and puts it back in the pool; a schema whose shape
// changed, or that could not be emptied, is dropped instead. Either way
// its companies' databases go first (dropCompanyDatabases).
func (p *pgPool) give(schema string) error {
	if err := dropCompanyDatabases(p.base, schema); err != nil {
		return err
	}
	if err := p.reset(schema); err != nil {
		p.forget(schema)
		if derr := execAdmin(p.base, `DROP SCHEMA "`+schema+`" CASCADE`); derr != nil {
			return fmt.Errorf("%v; then drop: %w", err, derr)
		}
		return nil
	}
	p.mu.Lock()
	p.free = append(p.free, schema)
	p.mu.Unlock()
	return nil
}

func (p *pgPool) forget(schema string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.made = slices.DeleteFunc(p.made, func(s string) bool { return s == schema })
}

// reset empties schema in one transaction after checking its shape.
func (p *pgPool) reset(schema string) error {
	return withAdmin(p.base, 30*time.Second, func(ctx context.Context, db *sql.DB) error {
		shape, err := schemaShape(ctx, db, schema)
		if err != nil {
			return err
		}
		p.mu.Lock()
		want, empty := p.shape, p.empty
		p.mu.Unlock()
		if shape != want {
			return fmt.Errorf("schema %s is no longer shaped as a freshly migrated one", schema)
		}
		// Several statements with no arguments go as one simple query,
		// which Postgres runs as one transaction.
		_, err = db.ExecContext(ctx, empty(schema))
		return err
	})
}

// dropAll drops every schema the pool made (Main, after the tests).
func (p *pgPool) dropAll() error {
	p.mu.Lock()
	made := p.made
	p.made, p.free = nil, nil
	p.mu.Unlock()
	if len(made) == 0 {
		return nil
	}
	quoted := make([]string, len(made))
	for i, s := range made {
		quoted[i] = `"` + s + `"`
	}
	if err := execAdmin(p.base, "DROP SCHEMA IF EXISTS "+strings.Join(quoted, ", ")+" CASCADE"); err != nil {
		return err
	}
	return execAdmin(p.base, vacuumCatalogs)
}

// vacuumCatalogs clears the system catalogs' rows that the binary's
// schemas (their tables, columns, indexes, constraints) left dead when
// they were dropped. A Postgres without autovacuum (the test machine's)
// otherwise keeps them: after a few suite runs pg_attribute held 717,000
// dead rows (154 MB, the database 328 MB against 7 MB live), and every
// catalog lookup, so every Postgres test, got slower run after run (the
// api package's Postgres run: 67 s, then 159 s). A role that may not
// vacuum a catalog gets a warning, not an error.
const vacuumCatalogs = `VACUUM pg_catalog.pg_attribute, pg_catalog.pg_class, pg_catalog.pg_depend,
	pg_catalog.pg_index, pg_catalog.pg_trigger, pg_catalog.pg_type, pg_catalog.pg_constraint,
	pg_catalog.pg_attrdef, pg_catalog.pg_namespace, pg_catalog.pg_sequence, pg_catalog.pg_statistic,
	pg_catalog.pg_description, pg_catalog.pg_shdepend`

// learnShape records, from the first schema the pool migrates, the shape
// every returned schema must keep and the statements that empty one.
func (p *pgPool) learnShape(schema string) error {
	p.mu.Lock()
	known := p.empty != nil
	p.mu.Unlock()
	if known {
		return nil
	}
	return withAdmin(p.base, 30*time.Second, func(ctx context.Context, db *sql.DB) error {
		shape, err := schemaShape(ctx, db, schema)
		if err != nil {
			return err
		}
		empty, err := emptyingStatements(ctx, db, schema)
		if err != nil {
			return err
		}
		p.mu.Lock()
		if p.empty == nil {
			p.shape, p.empty = shape, empty
		}
		p.mu.Unlock()
		return nil
	})
}

// migrateSchema applies the migrations to schema through a store of its
// own, closed before it returns.
func migrateSchema(base, schema string) error {
	ctx := context.Background()
	s, err := store.Open(ctx, withSearchPath(base, schema), slog.New(slog.DiscardHandler))
	if err != nil {
		return fmt.Errorf("open store on %s: %w", schema, err)
	}
	if err := s.Migrate(ctx); err != nil {
		_ = s.Close()
		return fmt.Errorf("migrate %s: %w", schema, err)
	}
	return s.Close()
}

// schemaShape is a fingerprint of schema's relations (tables, indexes,
// sequences) with their columns and types, its constraints, and the
// migrations recorded as applied.
func schemaShape(ctx context.Context, db *sql.DB, schema string) (string, error) {
	var relations, constraints, applied string
	err := db.QueryRowContext(ctx, `
SELECT
  coalesce((SELECT string_agg(c.relname || ':' || c.relkind::text || '(' || coalesce((
      SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || CASE WHEN a.attnotnull THEN '!' ELSE '' END, ',' ORDER BY a.attnum)
      FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') || ')', ';' ORDER BY c.relname)
    FROM pg_class c WHERE c.relnamespace = n.oid), ''),
  coalesce((SELECT string_agg(k.conname || ':' || pg_get_constraintdef(k.oid), ';' ORDER BY k.conname)
    FROM pg_constraint k WHERE k.connamespace = n.oid), '')
FROM pg_namespace n WHERE n.nspname = $1`, schema).Scan(&relations, &constraints)
	if err != nil {
		return "", fmt.Errorf("shape of %s: %w", schema, err)
	}
	err = db.QueryRowContext(ctx, `SELECT coalesce(string_agg(id, ',' ORDER BY id), '') FROM "`+schema+`"."`+store.MigrationsTable+`"`).Scan(&applied)
	if err != nil {
		return "", fmt.Errorf("applied migrations of %s: %w", schema, err)
	}
	// pg_get_constraintdef names a foreign key's table with its schema
	// (the admin connection's search path is not the schema): without the
	// name, every schema of the pool has the shape of the first, instead of
	// being dropped and a new one migrated for each test.
	constraints = strings.ReplaceAll(strings.ReplaceAll(constraints, `"`+schema+`".`, ""), schema+".", "")
	return relations + "\n" + constraints + "\n" + applied, nil
}

// emptyingStatements builds, from schema's catalog, the statements that
// delete every row but the applied migrations (tables that reference
// another deleted before it) and restart every sequence. They are the
// same for every schema of the pool (reset checks the shape first), so
// they are built once, with the schema's name left to fill in.
func emptyingStatements(ctx context.Context, db *sql.DB, schema string) (func(string) string, error) {
	tables, err := queryStrings(ctx, db, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname`, schema)
	if err != nil {
		return nil, err
	}
	sequences, err := queryStrings(ctx, db, `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relkind = 'S' ORDER BY c.relname`, schema)
	if err != nil {
		return nil, err
	}
	// references[t] is the tables t's foreign keys point at.
	rows, err := db.QueryContext(ctx, `SELECT c.relname, f.relname FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class f ON f.oid = k.confrelid
JOIN pg_namespace n ON n.oid = k.connamespace
WHERE n.nspname = $1 AND k.contype = 'f'`, schema)
	if err != nil {
		return nil, err
	}
	references := map[string][]string{}
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			_ = rows.Close()
			return nil, err
		}
		if from != to {
			references[from] = append(references[from], to)
		}
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	order, err := referrersFirst(tables, references)
	if err != nil {
		return nil, err
	}
	order = slices.DeleteFunc(order, func(t string) bool { return t == store.MigrationsTable })
	return func(schema string) string {
		var b strings.Builder
		for _, t := range order {
			fmt.Fprintf(&b, "DELETE FROM %q.%q;\n", schema, t)
		}
		for _, s := range sequences {
			fmt.Fprintf(&b, "SELECT setval('%q.%q', 1, false);\n", schema, s)
		}
		return b.String()
	}, nil
}

// referrersFirst orders tables so that each comes before every table its
// foreign keys reference (a cycle is an error: no order deletes it).
func referrersFirst(tables []string, references map[string][]string) ([]string, error) {
	// referencedBy counts, for each table, the tables not yet placed that
	// reference it; a table is placed once nothing left references it.
	referencedBy := map[string]int{}
	for _, from := range tables {
		for _, to := range references[from] {
			referencedBy[to]++
		}
	}
	var order []string
	placed := map[string]bool{}
	for len(order) < len(tables) {
		progress := false
		for _, t := range tables {
			if placed[t] || referencedBy[t] > 0 {
				continue
			}
			placed[t], progress = true, true
			order = append(order, t)
			for _, to := range references[t] {
				referencedBy[to]--
			}
		}
		if !progress {
			return nil, fmt.Errorf("the foreign keys among %d tables form a cycle", len(tables)-len(order))
		}
	}
	return order, nil
}

func queryStrings(ctx context.Context, db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// dropCompanyDatabases drops the databases and roles that an app on
// Postgres made for the companies of schema (providers/companydb: one
// database and one role per company, outside the schema), so that a test
// run leaves none behind in the developer's Postgres.
func dropCompanyDatabases(base, schema string) error {
	return withAdmin(base, 2*time.Minute, func(ctx context.Context, db *sql.DB) error {
		return dropCompanyDatabasesOn(ctx, db, schema)
	})
}

func dropCompanyDatabasesOn(ctx context.Context, db *sql.DB, schema string) error {
	var table sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT to_regclass($1)::text`, `"`+schema+`".companies`).Scan(&table); err != nil {
		return fmt.Errorf("companies of %s: %w", schema, err)
	}
	if !table.Valid {
		return nil // not migrated
	}
	ids, err := queryStrings(ctx, db, `SELECT id FROM "`+schema+`".companies`)
	if err != nil || len(ids) == 0 {
		return err
	}
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = companydb.Name(id)
	}
	databases, err := queryStrings(ctx, db, `SELECT datname FROM pg_database WHERE datname = ANY($1)`, names)
	if err != nil {
		return err
	}
	roles, err := queryStrings(ctx, db, `SELECT rolname FROM pg_roles WHERE rolname = ANY($1)`, names)
	if err != nil {
		return err
	}
	for _, d := range databases {
		if _, err := db.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+d+`" WITH (FORCE)`); err != nil {
			return fmt.Errorf("drop company database: %w", err)
		}
	}
	for _, r := range roles {
		if _, err := db.ExecContext(ctx, `DROP ROLE IF EXISTS "`+r+`"`); err != nil {
			return fmt.Errorf("drop company role: %w", err)
		}
	}
	return nil
}

// execAdmin runs stmt on a short-lived connection to base, rather than
// holding one per test, so a parallel run stays far below
// max_connections.
func execAdmin(base, stmt string) error {
	return withAdmin(base, 30*time.Second, func(ctx context.Context, db *sql.DB) error {
		_, err := db.ExecContext(ctx, stmt)
		return err
	})
}

// withAdmin runs f with a short-lived connection pool to base and a
// deadline of timeout.
func withAdmin(base string, timeout time.Duration, f func(context.Context, *sql.DB) error) error {
	db, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return f(ctx, db)
}

// dropPooledSchemas is Main's, after the tests.
func dropPooledSchemas() error {
	pgPoolsMu.Lock()
	pools := make([]*pgPool, 0, len(pgPools))
	for _, p := range pgPools {
		pools = append(pools, p)
	}
	pgPoolsMu.Unlock()
	var errs []string
	for _, p := range pools {
		if err := p.dropAll(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("testenv: drop the test schemas: %s", strings.Join(errs, "; "))
	}
	return nil
}

// poolingEnabled reports whether this binary pools schemas (its TestMain
// is Main).
func poolingEnabled() bool {
	pgPoolsMu.Lock()
	defer pgPoolsMu.Unlock()
	return pooling && os.Getenv(DatabaseURLEnv) != ""
}
