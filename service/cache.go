package service

import (
	"sync"
	"time"
)

// Cache is a small concurrency-safe map whose entries expire. It keeps
// credential look-ups off the database on hot paths; its TTL is the longest
// a revocation made on another replica can go unnoticed.
type Cache[K comparable, V any] struct {
	ttl   time.Duration
	max   int
	clock func() time.Time

	mu      sync.RWMutex
	entries map[K]cacheEntry[V]
}

type cacheEntry[V any] struct {
	value V
	until time.Time
}

func NewCache[K comparable, V any](ttl time.Duration, max int, clock func() time.Time) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, max: max, clock: clock, entries: map[K]cacheEntry[V]{}}
}

func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[k]
	c.mu.RUnlock()
	if !ok || !c.clock().Before(e.until) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *Cache[K, V]) Set(k K, v V) {
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
			c.entries = map[K]cacheEntry[V]{}
		}
	}
	c.entries[k] = cacheEntry[V]{value: v, until: now.Add(c.ttl)}
}

func (c *Cache[K, V]) Delete(k K) {
	c.mu.Lock()
	delete(c.entries, k)
	c.mu.Unlock()
}

// DeleteWhere drops every entry whose value matches.
func (c *Cache[K, V]) DeleteWhere(match func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if match(e.value) {
			delete(c.entries, k)
		}
	}
}
