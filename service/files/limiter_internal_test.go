package files

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/time/rate"
)

func TestKeyedLimiterIsBoundedAndForgetsOnlyRefilledBuckets(t *testing.T) {
	l := newKeyedLimiter(rate.Limit(1), 2, 3)
	t0 := time.Unix(1_000_000, 0)
	for _, k := range []string{"a", "a"} {
		ok, _ := l.reserve(k, t0)
		assert.True(t, ok)
	}
	ok, wait := l.reserve("a", t0)
	assert.False(t, ok, "burst spent")
	assert.Equal(t, time.Second, wait)

	l.reserve("b", t0)
	l.reserve("c", t0)
	// Full: "d" makes room by forgetting refilled buckets only; none has
	// refilled yet, so the map starts over rather than grow.
	l.reserve("d", t0)
	assert.LessOrEqual(t, len(l.buckets), 3)

	l = newKeyedLimiter(rate.Limit(1), 2, 3)
	l.reserve("old", t0)
	l.reserve("busy", t0.Add(9*time.Second))
	l.reserve("busy", t0.Add(9*time.Second))
	l.reserve("x", t0.Add(9*time.Second))
	l.reserve("new", t0.Add(10*time.Second))
	_, kept := l.buckets["busy"]
	_, forgotten := l.buckets["old"]
	assert.True(t, kept, "a bucket still refilling is kept")
	assert.False(t, forgotten, "a refilled bucket is forgotten (a fresh one is the same)")
	ok, _ = l.reserve("busy", t0.Add(10*time.Second))
	assert.True(t, ok, "busy refilled one token in a second")
	ok, _ = l.reserve("busy", t0.Add(10*time.Second))
	assert.False(t, ok, "and only one: its state survived the pruning")

	for i := range 100 {
		l.reserve(fmt.Sprint(i), t0.Add(20*time.Second))
	}
	assert.LessOrEqual(t, len(l.buckets), 3)
}
