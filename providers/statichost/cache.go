package statichost

import (
	"container/list"
	"sync"
	"time"
)

// ttlCache keeps answers for ttl (0: not at all); found false caches a
// "none". It forgets everything when it holds more than max entries.
type ttlCache[V any] struct {
	ttl     time.Duration
	max     int
	mu      sync.Mutex
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v     V
	found bool
	until time.Time
}

func newTTLCache[V any](ttl time.Duration, max int) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, max: max, entries: map[string]ttlEntry[V]{}}
}

func (c *ttlCache[V]) get(key string) (v V, found, ok bool) {
	if c.ttl <= 0 {
		return v, false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, hit := c.entries[key]
	if !hit || !time.Now().Before(e.until) {
		return v, false, false
	}
	return e.v, e.found, true
}

func (c *ttlCache[V]) put(key string, v V, found bool) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[key] = ttlEntry[V]{v: v, found: found, until: time.Now().Add(c.ttl)}
}

func (c *ttlCache[V]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
}

// lru keeps immutable values by key up to a total cost, dropping the
// least recently used.
type lru[V any] struct {
	mu    sync.Mutex
	max   int64
	cost  int64
	order *list.List // front: most recent
	items map[string]*list.Element
}

type lruItem[V any] struct {
	key  string
	v    V
	cost int64
}

func newLRU[V any](max int64) *lru[V] {
	return &lru[V]{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruItem[V]).v, true
}

func (c *lru[V]) put(key string, v V, cost int64) {
	if cost > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok {
		return
	}
	c.items[key] = c.order.PushFront(&lruItem[V]{key: key, v: v, cost: cost})
	c.cost += cost
	for c.cost > c.max {
		last := c.order.Back()
		it := last.Value.(*lruItem[V])
		c.order.Remove(last)
		delete(c.items, it.key)
		c.cost -= it.cost
	}
}
