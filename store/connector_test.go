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
// no further; a refused call counts nothing; another account counts apart.
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
			wait, err := s.Companies().CountCall(ctx, scope, at, windows)
			switch {
			case errors.Is(err, store.ErrRateLimited):
				limited.Add(1)
				assert.Equal(t, time.Hour, wait, "until the first call is an hour old")
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

	_, err := s.Companies().CountCall(ctx, otherScope, at, windows)
	require.NoError(t, err, "another account counts apart")

	// An hour later the first five aged out of the hour: two more fit
	// under the day's 7, then the day is full until the first call is a
	// day old.
	next := at.Add(time.Hour)
	for range 2 {
		_, err := s.Companies().CountCall(ctx, scope, next, windows)
		require.NoError(t, err)
	}
	wait, err := s.Companies().CountCall(ctx, scope, next, windows)
	require.ErrorIs(t, err, store.ErrRateLimited)
	assert.Equal(t, 23*time.Hour, wait, "until the day's oldest call is 24 hours old")

	_, err = s.Companies().CountCall(ctx, store.ConglomerateScope{}, at, windows)
	require.ErrorIs(t, err, store.ErrNoScope)
}

// TestCountCallWindowsSlide: the burst around a full hour — 30
// calls just before 11:00 and 30 just after — is no longer 60 admitted
// within six minutes: no span of an hour ever holds more than the limit,
// and a refused call learns when the oldest call of the window ages out.
func TestCountCallWindowsSlide(t *testing.T) {
	s := testenv.NewStore(t)
	_, c := signUp(t, s, "ada")
	scope := s.SystemConglomerateScope(c.ID)
	windows := []store.RateWindow{{Name: "y/1h", Every: time.Hour, Limit: 30}}
	ctx := context.Background()
	start := time.Date(2026, 11, 24, 10, 57, 0, 0, time.UTC)
	admitted := 0
	var firstRefusal time.Duration
	for i := range 60 {
		at := start.Add(time.Duration(i) * 6 * time.Second) // 10:57:00 … 11:02:54
		wait, err := s.Companies().CountCall(ctx, scope, at, windows)
		switch {
		case err == nil:
			admitted++
		case errors.Is(err, store.ErrRateLimited):
			if firstRefusal == 0 {
				firstRefusal = wait
				assert.Equal(t, start.Add(time.Hour), at.Add(wait), "free again when the first call is an hour old")
			}
		default:
			require.NoError(t, err)
		}
	}
	assert.Equal(t, 30, admitted, "30 in any hour, even across 11:00")
	assert.Positive(t, firstRefusal)

	// Once the first call is an hour old, one more fits; the next waits
	// for the second.
	_, err := s.Companies().CountCall(ctx, scope, start.Add(time.Hour), windows)
	require.NoError(t, err)
	wait, err := s.Companies().CountCall(ctx, scope, start.Add(time.Hour), windows)
	require.ErrorIs(t, err, store.ErrRateLimited)
	assert.Equal(t, 6*time.Second, wait)
}
