package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/store"
	"holdco/testenv"
)

// Slow and failed statements are logged as parameterized SQL: a secret
// bound as a value (an instance secret, a user's email or hash) never
// reaches the log, on either dialect. The threshold of 1 ns makes every
// statement "slow" without depending on timing.
func TestSQLLogsCarryNoBoundValues(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := testenv.NewStoreWith(t, logger, store.WithSlowQueryThreshold(time.Nanosecond))
	const secret = "SeCrEt-Value-7f3a9c"

	// An instance secret insert, logged as slow.
	logs.Reset()
	got, err := s.Identity().InstanceSecret(ctx, "log-test", func() []byte { return []byte(secret) })
	require.NoError(t, err)
	require.Equal(t, secret, string(got))
	assert.Contains(t, logs.String(), "slow SQL statement")
	assert.Contains(t, logs.String(), "INSERT INTO")
	assert.Contains(t, logs.String(), "instance_secrets")
	assert.NotContains(t, logs.String(), secret)

	// A raw scan: GORM traces it through its recorder, not the statement
	// callback.
	logs.Reset()
	var echoed string
	require.NoError(t, store.GormDB(s).WithContext(ctx).Raw("SELECT CAST(? AS TEXT) AS v", secret).Scan(&echoed).Error)
	require.Equal(t, secret, echoed)
	assert.Contains(t, logs.String(), "SELECT CAST(")
	assert.NotContains(t, logs.String(), secret)

	// Failing statements, logged at error.
	logs.Reset()
	err = store.GormDB(s).WithContext(ctx).Exec("INSERT INTO no_such_table (v) VALUES (?)", secret).Error
	require.Error(t, err)
	assert.Contains(t, logs.String(), "SQL statement failed")
	assert.Contains(t, logs.String(), "INSERT INTO no_such_table (v) VALUES (")
	assert.NotContains(t, logs.String(), secret)

	if s.Dialect() == store.DialectPostgres {
		// Postgres quotes the value it could not convert in its message.
		logs.Reset()
		err = store.GormDB(s).WithContext(ctx).Exec("SELECT CAST(CAST(? AS TEXT) AS integer)", secret).Error
		require.Error(t, err)
		require.Contains(t, err.Error(), secret, "the driver error itself carries the value")
		assert.Contains(t, logs.String(), "SQLSTATE 22P02")
		assert.NotContains(t, logs.String(), secret)
	}
}
