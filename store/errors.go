package store

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"holdco/models"
)

// Postgres SQLSTATE codes the store translates.
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
)

// translate maps driver errors to the models sentinels so callers can test
// with errors.Is and never see a driver type. gorm's own TranslateError does
// not know modernc.org/sqlite's errors (it only maps mattn/go-sqlite3's), so
// the codes are checked here for both drivers. The driver's message is kept
// in the text for logs, without the parts that can echo a value
// (safeErrorText).
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return models.ErrNotFound
	case isUniqueViolation(err):
		return fmt.Errorf("%w (%v)", models.ErrDuplicate, err)
	case isForeignKeyViolation(err):
		// The row pointed at does not exist (for example a company for an
		// unknown conglomerate).
		return fmt.Errorf("%w: referenced row (%v)", models.ErrNotFound, err)
	}
	return redactedError{err}
}

// wrap adds the operation name to a translated error.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: %s: %w", op, translate(err))
}

func isUniqueViolation(err error) bool {
	if code, ok := sqliteCode(err); ok {
		// Extended result codes are on in modernc.org/sqlite, so a unique
		// index violation is 2067 and a primary key clash 1555.
		return code == sqlite3.SQLITE_CONSTRAINT_UNIQUE || code == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgUniqueViolation
}

func isForeignKeyViolation(err error) bool {
	if code, ok := sqliteCode(err); ok {
		return code == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgForeignKeyViolation
}

func sqliteCode(err error) (int, bool) {
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqErr.Code(), true
	}
	return 0, false
}
