package gitrepo_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/gitrepo"
)

func TestEnsureSeedsOnceAndChecks(t *testing.T) {
	ctx := context.Background()
	s, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	id := uuid.NewString()
	ref, err := s.Ensure(ctx, id, "Shop", "sell things", true)
	require.NoError(t, err)
	require.NoError(t, s.Check(ctx, id))
	readme, err := s.ReadFile(ctx, id, "README.md")
	require.NoError(t, err)
	assert.Equal(t, "# Shop\n\nsell things\n", string(readme))
	_, err = s.ReadFile(ctx, id, "missing.txt")
	assert.ErrorIs(t, err, gitrepo.ErrNotFound)

	again, err := s.Ensure(ctx, id, "Other", "changed", true)
	require.NoError(t, err)
	assert.Equal(t, ref, again)
	readme, _ = s.ReadFile(ctx, id, "README.md")
	assert.Contains(t, string(readme), "Shop", "an existing repository is never re-seeded")

	require.NoError(t, s.Delete(ctx, id))
	assert.Error(t, s.Check(ctx, id))
	_, err = s.Ensure(ctx, id, "Shop", "x", true)
	require.NoError(t, err, "heals a deleted repository")
	require.NoError(t, s.Check(ctx, id))

	_, err = s.Ensure(ctx, "../../etc", "x", "x", true)
	assert.Error(t, err, "ids are UUIDs")
}

func TestImportResumeIsNotSeeded(t *testing.T) {
	ctx := context.Background()
	s, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	id := uuid.NewString()
	_, err = s.Ensure(ctx, id, "Imported", "", false)
	require.NoError(t, err)
	require.NoError(t, s.Check(ctx, id), "an empty repository is healthy")
	_, err = s.Ensure(ctx, id, "Imported", "", true)
	require.NoError(t, err)
	_, err = s.ReadFile(ctx, id, "README.md")
	assert.ErrorIs(t, err, gitrepo.ErrNotFound, "a later seed=true does not seed an existing repository")
}

func TestBrokenLeftoverIsRepairedAndConcurrentEnsure(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := gitrepo.New(root)
	require.NoError(t, err)
	id := uuid.NewString()
	require.NoError(t, os.MkdirAll(filepath.Join(root, id+".git", "objects"), 0o755)) // a crash left this
	assert.Error(t, s.Check(ctx, id))

	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { _, errs[i] = s.Ensure(ctx, id, "Shop", "x", true) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, s.Check(ctx, id))
	entries, _ := os.ReadDir(root)
	assert.Len(t, entries, 1, "one repository, no temporary leftovers")
}
