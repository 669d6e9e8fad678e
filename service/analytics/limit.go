package analytics

import (
	"context"
	"log/slog"
	"math"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"holdco/models"
	"holdco/store"
)

// Capture's flood guard: token buckets of events per client address and
// per public key, refilled at a rate per second, holding burstSeconds of
// it, counted once for the cluster without a database round trip per
// event. Each process keeps its own bucket per key in memory (the first
// line, and the whole limit while the database does not answer) and
// charges what it admits to the key's shared bucket (store.TakeTokens,
// table rate_buckets) in chunks: a process admits up to chunkSeconds of
// the rate per key on credit; once half of it is owed, one transaction in
// the background charges what is owed (the requests go on meanwhile), and
// a request that would pass the credit waits for that answer or charges
// itself. A short shared bucket refuses the key until the rest is there,
// with no database round trip meanwhile. So the database is touched at
// most twice per chunk of a key's events in a process (a client sending
// less than half a chunk never touches it), and the cluster admits no
// more than the shared bucket hands out plus at most one chunk per
// process. See docs/analytics.md.
const (
	burstSeconds = 10
	// chunkSeconds of the rate is a process's credit per key: events
	// admitted before they are charged to the shared bucket.
	chunkSeconds = 1
	// maxBuckets bounds a limiter's memory (a client cycling through
	// addresses): past it, full (idle) buckets are forgotten first.
	maxBuckets = 100_000
	// minSharedWait is the least a key refused by its shared bucket waits
	// before the process asks the database again.
	minSharedWait = 100 * time.Millisecond
	// sharedTimeout bounds one charge; after a failed one the limiter
	// counts in memory only for sharedBackoff.
	sharedTimeout = 2 * time.Second
	sharedBackoff = 5 * time.Second
)

// Defaults of Options' rates, in events per second.
const (
	DefaultAddressRate = 100
	DefaultKeyRate     = 1000
)

type bucket struct {
	tokens float64
	at     time.Time
	// owed is the events admitted on credit and not yet charged to the
	// shared bucket (at most a chunk); below zero, tokens taken from it
	// and not yet used (what a refused request had already paid).
	owed int
	// blockedUntil is when the shared bucket holds what the key asked
	// for; until then the key is refused without asking.
	blockedUntil time.Time
	// charging is closed when the charge in flight ends (nil: none).
	charging chan struct{}
}

// sharedTake takes up to n tokens of key's shared bucket at at
// (store.TakeTokens).
type sharedTake func(ctx context.Context, key string, n int, at time.Time) (granted int, retryAfter time.Duration, err error)

// limiter is a set of token buckets; a nil limiter lets everything
// through.
type limiter struct {
	rate, burst float64
	chunk       int
	// shared charges the cluster's bucket (nil: this process's memory
	// only); logger tells when it fails.
	shared  sharedTake
	logger  *slog.Logger
	charges atomic.Int64 // charges made, for tests
	mu      sync.Mutex
	buckets map[string]*bucket
	// localUntil: the shared bucket failed; until then memory only.
	localUntil time.Time
}

func newLimiter(perSecond int) *limiter {
	if perSecond <= 0 {
		return nil
	}
	return &limiter{rate: float64(perSecond), burst: float64(perSecond * burstSeconds), chunk: max(1, perSecond*chunkSeconds), buckets: map[string]*bucket{}}
}

// sharedLimiter is newLimiter counted once for the cluster in the store's
// bucket name.
func sharedLimiter(perSecond int, st *store.Store, name string, logger *slog.Logger) *limiter {
	l := newLimiter(perSecond)
	if l == nil || st == nil {
		return l
	}
	b := store.TokenBucket{Name: name, PerMinute: l.rate * 60, Burst: l.burst}
	l.shared = func(ctx context.Context, key string, n int, at time.Time) (int, time.Duration, error) {
		return st.TakeTokens(ctx, b, key, n, at)
	}
	l.logger = logger.With("limit", name)
	return l
}

