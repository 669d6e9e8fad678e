package store_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/store"
)

var discard = slog.New(slog.DiscardHandler)

func TestOpenSQLiteCreatesDirectory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "holdco.db")

	s, err := store.Open(ctx, "sqlite:"+path, discard)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	assert.Equal(t, store.DialectSQLite, s.Dialect())
	require.NoError(t, s.Ping(ctx))
	_, err = os.Stat(path)
	require.NoError(t, err, "database file is created")
}

func TestOpenRefusesUnusableDSNs(t *testing.T) {
	ctx := context.Background()
	for _, dsn := range []string{"", "  ", ":memory:", "sqlite:", "file::memory:?cache=shared&mode=memory"} {
		_, err := store.Open(ctx, dsn, discard)
		assert.Error(t, err, "dsn %q", dsn)
	}
}

func TestOpenPostgresErrorsNameTheProblemWithoutThePassword(t *testing.T) {
	ctx := context.Background()
	const secret = "s3cr3t-pw"

	_, err := store.Open(ctx, "postgres://holdco:"+secret+"@db.internal:notaport/holdco", discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid postgres URL")
	assert.NotContains(t, err.Error(), secret)

	// Port 1 on loopback: nothing listens, the connection is refused at once.
	_, err = store.Open(ctx, "postgresql://holdco:"+secret+"@127.0.0.1:1/holdco?sslmode=disable", discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot reach postgres at 127.0.0.1:1")
	assert.NotContains(t, err.Error(), secret)
}

func TestOpenPostgresRefusedLoginIsReported(t *testing.T) {
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		t.Skip("TEST_DATABASE_URL not set")
	}
	_, err := store.Open(context.Background(), "postgres://127.0.0.1:5432/holdco_no_such_database_x?sslmode=disable", discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "postgres at 127.0.0.1:5432 refused the connection")
}

// The SQLite store keeps its statements prepared (GORM's PrepareStmt); a
// store opened and closed leaves no goroutine behind, which GORM's
// statement cache would with a TTL of its own.
func TestOpenCloseLeavesNoGoroutines(t *testing.T) {
	ctx := context.Background()
	for range 3 {
		s, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "holdco.db"), discard)
		require.NoError(t, err)
		require.NoError(t, s.Migrate(ctx))
		require.NoError(t, s.Ping(ctx))
		require.NoError(t, s.Close())
	}
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	assert.NotContains(t, string(buf), "gorm.io/gorm/internal/lru", "a statement cache's expiry goroutine outlives its store")
}
