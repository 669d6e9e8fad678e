package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openPrepared(t *testing.T) (*Store, *preparedPool) {
	t.Helper()
	s, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "holdco.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	p, ok := s.db.ConnPool.(*preparedPool)
	require.True(t, ok, "the SQLite store runs its statements through preparedPool, not %T", s.db.ConnPool)
	return s, p
}

func (p *preparedPool) cached(query string) *preparedStmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if el, ok := p.stmts[query]; ok {
		return el.Value.(*preparedStmt)
	}
	return nil
}

// A statement first met inside a transaction is prepared on the pool and
// kept: the next transaction runs the same statement instead of preparing
// it again (gorm's PrepareStmt prepared it on the transaction, and again in
// every later one).
func TestStatementsOfTransactionsStayPrepared(t *testing.T) {
	ctx := context.Background()
	s, p := openPrepared(t)
	const q = "SELECT ? + 1"
	var stmts []*preparedStmt
	for i := range 3 {
		require.NoError(t, s.InTx(ctx, func(tx *Store) error {
			var n int
			if err := tx.db.WithContext(ctx).Raw(q, i).Scan(&n).Error; err != nil {
				return err
			}
			assert.Equal(t, i+1, n)
			return nil
		}))
		ps := p.cached(q)
		require.NotNil(t, ps, "kept after transaction %d", i)
		require.NotNil(t, ps.stmt)
		stmts = append(stmts, ps)
	}
	assert.Same(t, stmts[0], stmts[1])
	assert.Same(t, stmts[0], stmts[2])
	// The same statement outside a transaction is the same one too.
	var n int
	require.NoError(t, s.db.WithContext(ctx).Raw(q, 41).Scan(&n).Error)
	assert.Equal(t, 42, n)
	assert.Same(t, stmts[0], p.cached(q))
}

// A statement that names a table the transaction created cannot be
// prepared on another connection: it runs unprepared, and once the table is
// committed it is prepared like any other.
func TestStatementOnATableOfTheTransactionRunsUnprepared(t *testing.T) {
	ctx := context.Background()
	s, p := openPrepared(t)
	const insert = "INSERT INTO prepared_probe (v) VALUES (?)"
	require.NoError(t, s.InTx(ctx, func(tx *Store) error {
		if err := tx.db.WithContext(ctx).Exec("CREATE TABLE prepared_probe (v INTEGER)").Error; err != nil {
			return err
		}
		return tx.db.WithContext(ctx).Exec(insert, 1).Error
	}))
	assert.Nil(t, p.cached(insert), "not kept while the table was the transaction's")
	require.NoError(t, s.InTx(ctx, func(tx *Store) error { return tx.db.WithContext(ctx).Exec(insert, 2).Error }))
	assert.NotNil(t, p.cached(insert))
	var n int
	require.NoError(t, s.db.WithContext(ctx).Raw("SELECT count(*) FROM prepared_probe").Scan(&n).Error)
	assert.Equal(t, 2, n)

	// A statement that fails to prepare fails as the statement.
	err := s.InTx(ctx, func(tx *Store) error {
		return tx.db.WithContext(ctx).Exec("INSERT INTO no_such_table VALUES (1)").Error
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no such table")
}

// Past its bound the cache closes the least recently used statements, also
// while other callers run them; every statement still answers.
func TestPreparedStatementsEvictedUnderUse(t *testing.T) {
	ctx := context.Background()
	s, p := openPrepared(t)
	p.max = 3
	var wg sync.WaitGroup
	errs := make(chan error, 8*40)
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				q := fmt.Sprintf("SELECT %d + ?", (g+i)%7)
				var n int
				var err error
				if i%2 == 0 {
					err = s.db.WithContext(ctx).Raw(q, 1).Scan(&n).Error
				} else {
					err = s.InTx(ctx, func(tx *Store) error { return tx.db.WithContext(ctx).Raw(q, 1).Scan(&n).Error })
				}
				if err == nil && n != (g+i)%7+1 {
					err = fmt.Errorf("%s = %d", q, n)
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	p.mu.Lock()
	assert.LessOrEqual(t, p.order.Len(), 3)
	assert.Len(t, p.stmts, p.order.Len())
	p.mu.Unlock()
}

// A withMemoryTemp transaction keeps SQLite's temporary storage in memory
// (the analytics writer's statement journals) and gives its connection
// back with the default, whether it commits or rolls back; the store's
// other transactions and statements keep the default.
func TestMemoryTempIsTheTransactionsOnly(t *testing.T) {
	ctx := context.Background()
	s, _ := openPrepared(t)
	sqlDB, err := s.db.DB()
	require.NoError(t, err)
	// One connection: the one the transaction had is the one read after.
	sqlDB.SetMaxOpenConns(1)
	tempStore := func(db *Store) int {
		var n int
		require.NoError(t, db.db.WithContext(ctx).Raw("PRAGMA temp_store").Scan(&n).Error)
		return n
	}
	require.Equal(t, 0, tempStore(s), "the store's default")
	failed := errors.New("rolled back")
	for _, end := range []error{nil, failed} {
		err := s.InTx(withMemoryTemp(ctx), func(tx *Store) error {
			assert.Equal(t, 2, tempStore(tx), "in memory inside the transaction")
			if err := tx.db.WithContext(ctx).Exec("CREATE TABLE IF NOT EXISTS temp_probe (n INTEGER)").Error; err != nil {
				return err
			}
			return end
		})
		require.ErrorIs(t, err, end)
		assert.Equal(t, 0, tempStore(s), "the default again after the transaction (ended with %v)", end)
		require.NoError(t, s.InTx(ctx, func(tx *Store) error {
			assert.Equal(t, 0, tempStore(tx), "another transaction keeps the default")
			return nil
		}))
	}
	var tables int
	require.NoError(t, s.db.Raw("SELECT COUNT(*) FROM sqlite_master WHERE name = 'temp_probe'").Scan(&tables).Error)
	assert.Equal(t, 1, tables, "the committed transaction's write is kept")
}
