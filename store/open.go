package store

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

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
		db, err = openPostgres(ctx, dsn, gormConfig(logger, o))
	} else {
		dialect = DialectSQLite
		db, err = openSQLite(ctx, dsn, gormConfig(logger, o), logger)
	}
	if err != nil {
		return nil, err
	}
	st := &Store{db: db, dialect: dialect, logger: logger}
	if dialect == DialectSQLite {
		st.writeGate = make(chan struct{}, 1)
		if err := st.gateSingleWrites(); err != nil {
			_ = st.Close()
			return nil, err
		}
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
