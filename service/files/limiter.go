package files

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Upload rate limit per company: a burst of UploadBurst, refilled at
// UploadsPerMinute. Every replica limits on its own.
const (
	UploadsPerMinute = 60
	UploadBurst      = 20
	// limiterMaxCompanies bounds the limiter's memory.
	limiterMaxCompanies = 10_000
)

// keyedLimiter is a token bucket per key, bounded: when full it forgets
// the buckets that have refilled (forgetting them loses nothing), and only
// if that is not enough starts over.
type keyedLimiter struct {
	limit rate.Limit
	burst int
	max   int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newKeyedLimiter(limit rate.Limit, burst, max int) *keyedLimiter {
	return &keyedLimiter{limit: limit, burst: burst, max: max, buckets: map[string]*bucket{}}
}

// reserve takes a token for key at now; when none is left it takes nothing
// and returns how long until one is.
func (k *keyedLimiter) reserve(key string, now time.Time) (ok bool, retryAfter time.Duration) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.buckets[key]
	if b == nil {
		if len(k.buckets) >= k.max {
			k.prune(now)
		}
		b = &bucket{lim: rate.NewLimiter(k.limit, k.burst)}
		k.buckets[key] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

func (k *keyedLimiter) prune(now time.Time) {
	full := time.Duration(float64(k.burst) / float64(k.limit) * float64(time.Second))
	for key, b := range k.buckets {
		if now.Sub(b.seen) >= full {
			delete(k.buckets, key)
		}
	}
	if len(k.buckets) >= k.max {
		k.buckets = map[string]*bucket{}
	}
}
