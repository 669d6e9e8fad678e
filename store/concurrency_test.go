package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
)

// Many goroutines each run a read-then-write transaction on one SQLite
// file. Each names its company after the count it read, so two
// transactions that overlapped would pick the same handle and one would
// fail: zero failures and 0..n-1 handles prove the transactions are
// serialized and none hits SQLITE_BUSY.
func TestSQLiteConcurrentReadThenWriteTransactions(t *testing.T) {
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(t.TempDir(), "busy.db"), discard)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))
	_, c := signUp(t, s, "busy")
	prefix := handle("n")

	const workers = 96
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []error
	)
	for range workers {
		wg.Go(func() {
			err := s.InTx(ctx, func(tx *store.Store) error {
				list, err := tx.Companies().ListCompanies(ctx, s.SystemConglomerateScope(c.ID), true)
				if err != nil {
					return err
				}
				_, err = tx.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{
					Name:   "Concurrent",
					Handle: fmt.Sprintf("%s-%03d", prefix, len(list)),
				})
				return err
			})
			if err != nil {
				mu.Lock()
				failures = append(failures, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Empty(t, failures)

	list, err := s.Companies().ListCompanies(ctx, s.SystemConglomerateScope(c.ID), true)
	require.NoError(t, err)
	require.Len(t, list, workers)
	handles := map[string]bool{}
	for _, co := range list {
		handles[co.Handle] = true
	}
	for i := range workers {
		assert.True(t, handles[fmt.Sprintf("%s-%03d", prefix, i)], "handle %d", i)
	}
}
