package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	gormlogger "gorm.io/gorm/logger"
)

func init() {
	// gorm's Scan (Raw(…).Scan, Model(…).Scan) traces through a recorder
	// whose filter is this package-level hook; by default it keeps the
	// values, which the recorded SQL would then carry into the log.
	gormlogger.RecorderParamsFilter = func(_ context.Context, sql string, _ ...any) (string, []any) {
		return sql, nil
	}
}

// sqlLogger is GORM's logger for the store. It never logs a statement's
// values: emails, password and token hashes, instance secrets and company
// names are bound parameters, and GORM asks ParamsFilter before it renders
// a statement, so the log shows only the parameterized text ($1 / ?).
// Driver errors are logged through safeErrorText, which drops the parts of
// a message that can echo a value.
//
// Statements that failed on a unique or foreign key constraint are not
// logged: the store returns them as ErrDuplicate / ErrNotFound, callers
// handle them (a taken handle is a normal answer), and logging each one at
// error level would bury real failures.
//
// Statements that failed because the database cannot be reached
// (IsUnavailable) are logged at error level once per outage: the first
// one, then each further one at debug level, and one info line when a
// statement succeeds again. A 40 s Postgres restart under traffic logged
// an error line per failed statement before (119 in one run, 3,184 in
// issue 24's), burying everything else.
type sqlLogger struct {
	logger *slog.Logger
	level  gormlogger.LogLevel
	slow   time.Duration
	outage *sqlOutage // shared by the LogMode copies
}

func newSQLLogger(logger *slog.Logger, slow time.Duration) *sqlLogger {
	return &sqlLogger{logger: logger, level: gormlogger.Warn, slow: slow, outage: &sqlOutage{}}
}

// sqlOutage records a database outage as the statements see it.
type sqlOutage struct {
	failing atomic.Bool // read on every statement; the rest under mu
	mu      sync.Mutex
	since   time.Time
	failed  int64
}

// failed notes a statement that met the outage; only the outage's first
// one is logged at error level.
func (o *sqlOutage) fail(ctx context.Context, logger *slog.Logger, attrs []any) {
	o.mu.Lock()
	first := !o.failing.Load()
	if first {
		o.failing.Store(true)
		o.since, o.failed = time.Now(), 0
	}
	o.failed++
	o.mu.Unlock()
	if first {
		logger.ErrorContext(ctx, "SQL statements fail: the database is unavailable (further failures are logged at debug level until a statement succeeds)", attrs...)
		return
	}
	logger.DebugContext(ctx, "SQL statement failed: the database is unavailable", attrs...)
}

// ok notes a statement that succeeded: the end of an outage, if one was
// under way.
func (o *sqlOutage) ok(ctx context.Context, logger *slog.Logger) {
	if !o.failing.Load() {
		return
	}
	o.mu.Lock()
	if !o.failing.Load() {
		o.mu.Unlock()
		return
	}
	o.failing.Store(false)
	lasted, failed := time.Since(o.since), o.failed
	o.mu.Unlock()
	logger.InfoContext(ctx, "SQL statements succeed again: the database is back", "lasted", lasted.Round(time.Millisecond).String(), "statements_failed", failed)
}

var _ interface {
	gormlogger.Interface
	ParamsFilter(ctx context.Context, sql string, params ...any) (string, []any)
} = (*sqlLogger)(nil)

func (l *sqlLogger) LogMode(level gormlogger.LogLevel) gormlogger.Interface {
	c := *l
	c.level = level
	return &c
}

// ParamsFilter drops every bound value before GORM renders the statement
// for the log.
func (l *sqlLogger) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}

// Info, Warn and Error carry GORM's own messages (migrator notices); their
// data is not logged, since it may hold values.
func (l *sqlLogger) Info(ctx context.Context, msg string, _ ...any) {
	if l.level >= gormlogger.Info {
		l.logger.InfoContext(ctx, "gorm: "+msg)
	}
}

func (l *sqlLogger) Warn(ctx context.Context, msg string, _ ...any) {
	if l.level >= gormlogger.Warn {
		l.logger.WarnContext(ctx, "gorm: "+msg)
	}
}

func (l *sqlLogger) Error(ctx context.Context, msg string, _ ...any) {
	if l.level >= gormlogger.Error {
		l.logger.ErrorContext(ctx, "gorm: "+msg)
	}
}

func (l *sqlLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if n, ok := ctx.Value(queryCountKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
	if l.level <= gormlogger.Silent {
		return
	}
	elapsed := time.Since(begin)
	attrs := func() []any {
		sql, rows := fc()
		a := []any{slog.String("sql", sql), slog.Duration("duration", elapsed)}
		if rows >= 0 {
			a = append(a, slog.Int64("rows", rows))
		}
		return a
	}
	if err == nil || errors.Is(err, gormlogger.ErrRecordNotFound) {
		l.outage.ok(ctx, l.logger)
	}
	switch {
	case err != nil && IsUnavailable(err) && l.level >= gormlogger.Error:
		l.outage.fail(ctx, l.logger, append(attrs(), slog.String("error", safeErrorText(err))))
	case err != nil && !errors.Is(err, gormlogger.ErrRecordNotFound) &&
		!isUniqueViolation(err) && !isForeignKeyViolation(err) && l.level >= gormlogger.Error:
		l.logger.ErrorContext(ctx, "SQL statement failed", append(attrs(), slog.String("error", safeErrorText(err)))...)
	case l.slow > 0 && elapsed > l.slow && l.level >= gormlogger.Warn:
		l.logger.WarnContext(ctx, "slow SQL statement", append(attrs(), slog.Duration("threshold", l.slow))...)
	case l.level >= gormlogger.Info:
		l.logger.InfoContext(ctx, "SQL statement", attrs()...)
	}
}

// quoted matches a double-quoted string in a driver message.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// safeErrorText renders a database error without the parts that can carry
// a statement's values. Postgres puts values in the text after a colon
// (`invalid input syntax for type integer: "…"`) and in Detail (`Key
// (email)=(…) already exists`), which is left out; pgx quotes the value it
// could not encode (`unable to encode "…" into …`). Identifiers in the
// fields of a Postgres error (table, column, constraint) are kept.
func safeErrorText(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		msg := pgErr.Message
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[:i] + ": …"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s (SQLSTATE %s)", pgErr.Severity, msg, pgErr.Code)
		for _, f := range []struct{ k, v string }{
			{"table", pgErr.TableName}, {"column", pgErr.ColumnName}, {"constraint", pgErr.ConstraintName},
		} {
			if f.v != "" {
				fmt.Fprintf(&b, " %s=%s", f.k, f.v)
			}
		}
		return b.String()
	}
	if _, ok := sqliteCode(err); ok {
		// SQLite names tables, columns and constraints, never values.
		return err.Error()
	}
	return quoted.ReplaceAllString(err.Error(), `"…"`)
}

// redactedError keeps a driver error for errors.Is / errors.As while its
// text is safeErrorText, so a caller that logs a store error logs no
// values either.
type redactedError struct{ err error }

func (e redactedError) Error() string { return safeErrorText(e.err) }
func (e redactedError) Unwrap() error { return e.err }

type queryCountKey struct{}

// WithQueryCount returns a context under which every statement the store
// runs is counted in the returned counter: a test proves that a request
// runs a bounded number of queries, whatever the size of the data.
func WithQueryCount(ctx context.Context) (context.Context, *atomic.Int64) {
	n := new(atomic.Int64)
	return context.WithValue(ctx, queryCountKey{}, n), n
}
