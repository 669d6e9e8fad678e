package store

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"
)

// pingTimeout bounds the connectivity check in Open, so a wrong address
// fails start-up quickly instead of hanging.
const pingTimeout = 5 * time.Second

// Open connects to the database named by dsn and checks that it answers.
//
// A dsn starting with postgres:// or postgresql:// opens Postgres (pgx).
// Anything else is a SQLite file path, optionally prefixed with "sqlite:" or
// "file:"; its directory is created if missing. Errors say what is wrong
// without repeating a password; the caller prefixes the setting name.
//
// Open does not migrate; call Migrate.
func Open(ctx context.Context, dsn string, logger *slog.Logger) (*Store, error) {
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
		db, err = openPostgres(ctx, dsn, gormConfig(logger))
	} else {
		dialect = DialectSQLite
		db, err = openSQLite(ctx, dsn, gormConfig(logger), logger)
	}
	if err != nil {
		return nil, err
	}
	return &Store{db: db, dialect: dialect, logger: logger}, nil
}

func gormConfig(logger *slog.Logger) *gorm.Config {
	return &gorm.Config{
		Logger: quietLogger{gormlogger.NewSlogLogger(logger, gormlogger.Config{
			SlowThreshold: 200 * time.Millisecond,
			LogLevel:      gormlogger.Warn,
			// Keep row values (emails, hashes) out of logs.
			ParameterizedQueries:      true,
			IgnoreRecordNotFoundError: true,
		})},
		NowFunc: now,
		// Single statements are atomic on their own; multi-statement work
		// uses InTx or an explicit transaction in the method.
		SkipDefaultTransaction: true,
	}
}

// quietLogger drops the error of a statement that hit a unique or foreign
// key constraint: the store returns those as ErrDuplicate / ErrNotFound,
// callers handle them (a taken handle is a normal answer), and logging each
// one at error level would bury real failures.
type quietLogger struct{ gormlogger.Interface }

func (l quietLogger) LogMode(level gormlogger.LogLevel) gormlogger.Interface {
	return quietLogger{l.Interface.LogMode(level)}
}

func (l quietLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if err != nil && (isUniqueViolation(err) || isForeignKeyViolation(err)) {
		err = nil
	}
	l.Interface.Trace(ctx, begin, fc, err)
}
