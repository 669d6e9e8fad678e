package service

import (
	"sync"
	"time"
)

// ttlCache is a small concurrency-safe map whose entries expire. It keeps
// credential look-ups off the database on hot paths; its TTL is the longest
// a revocation made on another replica can go unnoticed.
type ttlCache[K comparable, V any] struct {
	ttl   time.Duration
	max   int
	clock func() time.Time

	mu      sync.RWMutex
	entries map[K]ttlEntry[V]
}

type ttlEntry[V any] struct {
	value V
	until time.Time
}

func newTTLCache[K comparable, V any](ttl time.Duration, max int, clock func() time.Time) *ttlCache[K, V] {
	return &ttlCache[K, V]{ttl: ttl, max: max, clock: clock, entries: map[K]ttlEntry[V]{}}
}

func (c *ttlCache[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || !c.clock().Before(e.until) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *ttlCache[K, V]) Set(k K, v V) {
	now := c.clock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		// Drop expired entries; if that is not enough, start over. Both are
		// rare and cost at most one database read per credential.
		for key, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= c.max {
			c.entries = map[K]ttlEntry[V]{}
		}
	}
	c.entries[k] = ttlEntry[V]{value: v, until: now.Add(c.ttl)}
}

func (c *ttlCache[K, V]) Delete(k K) {
	c.mu.Lock()
	delete(c.entries, k)
	c.mu.Unlock()
}

// DeleteWhere drops every entry whose value matches.
func (c *ttlCache[K, V]) DeleteWhere(match func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if match(e.value) {
			delete(c.entries, k)
		}
	}
}
