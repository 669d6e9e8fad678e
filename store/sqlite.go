package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gorm.io/gorm"

	"holdco/store/internal/gormsqlite"

	// The pure-Go SQLite driver, registered as "sqlite". The embedded
	// Temporal server imports the same driver, so both share one
	// registration; drivers that register "sqlite" themselves (glebarez)
	// panic in this binary, and gorm's default "sqlite3" needs cgo (the
	// dialector is gorm.io/driver/sqlite's without its import of it:
	// store/internal/gormsqlite).
	_ "modernc.org/sqlite"
)

// sqliteDriverName is the database/sql name modernc.org/sqlite registers.
const sqliteDriverName = "sqlite"

// sqliteDefaults are added to every SQLite DSN unless the DSN sets the same
// parameter (or pragma). Concurrent writers need all of WAL, a busy timeout
// and IMMEDIATE transactions: with fewer, most concurrent read-then-write
// transactions fail with SQLITE_BUSY. Times are written in one UTC text
// format so they compare and sort correctly in SQL.
var sqliteDefaults = []struct{ key, value string }{
	{"_pragma", "busy_timeout(5000)"},
	{"_pragma", "journal_mode(wal)"},
	{"_pragma", "foreign_keys(1)"},
	{"_txlock", "immediate"},
	{"_time_format", "sqlite"},
	{"_timezone", "UTC"},
}

// sqliteMaxOpenConns caps the pool: writers are serialized by SQLite anyway,
// and waiting in the pool (which honours ctx) is better than spinning in the
// busy handler.
const sqliteMaxOpenConns = 16

// sqlitePreparedStatements bounds the statements kept prepared: the store's
// queries are a few hundred distinct texts (IN lists of different lengths
// add some).
const sqlitePreparedStatements = 1000

func openSQLite(ctx context.Context, dsn string, cfg *gorm.Config, logger *slog.Logger) (*gorm.DB, error) {
	path, driverDSN, err := sqliteDSN(dsn)
	if err != nil {
		return nil, err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("cannot create directory for sqlite database %s: %w", path, err)
		}
	}

	// The pure-Go SQLite parses a statement again on every call: about a
	// third of a small read (docs/benchmarks.md, dashboard). Statements are
	// kept prepared instead (preparedPool: on the pool, also those run
	// inside transactions), the least recently used closed past
	// sqlitePreparedStatements. (pgx keeps its own cache of prepared
	// statements on Postgres.)
	sqlDB, err := sql.Open(sqliteDriverName, driverDSN)
	if err != nil {
		return nil, fmt.Errorf("cannot open sqlite database %s: %w", path, err)
	}
	sqlDB.SetMaxOpenConns(sqliteMaxOpenConns)
	sqlDB.SetMaxIdleConns(sqliteMaxOpenConns)
	db, err := gorm.Open(gormsqlite.New(gormsqlite.Config{DriverName: sqliteDriverName, DSN: driverDSN,
		Conn: newPreparedPool(sqlDB, sqlitePreparedStatements)}), cfg)
	if err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("cannot open sqlite database %s: %w", path, err)
	}

	pingCtx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	var mode string
	if err := db.WithContext(pingCtx).Raw("PRAGMA journal_mode").Scan(&mode).Error; err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("cannot open sqlite database %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		// Some file systems (network mounts) cannot do WAL; it still works,
		// but concurrent writers will see "database is locked".
		logger.WarnContext(ctx, "sqlite database is not in WAL mode", "path", path, "journal_mode", mode)
	}
	return db, nil
}

// sqliteDSN turns the configured value into a file path and the DSN given to
// modernc.org/sqlite. Accepted forms: "data/holdco.db", "sqlite:data/holdco.db",
// "sqlite:///abs/holdco.db", "file:data/holdco.db", each optionally followed
// by "?" and driver parameters that override the defaults.
func sqliteDSN(dsn string) (path, driverDSN string, err error) {
	rest := dsn
	for _, prefix := range []string{"sqlite://", "sqlite:", "file://", "file:"} {
		if len(rest) >= len(prefix) && strings.EqualFold(rest[:len(prefix)], prefix) {
			rest = rest[len(prefix):]
			break
		}
	}
	path, rawQuery, _ := strings.Cut(rest, "?")
	if path == "" {
		return "", "", fmt.Errorf("invalid sqlite DSN %q: no file path", dsn)
	}
	if path == ":memory:" || strings.Contains(rawQuery, "mode=memory") {
		// Each pooled connection would get its own empty database.
		return "", "", fmt.Errorf("invalid sqlite DSN %q: in-memory databases are not supported, give a file path", dsn)
	}
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", "", fmt.Errorf("invalid sqlite DSN %q: bad parameters: %w", dsn, err)
	}
	for _, d := range sqliteDefaults {
		if d.key == "_pragma" {
			if !hasPragma(query["_pragma"], d.value) {
				query.Add(d.key, d.value)
			}
			continue
		}
		if !query.Has(d.key) {
			query.Set(d.key, d.value)
		}
	}
	return path, path + "?" + query.Encode(), nil
}

// hasPragma reports whether pragmas already sets the pragma named in want
// ("busy_timeout(5000)" names busy_timeout).
func hasPragma(pragmas []string, want string) bool {
	name := pragmaName(want)
	for _, p := range pragmas {
		if pragmaName(p) == name {
			return true
		}
	}
	return false
}

func pragmaName(p string) string {
	p = strings.ToLower(strings.TrimSpace(p))
	if i := strings.IndexAny(p, "(= "); i >= 0 {
		p = p[:i]
	}
	return p
}
