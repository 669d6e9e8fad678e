package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/store"
	"holdco/testenv"
)

// Two processes on one database: a lease has one holder until it expires
// or is released; the holder renews it; after expiry the other takes it.
func TestLeaseHasOneHolderUntilExpiryOrRelease(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewReplicaStores(t, 2)
	a, b := st[0], st[1]
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	const ttl = 30 * time.Second

	ok, err := a.TakeLease(ctx, "turns", "proc-a", t0, ttl)
	require.NoError(t, err)
	assert.True(t, ok, "a free lease is taken")
	ok, err = b.TakeLease(ctx, "turns", "proc-b", t0.Add(time.Second), ttl)
	require.NoError(t, err)
	assert.False(t, ok, "a live lease of another holder is not taken")
	ok, err = b.TakeLease(ctx, "blobs", "proc-b", t0, ttl)
	require.NoError(t, err)
	assert.True(t, ok, "leases are per name")

	ok, err = a.TakeLease(ctx, "turns", "proc-a", t0.Add(20*time.Second), ttl)
	require.NoError(t, err)
	assert.True(t, ok, "the holder renews")
	ok, err = b.TakeLease(ctx, "turns", "proc-b", t0.Add(40*time.Second), ttl)
	require.NoError(t, err)
	assert.False(t, ok, "the renewal moved the expiry past the first one")
	h, err := b.LeaseHolder(ctx, "turns", t0.Add(40*time.Second))
	require.NoError(t, err)
	assert.Equal(t, "proc-a", h)

	// a stops renewing (it died): at the expiry b takes over.
	ok, err = b.TakeLease(ctx, "turns", "proc-b", t0.Add(50*time.Second), ttl)
	require.NoError(t, err)
	assert.True(t, ok, "an expired lease is taken")
	ok, err = a.TakeLease(ctx, "turns", "proc-a", t0.Add(51*time.Second), ttl)
	require.NoError(t, err)
	assert.False(t, ok, "the old holder lost it")

	// A release lets the other take it at once; releasing someone else's
	// lease does nothing.
	require.NoError(t, a.ReleaseLease(ctx, "turns", "proc-a"))
	h, err = a.LeaseHolder(ctx, "turns", t0.Add(52*time.Second))
	require.NoError(t, err)
	assert.Equal(t, "proc-b", h)
	require.NoError(t, b.ReleaseLease(ctx, "turns", "proc-b"))
	ok, err = a.TakeLease(ctx, "turns", "proc-a", t0.Add(53*time.Second), ttl)
	require.NoError(t, err)
	assert.True(t, ok, "a released lease is taken before its expiry")
}

