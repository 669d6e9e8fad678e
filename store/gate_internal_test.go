package store

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gateTestBound bounds a wait for something that happens at once on an
// idle machine (a package test cannot use testenv's bound: testenv
// imports the store).
const gateTestBound = 30 * time.Second

// queued waits until the gate's queues hold requests and background
// waiters.
func queued(t *testing.T, g *writeGate, requests, background int) {
	t.Helper()
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.queues[0]) == requests && len(g.queues[1]) == background
	}, gateTestBound, time.Millisecond)
}

// enterAsync enters the gate in a goroutine and sends its leave func
// once the gate is its.
func enterAsync(g *writeGate, ctx context.Context, background bool, wait time.Duration) <-chan func() {
	got := make(chan func(), 1)
	go func() { got <- g.enter(ctx, background, wait) }()
	return got
}

func isHeld(g *writeGate) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// A request's write goes before background writes that queued earlier;
// each kind goes in arrival order.
func TestWriteGateServesRequestsBeforeBackground(t *testing.T) {
	g := newWriteGate()
	ctx := context.Background()
	leave := g.enter(ctx, true, time.Minute)
	bg1 := enterAsync(g, ctx, true, time.Minute)
	queued(t, g, 0, 1)
	bg2 := enterAsync(g, ctx, true, time.Minute)
	queued(t, g, 0, 2)
	req1 := enterAsync(g, ctx, false, time.Minute)
	queued(t, g, 1, 2)
	req2 := enterAsync(g, ctx, false, time.Minute)
	queued(t, g, 2, 2)

	var order []string
	for _, next := range []struct {
		name string
		ch   <-chan func()
	}{{"req1", req1}, {"req2", req2}, {"bg1", bg1}, {"bg2", bg2}} {
		leave()
		select {
		case leave = <-next.ch:
			order = append(order, next.name)
		case <-time.After(gateTestBound):
			t.Fatalf("%s did not get the gate (order so far %v)", next.name, order)
		}
	}
	assert.Equal(t, []string{"req1", "req2", "bg1", "bg2"}, order)
	leave()
	assert.False(t, isHeld(g), "the last one out frees the gate")
}

// A background write that waited backgroundBound goes in arrival order
// again: before the requests' writes that came after it (a stream of
// requests does not starve it), not before earlier ones.
func TestWriteGateBackgroundIsNotStarved(t *testing.T) {
	g := newWriteGate()
	var clock atomic.Int64
	start := time.Now()
	g.now = func() time.Time { return start.Add(time.Duration(clock.Load())) }
	ctx := context.Background()
	leave := g.enter(ctx, false, time.Minute)
	req1 := enterAsync(g, ctx, false, time.Minute)
	queued(t, g, 1, 0)
	clock.Store(int64(time.Millisecond))
	bg := enterAsync(g, ctx, true, time.Minute)
	queued(t, g, 1, 1)
	clock.Store(int64(2 * time.Millisecond))
	req2 := enterAsync(g, ctx, false, time.Minute)
	queued(t, g, 2, 1)

	clock.Store(int64(time.Millisecond + backgroundBound))
	next := func(want string, ch <-chan func(), others ...<-chan func()) {
		t.Helper()
		leave()
		select {
		case leave = <-ch:
		case <-time.After(gateTestBound):
			t.Fatalf("%s did not get the gate", want)
		}
		for _, o := range others {
			select {
			case <-o:
				t.Fatalf("another writer got the gate with %s", want)
			default:
			}
		}
	}
	// The request that came before it still goes first; the aged
	// background write then goes before the request that came after it.
	next("the earlier request", req1, bg, req2)
	next("the aged background write", bg, req2)
	next("the later request", req2)
	leave()
	assert.False(t, isHeld(g))
}

// A waiter that gives up (its wait or its context ended) leaves the
// queue and goes on without the gate; one handed the gate while giving
// up keeps it, so the gate is never lost.
func TestWriteGateWaitersGiveUpWithoutLosingIt(t *testing.T) {
	g := newWriteGate()
	leave := g.enter(context.Background(), false, time.Minute)

	g.enter(context.Background(), true, time.Millisecond)() // timed out: a no-op leave
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.enter(ctx, false, time.Minute)()
	queued(t, g, 0, 0)
	assert.True(t, isHeld(g), "a waiter that gave up released a gate it never had")

	// Hand-over racing a cancellation, many times: whoever ends up with
	// the gate frees it.
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		w := enterAsync(g, ctx, false, time.Minute)
		queued(t, g, 1, 0)
		go cancel()
		leave()
		leave = <-w
		leave()
		leave = g.enter(context.Background(), false, time.Minute)
		queued(t, g, 0, 0)
	}
	leave()
	assert.False(t, isHeld(g))
}

// One writer at a time, whatever the mix of kinds.
func TestWriteGateAdmitsOneAtATime(t *testing.T) {
	g := newWriteGate()
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 50 {
				leave := g.enter(context.Background(), (i+j)%3 == 0, time.Minute)
				n := inside.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				inside.Add(-1)
				leave()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), most.Load())
	assert.False(t, isHeld(g))
}

// Through the store: a request's transaction that queues behind a
// background one (an activity's, marked with Background) runs first.
func TestRequestTransactionGoesBeforeQueuedBackgroundOnes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "gate.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	var mu sync.Mutex
	var order []string
	run := func(ctx context.Context, name string, done chan<- error) {
		done <- s.InTx(ctx, func(tx *Store) error {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return tx.db.Exec("SELECT 1").Error
		})
	}
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.InTx(ctx, func(*Store) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	bg, req := make(chan error, 1), make(chan error, 1)
	go run(Background(ctx), "activity", bg)
	queued(t, s.writeGate, 0, 1)
	go run(ctx, "request", req)
	queued(t, s.writeGate, 1, 1)
	close(release)
	for _, ch := range []chan error{first, req, bg} {
		require.NoError(t, <-ch)
	}
	assert.Equal(t, []string{"request", "activity"}, order)
}
