package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"

	// The embedded Temporal server's SQLite persistence plugin: it imports
	// modernc.org/sqlite, which registers the "sqlite" driver. Linking it
	// into this test binary next to the store proves the two share one
	// registration (a second driver under that name would panic at init).
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
)

func TestStoreWorksBesideTemporalSQLitePlugin(t *testing.T) {
	assert.Contains(t, sql.Drivers(), "sqlite")

	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "with-temporal.db"), discard)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))

	_, c := signUp(t, s, "temporal")
	h := handle("t")
	_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "T", Handle: h})
	require.NoError(t, err)
	// Unique violations are recognised on this driver too.
	_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "T2", Handle: h})
	require.ErrorIs(t, err, models.ErrDuplicate)
}
