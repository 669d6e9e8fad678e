package store

import (
	"context"
	"sync"
	"time"
)

// writeGate queues the process's SQLite writes before they BEGIN (see
// Store.writeGate). One writer holds it at a time; the others wait in
// two first-come-first-served queues: a request's write (the default)
// before background work's (Background: workflow activities, the
// analytics folder). A user's message no longer waits behind the
// bookkeeping of every agent turn under way, which made send_message's
// slowest answers tens of milliseconds long (docs/benchmarks.md, Agent
// turns). A background write that has waited backgroundBound goes in
// arrival order again (before the requests' writes that came after it,
// never before earlier ones), so a stream of requests does not starve it.
type writeGate struct {
	mu   sync.Mutex
	held bool
	// queues are the waiters, oldest first: [0] requests, [1] background.
	queues [2][]*gateWaiter
	now    func() time.Time // tests
}

type gateWaiter struct {
	ready chan struct{} // closed when the gate is handed to the waiter
	since time.Time
}

// backgroundBound is how long a background write lets requests' writes
// that came after it go first; then it goes in arrival order.
const backgroundBound = 500 * time.Millisecond

func newWriteGate() *writeGate { return &writeGate{now: time.Now} }

// backgroundKey marks a context whose writes are background work.
type backgroundKey struct{}

// Background marks ctx's writes as background work: on SQLite they wait
// behind requests' writes for the write gate (at most backgroundBound
// longer than they would in arrival order). Workflow activities and the
// analytics folder run with it; nothing else changes.
func Background(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// IsBackground reports whether ctx was marked with Background.
func IsBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

// enter waits until the gate is the caller's and returns the func that
// leaves it, or gives up after wait (or when ctx ends) and returns a
// no-op: the caller goes on to SQLite's own busy handler, as without the
// gate.
func (g *writeGate) enter(ctx context.Context, background bool, wait time.Duration) func() {
	g.mu.Lock()
	if !g.held {
		g.held = true
		g.mu.Unlock()
		return g.leave
	}
	q := 0
	if background {
		q = 1
	}
	w := &gateWaiter{ready: make(chan struct{}), since: g.now()}
	g.queues[q] = append(g.queues[q], w)
	g.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.ready:
		return g.leave
	case <-t.C:
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-w.ready: // handed over while giving up: it is the caller's
		return g.leave
	default:
	}
	for i, x := range g.queues[q] {
		if x == w {
			g.queues[q] = append(g.queues[q][:i], g.queues[q][i+1:]...)
			break
		}
	}
	return func() {}
}

// leave hands the gate to the next waiter (see writeGate) or frees it.
func (g *writeGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	q := -1
	switch {
	case len(g.queues[1]) > 0 && (len(g.queues[0]) == 0 || g.queues[1][0].since.Before(g.queues[0][0].since) &&
		g.now().Sub(g.queues[1][0].since) >= backgroundBound):
		q = 1
	case len(g.queues[0]) > 0:
		q = 0
	}
	if q < 0 {
		g.held = false
		return
	}
	w := g.queues[q][0]
	g.queues[q][0] = nil
	g.queues[q] = g.queues[q][1:]
	close(w.ready) // the gate stays held: it is w's now
}
