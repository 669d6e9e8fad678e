package store

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"
)

// pingTimeout bounds the connectivity check in Open, so a wrong address
// fails start-up quickly instead of hanging.
const pingTimeout = 5 * time.Second

// DefaultSlowQueryThreshold is how long a statement may take before it is
// logged at warn (without its values).
const DefaultSlowQueryThreshold = 200 * time.Millisecond

// Option changes how Open sets up the store.
type Option func(*options)

type options struct {
	slowThreshold time.Duration
	pool          Pool
	tracer        trace.TracerProvider // nil: no spans (WithTracerProvider)
}

// Pool sizes a Postgres connection pool (SQLite keeps its own: one
// writer). Zero fields keep the defaults: DefaultMaxConns open, all of
// them kept while idle (an idle one still closes after 5 minutes),
// connections replaced after DefaultConnMaxLifetime.
//
// Keeping all of them: with half kept, a load whose concurrency swung
// around the idle bound closed and reopened connections all the time (28
// new Postgres sessions in 10 s of wrk on the dashboard), and each new
// one costs a backend's start, its catalog caches and the statements
// prepared and planned again (custom plans for their first five runs).
// The server's budget is the maximum anyway (docs/scaling.md).
type Pool struct {
	MaxConns, MaxIdleConns int
	ConnMaxLifetime        time.Duration
}

// Pool defaults.
const (
	DefaultMaxConns        = 20
	DefaultConnMaxLifetime = 30 * time.Minute
)

// WithPool sizes the Postgres connection pool: every process of a cluster
// opens up to MaxConns, and their sum must stay below the server's
// max_connections (docs/scaling.md).
func WithPool(p Pool) Option {
	return func(o *options) { o.pool = p }
}

func (p Pool) withDefaults() Pool {
	if p.MaxConns <= 0 {
		p.MaxConns = DefaultMaxConns
	}
	if p.MaxIdleConns <= 0 {
		p.MaxIdleConns = p.MaxConns
	}
	p.MaxIdleConns = min(p.MaxIdleConns, p.MaxConns)
	if p.ConnMaxLifetime <= 0 {
		p.ConnMaxLifetime = DefaultConnMaxLifetime
	}
	return p
}

// WithSlowQueryThreshold logs statements that take longer than d at warn
// (0 turns the slow-statement log off). Tests use a tiny value to make
// every statement "slow".
func WithSlowQueryThreshold(d time.Duration) Option {
	return func(o *options) { o.slowThreshold = d }
}

// Open connects to the database named by dsn and checks that it answers.
//
// A dsn starting with postgres:// or postgresql:// opens Postgres (pgx).
// Anything else is a SQLite file path, optionally prefixed with "sqlite:" or
// "file:"; its directory is created if missing. Errors say what is wrong
// without repeating a password; the caller prefixes the setting name.
//
// Open does not migrate; call Migrate.
func Open(ctx context.Context, dsn string, logger *slog.Logger, opts ...Option) (*Store, error) {
	o := options{slowThreshold: DefaultSlowQueryThreshold}
	for _, opt := range opts {
		opt(&o)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dsn = strings.TrimSpace(dsn)
	if dsn == "" {
		return nil, errors.New("empty database DSN: give a postgres:// URL or a SQLite file path")
	}
	var (
		db      *gorm.DB
		dialect string
		err     error
	)
	if isPostgresURL(dsn) {
		dialect = DialectPostgres
		db, err = openPostgres(ctx, dsn, gormConfig(logger, o), o.pool.withDefaults())
	} else {
		dialect = DialectSQLite
		db, err = openSQLite(ctx, dsn, gormConfig(logger, o), logger)
	}
	if err != nil {
		return nil, err
	}
	st := &Store{db: db, dialect: dialect, logger: logger, hooks: &hooks{}}
	if dialect == DialectSQLite {
		st.writeGate = newWriteGate()
		if err := st.gateSingleWrites(); err != nil {
			_ = st.Close()
			return nil, err
		}
	}
	if o.tracer != nil {
		if err := traceStatements(db, o.tracer, dialect); err != nil {
			_ = st.Close()
			return nil, err
		}
		st.tracer = o.tracer.Tracer(tracerName)
	}
	return st, nil
}

func gormConfig(logger *slog.Logger, o options) *gorm.Config {
	return &gorm.Config{
		Logger:  newSQLLogger(logger, o.slowThreshold),
		NowFunc: now,
		// Single statements are atomic on their own; multi-statement work
		// uses InTx or an explicit transaction in the method.
		SkipDefaultTransaction: true,
	}
}