// Many tries at once from two processes: exactly one holds the lease.
func TestLeaseRaceHasOneWinner(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewReplicaStores(t, 2)
	t0 := time.Now().UTC()
	var (
		mu      sync.Mutex
		winners []string
		wg      sync.WaitGroup
	)
	for i := range 8 {
		wg.Go(func() {
			holder := []string{"a", "b", "c", "d", "e", "f", "g", "h"}[i]
			ok, err := st[i%2].TakeLease(ctx, "race", holder, t0, time.Minute)
			assert.NoError(t, err)
			if ok {
				mu.Lock()
				winners = append(winners, holder)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, winners, 1)
	h, err := st[0].LeaseHolder(ctx, "race", t0)
	require.NoError(t, err)
	assert.Equal(t, winners[0], h)
}

// Two processes share one bucket: a burst of 20 is 20 across both, not 20
// each; it refills at the rate for both; the wait says when a token is
// back.
func TestTokenBucketIsSharedByReplicas(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewReplicaStores(t, 2)
	b := store.TokenBucket{Name: "test/uploads", PerMinute: 60, Burst: 20}
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	taken := 0
	for i := range 40 {
		_, err := st[i%2].TakeToken(ctx, b, "company-1", t0)
		if err == nil {
			taken++
			continue
		}
		require.ErrorIs(t, err, store.ErrRateLimited)
	}
	assert.Equal(t, 20, taken, "the burst is counted once for both replicas")

	wait, err := st[1].TakeToken(ctx, b, "company-1", t0)
	require.ErrorIs(t, err, store.ErrRateLimited)
	assert.Equal(t, time.Second, wait, "one token a second at 60 a minute")
	_, err = st[0].TakeToken(ctx, b, "company-2", t0)
	require.NoError(t, err, "buckets are per key")

	// 3 s later 3 tokens are back, for either replica.
	for i := range 3 {
		_, err := st[i%2].TakeToken(ctx, b, "company-1", t0.Add(3*time.Second))
		require.NoError(t, err)
	}
	_, err = st[0].TakeToken(ctx, b, "company-1", t0.Add(3*time.Second))
	require.ErrorIs(t, err, store.ErrRateLimited)

	// A full bucket's row goes with the next request of the limit; the
	// key starts full again.
	later := t0.Add(time.Hour)
	for range 20 {
		_, err := st[1].TakeToken(ctx, b, "company-1", later)
		require.NoError(t, err)
	}
}

// Concurrent takes from two processes never hand out more than the burst.
func TestTokenBucketConcurrentTakesStayWithinBurst(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewReplicaStores(t, 2)
	b := store.TokenBucket{Name: "test/register", PerMinute: 30, Burst: 30}
	at := time.Now().UTC().Truncate(time.Second)
	taken := grantedConcurrently(6, 10, func(i int) int {
		_, err := st[i%2].TakeToken(ctx, b, "203.0.113.7", at)
		if err != nil && !errors.Is(err, store.ErrRateLimited) {
			t.Errorf("take: %v", err)
		}
		if err != nil {
			return 0
		}
		return 1
	})
	assert.Equal(t, 30, taken)
}

// grantedConcurrently runs workers goroutines that each take rounds times
// (take is given the worker's number) and sums what the takes granted.
func grantedConcurrently(workers, rounds int, take func(worker int) int) int {
	var (
		mu      sync.Mutex
		granted int
		wg      sync.WaitGroup
	)
	for i := range workers {
		wg.Go(func() {
			for range rounds {
				got := take(i)
				mu.Lock()
				granted += got
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return granted
}

// TakeTokens takes what is left, up to n, and says when the rest is
// there; the bucket refills for both replicas alike.
func TestTakeTokensGrantsUpToWhatIsLeft(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewReplicaStores(t, 2)
	b := store.TokenBucket{Name: "test/capture", PerMinute: 600, Burst: 100} // 10 a second
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

	got, wait, err := st[0].TakeTokens(ctx, b, "203.0.113.9", 60, t0)
	require.NoError(t, err)
	assert.Equal(t, 60, got)
	assert.Zero(t, wait)
	got, wait, err = st[1].TakeTokens(ctx, b, "203.0.113.9", 60, t0)
	require.NoError(t, err)
	assert.Equal(t, 40, got, "the other replica gets what is left")
	assert.Equal(t, 2*time.Second, wait, "20 more at 10 a second")
	got, wait, err = st[0].TakeTokens(ctx, b, "203.0.113.9", 5, t0)
	require.NoError(t, err)
	assert.Zero(t, got, "an empty bucket grants nothing, without an error")
	assert.Equal(t, 500*time.Millisecond, wait)

	got, wait, err = st[0].TakeTokens(ctx, b, "203.0.113.9", 500, t0.Add(1500*time.Millisecond))
	require.NoError(t, err)
	assert.Equal(t, 15, got, "1.5 s refilled 15")
	assert.Equal(t, 10*time.Second, wait, "the wait is for at most the burst")
	got, _, err = st[1].TakeTokens(ctx, b, "203.0.113.9", 0, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Zero(t, got)

	// TakeToken is TakeTokens of one.
	_, err = st[1].TakeToken(ctx, b, "203.0.113.9", t0.Add(1500*time.Millisecond))
	require.ErrorIs(t, err, store.ErrRateLimited)
}

// Takers of chunks on two processes at once never get more than the bucket
// holds, and they get all of it.
func TestTakeTokensConcurrentTakersNeverExceedTheBucket(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewReplicaStores(t, 2)
	b := store.TokenBucket{Name: "test/capture", PerMinute: 6000, Burst: 1000}
	at := time.Now().UTC().Truncate(time.Second)
	granted := grantedConcurrently(8, 12, func(i int) int {
		got, _, err := st[i%2].TakeTokens(ctx, b, "site-key", 7+i*5, at)
		assert.NoError(t, err)
		return got
	})
	// 8 takers ask for 12 × (7+5i) each: 2,352 in all, past the burst.
	assert.Equal(t, 1000, granted)
}

// The pool settings reach the Postgres pool; zero keeps the defaults.
func TestPoolSettingsApplyOnPostgres(t *testing.T) {
	dsn := testenv.DatabaseURL(t)
	if dsn == "" {
		t.Skip("TEST_DATABASE_URL not set (SQLite keeps one writer)")
	}
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, nil, store.WithPool(store.Pool{MaxConns: 7, MaxIdleConns: 3, ConnMaxLifetime: time.Minute}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	db, err := store.GormDB(s).DB()
	require.NoError(t, err)
	assert.Equal(t, 7, db.Stats().MaxOpenConnections)

	d, err := store.Open(ctx, dsn, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	db, err = store.GormDB(d).DB()
	require.NoError(t, err)
	assert.Equal(t, store.DefaultMaxConns, db.Stats().MaxOpenConnections)
}
