package analytics

import (
	"math"
	"net/netip"
	"sync"
	"time"

	"holdco/models"
)

// Capture's flood guard: token buckets of events per client address and
// per public key, refilled at a rate per second, holding burstSeconds of
// it. They are counted in this process's memory (a cheap first line, no
// database round trip): behind a load balancer spreading one client over
// N api replicas, the client gets up to N times the rate. See
// docs/analytics.md.
const (
	burstSeconds = 10
	// maxBuckets bounds a limiter's memory (a client cycling through
	// addresses): past it, full (idle) buckets are forgotten first.
	maxBuckets = 100_000
)

// Defaults of Options' rates, in events per second.
const (
	DefaultAddressRate = 100
	DefaultKeyRate     = 1000
)

type bucket struct {
	tokens float64
	at     time.Time
}

// limiter is a set of token buckets; a nil limiter lets everything
// through.
type limiter struct {
	rate, burst float64
	mu          sync.Mutex
	buckets     map[string]*bucket
}

func newLimiter(perSecond int) *limiter {
	if perSecond <= 0 {
		return nil
	}
	return &limiter{rate: float64(perSecond), burst: float64(perSecond * burstSeconds), buckets: map[string]*bucket{}}
}

// take removes n events from key's bucket (a request costs at most the
// burst, so a large batch can pass a full bucket), all or none. When
// refused it says how long until they would fit.
func (l *limiter) take(key string, n int, now time.Time) (bool, time.Duration) {
	if l == nil || n <= 0 {
		return true, 0
	}
	cost := math.Min(float64(n), l.burst)
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.refill(key, now)
	if b.tokens >= cost {
		b.tokens -= cost
		return true, 0
	}
	return false, time.Duration((cost - b.tokens) / l.rate * float64(time.Second))
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

// forget drops the buckets that have refilled (a new bucket starts full,
// so nothing changes for their clients); if that frees too little, half
// of the rest, in no order.
func (l *limiter) forget(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < maxBuckets/2 {
			break
		}
		delete(l.buckets, k)
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
