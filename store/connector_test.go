package store_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/store"
	"holdco/testenv"
)

// TestCountCallAdmitsExactlyTheLimitUnderConcurrency: calls racing from
// many goroutines (as from many replicas) are admitted up to the limit and
// no further; a refused call counts nothing; another window starts afresh
// and the old window's row is deleted.
func TestCountCallAdmitsExactlyTheLimitUnderConcurrency(t *testing.T) {
	s := testenv.NewStore(t)
	_, c := signUp(t, s, "ada")
	_, other := signUp(t, s, "bob")
	scope, otherScope := s.SystemConglomerateScope(c.ID), s.SystemConglomerateScope(other.ID)
	windows := []store.RateWindow{{Name: "x/1h", Every: time.Hour, Limit: 5}, {Name: "x/24h", Every: 24 * time.Hour, Limit: 7}}
	at := time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)
	ctx := context.Background()

	var admitted, limited atomic.Int64
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			wait, err := s.CountCall(ctx, scope, at, windows)
			switch {
			case errors.Is(err, store.ErrRateLimited):
				limited.Add(1)
				assert.Equal(t, 30*time.Minute, wait, "until the hour's window ends")
			case err != nil:
				t.Error(err)
			default:
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 5, admitted.Load())
	assert.EqualValues(t, 7, limited.Load())

	_, err := s.CountCall(ctx, otherScope, at, windows)
	require.NoError(t, err, "another account counts apart")

	// The next hour: two more fit under the day's 7, then the day is full.
	next := at.Add(time.Hour)
	for range 2 {
		_, err := s.CountCall(ctx, scope, next, windows)
		require.NoError(t, err)
	}
	wait, err := s.CountCall(ctx, scope, next, windows)
	require.ErrorIs(t, err, store.ErrRateLimited)
	assert.Equal(t, 24*time.Hour-(next.Sub(next.Truncate(24*time.Hour))), wait, "until the day's window ends")

	_, err = s.CountCall(ctx, store.ConglomerateScope{}, at, windows)
	require.ErrorIs(t, err, store.ErrNoScope)
}
