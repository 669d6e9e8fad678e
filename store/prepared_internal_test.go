package store

import (
	"context"
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