// take removes n events from key's bucket (a request costs at most the
// burst, so a large batch can pass a full bucket), all or none, and owes
// them to the shared bucket: past half the credit a charge starts in the
// background; a request that would pass the credit waits for the charge
// in flight or charges itself. When refused it says how long until the
// events would fit. Its only error is ctx's (the request is gone): a
// failing database leaves the limit to this process's bucket.
func (l *limiter) take(ctx context.Context, key string, n int, now time.Time) (bool, time.Duration, error) {
	if l == nil || n <= 0 {
		return true, 0, nil
	}
	cost := math.Min(float64(n), l.burst)
	c := int(cost)
	l.mu.Lock()
	for {
		b := l.refill(key, now)
		if now.Before(b.blockedUntil) {
			wait := b.blockedUntil.Sub(now) // read under l.mu
			l.mu.Unlock()
			return false, wait, nil
		}
		if b.tokens < cost {
			wait := time.Duration((cost - b.tokens) / l.rate * float64(time.Second)) // read under l.mu
			l.mu.Unlock()
			return false, wait, nil
		}
		local := l.shared == nil || now.Before(l.localUntil)
		if local || b.owed+c <= l.chunk {
			b.tokens -= cost
			// Owed past a chunk only while the database fails: forgiven.
			b.owed = min(b.owed+c, l.chunk)
			if !local && b.charging == nil && 2*b.owed >= l.chunk {
				want, ch := b.owed, make(chan struct{})
				b.charging = ch
				go l.chargeAhead(key, b, want, now, ch)
			}
			l.mu.Unlock()
			return true, 0, nil
		}
		if ch := b.charging; ch != nil { // a charge in flight: its answer decides
			l.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return false, 0, ctx.Err()
			}
			l.mu.Lock()
			continue
		}
		if over := b.owed + c - int(l.burst); over > 0 {
			// A batch near the burst with a few events owed from before
			// would ask the shared bucket for more than it ever holds,
			// and be refused however long the key was idle: the owed
			// (at most a chunk, counted in this process's bucket) are
			// forgiven as far as they are over.
			b.owed -= over
		}
		want := b.owed + c
		ch := make(chan struct{})
		b.charging = ch
		l.mu.Unlock()
		granted, wait, err := l.charge(ctx, key, want, now)
		l.mu.Lock()
		if err != nil && ctx.Err() != nil {
			b.charging = nil
			close(ch)
			l.mu.Unlock()
			return false, 0, ctx.Err()
		}
		l.settle(b, ch, want, granted, wait, err, now)
		// Decided again: paid in full it passes on credit, short it is
		// blocked, failed it counts in memory.
	}
}

// chargeAhead charges what key owes while its requests go on on credit.
func (l *limiter) chargeAhead(key string, b *bucket, want int, now time.Time, ch chan struct{}) {
	granted, wait, err := l.charge(context.Background(), key, want, now)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.settle(b, ch, want, granted, wait, err, now)
}

// charge takes up to n tokens of key's shared bucket.
func (l *limiter) charge(ctx context.Context, key string, n int, now time.Time) (int, time.Duration, error) {
	l.charges.Add(1)
	ctx, cancel := context.WithTimeout(ctx, sharedTimeout)
	defer cancel()
	return l.shared(ctx, key, n, now)
}

// settle ends a charge of want tokens for b (l.mu held): what was granted
// is paid; short, the key is refused until the rest is there; failed, the
// limiter counts in memory for the backoff.
func (l *limiter) settle(b *bucket, ch chan struct{}, want, granted int, wait time.Duration, err error, now time.Time) {
	b.charging = nil
	close(ch)
	if err != nil {
		if !now.Before(l.localUntil) {
			l.localUntil = now.Add(sharedBackoff)
			l.logger.Warn("analytics flood guard: the shared bucket failed; counting in this process only", "for", sharedBackoff, "err", err)
		}
		return
	}
	b.owed -= granted
	if granted < want {
		b.blockedUntil = now.Add(max(wait, minSharedWait))
	}
}

// empty reports whether key's bucket cannot take a single event (checked
// before the body is even decoded).
func (l *limiter) empty(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return false, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		return false, 0
	}
	if now.Before(b.blockedUntil) {
		return true, b.blockedUntil.Sub(now)
	}
	tokens := math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	if tokens >= 1 {
		return false, 0
	}
	return true, time.Duration((1 - tokens) / l.rate * float64(time.Second))
}

// refill returns key's bucket brought up to now (l.mu held).
func (l *limiter) refill(key string, now time.Time) *bucket {
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.forget(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
		return b
	}
	if now.After(b.at) {
		b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
		b.at = now
	}
	return b
}

// forget drops the buckets that have refilled and are not blocked (a new
// bucket starts full, so nothing changes for their clients but the events
// they owed the shared bucket, less than a chunk, which are forgiven); if
// that frees too little, half of the rest, in no order. A bucket being
// charged stays.
func (l *limiter) forget(now time.Time) {
	for k, b := range l.buckets {
		if b.charging == nil && !now.Before(b.blockedUntil) && b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k, b := range l.buckets {
		if len(l.buckets) < maxBuckets/2 {
			break
		}
		if b.charging == nil {
			delete(l.buckets, k)
		}
	}
}

// addressKey is the bucket of a client address: an IPv6 address counts
// by its /64 (one host usually has the whole prefix).
func addressKey(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// rateLimited is capture's 429: code rate_limited with the seconds to
// wait in retry_after_seconds (the REST adapter's Retry-After).
func rateLimited(what string, wait time.Duration) error {
	secs := int64(math.Ceil(wait.Seconds()))
	secs = max(secs, 1)
	return models.Errorf(models.CodeRateLimited, "Too many analytics events from %s; retry in %d s.", what, secs).
		With("retry_after_seconds", secs)
}
