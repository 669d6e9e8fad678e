package testenv

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
)

func TestNewStoreIsMigratedAndIsolated(t *testing.T) {
	ctx := context.Background()
	a, b := NewStore(t), NewStore(t)

	for _, s := range []*store.Store{a, b} {
		require.NoError(t, s.Ping(ctx))
		applied, err := s.AppliedMigrations(ctx)
		require.NoError(t, err)
		assert.Equal(t, store.KnownMigrations(), applied)
	}
	if os.Getenv(DatabaseURLEnv) != "" {
		assert.Equal(t, store.DialectPostgres, a.Dialect())
	} else {
		assert.Equal(t, store.DialectSQLite, a.Dialect())
	}

	// The same platform-unique handle in both: each store is its own
	// database (or schema), so neither sees the other.
	for _, s := range []*store.Store{a, b} {
		_, c, err := s.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "t@example.com", NormalizedEmail: "t@example.com"}, "t")
		require.NoError(t, err)
		_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Same", Handle: "same-handle"})
		require.NoError(t, err)
	}
}

func TestPostgresSchemaIsDroppedAfterTheTest(t *testing.T) {
	base := os.Getenv(DatabaseURLEnv)
	if base == "" {
		t.Skip(DatabaseURLEnv + " not set")
	}
	var schema string
	t.Run("uses a schema", func(t *testing.T) {
		var dsn string
		dsn, schema = newPostgresSchema(t, base)
		s, err := store.Open(context.Background(), dsn, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		require.NoError(t, s.Migrate(context.Background()))
		require.True(t, schemaExists(t, base, schema))
	})
	assert.False(t, schemaExists(t, base, schema), "schema %s is left behind", schema)
}

func schemaExists(t *testing.T, base, schema string) bool {
	t.Helper()
	db, err := sql.Open("pgx", base)
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n))
	return n > 0
}
