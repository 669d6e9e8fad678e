package store

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
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
