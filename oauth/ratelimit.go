package oauth

import (
	"sync"
	"time"
)

// bucketLimiter is a token bucket per key (a client address or a client
// id), per replica: generous enough that a legitimate flow (one
// registration, a few authorizations, one token request) never meets it,
// tight enough to slow a flood. Buckets refill at perMinute and hold burst.
type bucketLimiter struct {
	perSecond float64
	burst     float64
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

const maxBuckets = 100_000

func newLimiter(perMinute, burst int, now func() time.Time) *bucketLimiter {
	return &bucketLimiter{perSecond: float64(perMinute) / 60, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// allow takes one token from key's bucket; false when it is empty.
func (l *bucketLimiter) allow(key string) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.evict(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.perSecond)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// evict drops buckets that are full again (they limit nothing); if that
// frees nothing, it starts over.
func (l *bucketLimiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.perSecond >= l.burst {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxBuckets {
		l.buckets = map[string]*bucket{}
	}
}

// Limits are the endpoints' rate limits (requests per minute and burst),
// per replica.
type Limits struct {
	RegisterPerAddr, AuthorizePerAddr, AuthorizePerClient, TokenPerAddr, TokenPerClient Rate
}

// Rate is a refill rate and a burst.
type Rate struct{ PerMinute, Burst int }

// DefaultLimits are generous for legitimate clients (a hosted assistant
// sends every user's token request from a few addresses).
var DefaultLimits = Limits{
	RegisterPerAddr:    Rate{30, 30},
	AuthorizePerAddr:   Rate{120, 60},
	AuthorizePerClient: Rate{6000, 2000},
	TokenPerAddr:       Rate{600, 300},
	TokenPerClient:     Rate{6000, 2000},
}
