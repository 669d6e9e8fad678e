package store_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// A database that cannot be reached is models.ErrUnavailable (503 at the
// edge), whichever driver says so; a wrong statement is not.
func TestUnreachableDatabaseIsUnavailable(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewStore(t)
	_, err := st.Analytics().AnalyticsCompanyByKey(ctx, "hca_nosuchkey00000000000000")
	require.ErrorIs(t, err, models.ErrNotFound)
	assert.False(t, errors.Is(err, models.ErrUnavailable), "not found is an answer, not an outage")

	require.NoError(t, st.Close())
	_, err = st.Analytics().AnalyticsCompanyByKey(ctx, "hca_nosuchkey00000000000000")
	assert.ErrorIs(t, err, models.ErrUnavailable, "a closed pool: %v", err)
}

func TestSQLiteBusyPastTheTimeoutIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.db")
	ctx := context.Background()
	st, err := store.Open(ctx, path+"?_pragma=busy_timeout(50)", nil)
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, st.Migrate(ctx))
	other, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer other.Close()
	conn, err := other.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
	require.NoError(t, err)
	defer func() { _, _ = conn.ExecContext(ctx, "ROLLBACK") }()

	err = st.InTx(ctx, func(tx *store.Store) error { return nil })
	require.Error(t, err)
	assert.True(t, store.IsUnavailable(err), "busy past the timeout: %v", err)
	assert.ErrorIs(t, err, models.ErrUnavailable, "a transaction that cannot begin answers 503: %v", err)
}

// pgx's own errors for a server that is not there (no server needed).
func TestPostgresRefusedConnectionIsUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	_, err = pgx.Connect(context.Background(), "postgres://postgres@"+addr+"/test?sslmode=disable&connect_timeout=5")
	require.Error(t, err)
	assert.True(t, store.IsUnavailable(err), "connection refused: %v", err)
	assert.True(t, store.IsUnavailable(&pgconn.PgError{Code: "57P01"}), "admin shutdown")
	assert.False(t, store.IsUnavailable(&pgconn.PgError{Code: "23505"}), "a unique violation is an answer")
	assert.False(t, store.IsUnavailable(context.Canceled), "a caller gone is not an outage")
}

// A transaction whose connection is lost between its statements and its
// commit (Postgres crashed or restarted) is models.ErrUnavailable: REST
// answers 503, not 500. `make outage` saw two writes answer 500 "conn
// closed" when Postgres stopped with -m immediate under traffic.
func TestTransactionThatLosesItsConnectionIsUnavailable(t *testing.T) {
	if os.Getenv(testenv.DatabaseURLEnv) == "" {
		t.Skip("Postgres only (a backend ending itself); SQLite's failed begin is TestSQLiteBusyPastTheTimeoutIsUnavailable")
	}
	ctx := context.Background()
	st := testenv.NewStore(t)
	err := st.InTx(ctx, func(tx *store.Store) error {
		_ = store.GormDB(tx).Exec("SELECT pg_terminate_backend(pg_backend_pid())").Error
		return nil
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, models.ErrUnavailable, "%v", err)

	// fn's own raw driver error of a lost connection too.
	err = st.InTx(ctx, func(tx *store.Store) error { return driver.ErrBadConn })
	assert.ErrorIs(t, err, models.ErrUnavailable, "%v", err)
}
