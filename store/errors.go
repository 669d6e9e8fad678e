package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

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
	case IsUnavailable(err):
		return fmt.Errorf("%w (%v)", models.ErrUnavailable, redactedError{err})
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

// IsUnavailable reports whether err says the database cannot be reached
// or used right now rather than that the statement is wrong: on Postgres a
// failed connect, a lost or closed connection, a network error, or the
// server's connection-exception and shutdown codes (class 08, 57P01–57P03,
// 53300 too many connections); on SQLite busy or locked past the busy
// timeout, a file it cannot open, an I/O error or a full disk; on both a
// pool already closed. A request that meets it may succeed later (503).
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller gave up (or its deadline passed): not an outage
	}
	if errors.Is(err, models.ErrUnavailable) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	if code, ok := sqliteCode(err); ok {
		switch code & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL:
			return true
		}
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", pgErr.Code == "53300":
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || errors.As(err, &netErr) {
		return true
	}
	// database/sql and pgx say so in words only.
	msg := err.Error()
	for _, s := range []string{"sql: database is closed", "conn closed", "unexpected EOF", "connection reset by peer", "broken pipe"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
