package store

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	gormlogger "gorm.io/gorm/logger"
)

// Store errors reach callers that log them; a Postgres message that echoes
// a value (or a pgx encoding error quoting it) must not carry it along,
// while errors.As still finds the driver error.
func TestStoreErrorsDoNotEchoValues(t *testing.T) {
	const secret = "alice@example.com"
	pgErr := &pgconn.PgError{Severity: "ERROR", Code: "22P02", Message: `invalid input syntax for type integer: "` + secret + `"`,
		Detail: "Key (email)=(" + secret + ") already exists.", TableName: "users", ColumnName: "email"}
	err := wrap("get user", pgErr)
	assert.NotContains(t, err.Error(), secret)
	assert.Contains(t, err.Error(), "invalid input syntax for type integer")
	assert.Contains(t, err.Error(), "SQLSTATE 22P02")
	assert.Contains(t, err.Error(), "column=email")
	var got *pgconn.PgError
	assert.True(t, errors.As(err, &got), "the driver error stays reachable")

	encErr := errors.New(`failed to encode args[0]: unable to encode "` + secret + `" into binary format for int4 (OID 23)`)
	err = wrap("get user", encErr)
	assert.NotContains(t, err.Error(), secret)
	assert.Contains(t, err.Error(), "unable to encode")
	assert.True(t, errors.Is(err, encErr))
}

// A database outage is logged once, not once per failed statement: the
// first statement that meets it at error level, the others at debug
// level, and one info line when a statement succeeds again. Other
// failures stay one error line each.
func TestSQLOutageIsLoggedOncePerOutage(t *testing.T) {
	var buf bytes.Buffer
	l := newSQLLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})), 0).LogMode(gormlogger.Warn)
	ctx := context.Background()
	stmt := func() (string, int64) { return "SELECT 1", 0 }
	down := &pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}
	for range 50 {
		l.Trace(ctx, time.Now(), stmt, down)
	}
	l.Trace(ctx, time.Now(), stmt, nil)
	l.Trace(ctx, time.Now(), stmt, nil)
	l.Trace(ctx, time.Now(), stmt, down) // a second outage
	l.Trace(ctx, time.Now(), stmt, errors.New("syntax error at end of input"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var errs, back int
	for _, line := range lines {
		if strings.Contains(line, "level=ERROR") {
			errs++
		}
		if strings.Contains(line, "the database is back") {
			back++
			assert.Contains(t, line, "statements_failed=50")
		}
	}
	assert.Equal(t, 3, errs, "one per outage and the other failure:\n%s", buf.String())
	assert.Equal(t, 1, back, buf.String())
	assert.Len(t, lines, 4, buf.String())
}
