package store_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/store"
	"holdco/testenv"
)

func TestMigrateIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := testenv.NewStore(t) // migrated once already

	require.NoError(t, s.Migrate(ctx))
	require.NoError(t, s.Migrate(ctx))

	applied, err := s.AppliedMigrations(ctx)
	require.NoError(t, err)
	assert.Equal(t, store.KnownMigrations(), applied)
	assert.Equal(t, "0001_identity_and_companies", applied[0])

	// The schema still works after the repeats.
	_, _ = signUp(t, s, "after-remigrate")
}

func TestMigrateFreshDatabase(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "fresh.db"), discard)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	applied, err := s.AppliedMigrations(ctx)
	require.NoError(t, err)
	assert.Empty(t, applied)

	require.NoError(t, s.Migrate(ctx))
	applied, err = s.AppliedMigrations(ctx)
	require.NoError(t, err)
	assert.Equal(t, store.KnownMigrations(), applied)
}

// Replicas start together and each migrates; only one may do the work and
// none may fail.
func TestMigrateFromSeveralProcessesAtOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")

	const replicas = 4
	stores := make([]*store.Store, replicas)
	for i := range stores {
		s, err := store.Open(ctx, path, discard)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
	}
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	for i, s := range stores {
		wg.Go(func() { errs[i] = s.Migrate(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	applied, err := stores[0].AppliedMigrations(ctx)
	require.NoError(t, err)
	assert.Equal(t, store.KnownMigrations(), applied)
}
