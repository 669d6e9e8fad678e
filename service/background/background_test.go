package background_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/service/background"
	"holdco/store"
	"holdco/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// deadline bounds every eventual check: generous, never a measure.
const deadline = 30 * time.Second

// work is a queue of items that a sweep handles in batches. Its pass
// reads a batch, yields, then handles it: two passes at once would read
// and handle the same items (as two replicas' sweeps of one outbox did).
type work struct {
	mu       sync.Mutex
	pending  []int
	handled  map[int]int
	inFlight atomic.Int32
	maxIn    atomic.Int32
	passes   map[string]int
}

func newWork(items int) *work {
	w := &work{handled: map[int]int{}, passes: map[string]int{}}
	for i := range items {
		w.pending = append(w.pending, i)
	}
	return w
}

func (w *work) pass(runner string) func(context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		n := w.inFlight.Add(1)
		defer w.inFlight.Add(-1)
		for {
			m := w.maxIn.Load()
			if n <= m || w.maxIn.CompareAndSwap(m, n) {
				break
			}
		}
		w.mu.Lock()
		w.passes[runner]++
		batch := append([]int(nil), w.pending[:min(4, len(w.pending))]...)
		w.mu.Unlock()
		runtime.Gosched()
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, it := range batch {
			w.handled[it]++
		}
		w.pending = w.pending[min(len(batch), len(w.pending)):] // another pass may have taken them meanwhile
		return int64(len(batch)), ctx.Err()
	}
}

func (w *work) left() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

func (w *work) passesOf(runner string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.passes[runner]
}

func runner(leases background.Leases, holder string, ttl, renew time.Duration) *background.Runner {
	return &background.Runner{Leases: leases, Holder: holder, Logger: slog.New(slog.DiscardHandler), TTL: ttl, Renew: renew}
}

// Two processes on one database run the same sweep: one holds the lease
// and sweeps, the other never does; every item is handled once.
func TestTwoRunnersSweepEachItemOnce(t *testing.T) {
	st := testenv.NewReplicaStores(t, 2)
	w := newWork(60)
	var stops []func(context.Context)
	for i, holder := range []string{"proc-a", "proc-b"} {
		r := runner(st[i], holder, 0, 0)
		stops = append(stops, r.Start(background.Sweep{Name: "items", Every: time.Millisecond, Pass: w.pass(holder)}))
	}
	require.Eventually(t, func() bool { return w.left() == 0 }, deadline, 5*time.Millisecond)
	for _, stop := range stops {
		stop(context.Background())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range 60 {
		assert.Equal(t, 1, w.handled[i], "item %d", i)
	}
	assert.Equal(t, int32(1), w.maxIn.Load(), "passes never overlapped")
	assert.True(t, (w.passes["proc-a"] == 0) != (w.passes["proc-b"] == 0), "one process swept: %v", w.passes)
}

// dying is a process's view of the database that can be cut: after die,
// every call fails, as for a process that crashed or lost its network
// (its lease is neither renewed nor released).
type dying struct {
	background.Leases
	dead atomic.Bool
}

var errDead = errors.New("process is gone")

func (d *dying) TakeLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (bool, error) {
	if d.dead.Load() {
		return false, errDead
	}
	return d.Leases.TakeLease(ctx, name, holder, at, ttl)
}

func (d *dying) ReleaseLease(ctx context.Context, name, holder string) error {
	if d.dead.Load() {
		return errDead
	}
	return d.Leases.ReleaseLease(ctx, name, holder)
}

// The holder dies without releasing: at the lease's expiry the other
// process takes the sweep over.
func TestLeaseExpiryHandsTheSweepOver(t *testing.T) {
	st := testenv.NewReplicaStores(t, 2)
	ctx := context.Background()
	w := newWork(1_000_000)
	procs := map[string]*dying{"proc-a": {Leases: st[0]}, "proc-b": {Leases: st[1]}}
	const ttl = time.Second
	for holder, d := range procs {
		stop := runner(d, holder, ttl, 50*time.Millisecond).Start(background.Sweep{Name: "items", Every: 5 * time.Millisecond, Pass: w.pass(holder)})
		t.Cleanup(func() { stop(ctx) })
	}
	var first string
	require.Eventually(t, func() bool {
		h, err := st[0].LeaseHolder(ctx, "items", time.Now())
		first = h
		return err == nil && h != "" && w.passesOf(h) > 0
	}, deadline, 10*time.Millisecond)
	other := map[string]string{"proc-a": "proc-b", "proc-b": "proc-a"}[first]
	require.Zero(t, w.passesOf(other))

	procs[first].dead.Store(true)
	require.Eventually(t, func() bool {
		h, err := st[0].LeaseHolder(ctx, "items", time.Now())
		return err == nil && h == other && w.passesOf(other) > 0
	}, deadline, 10*time.Millisecond)
	assert.Equal(t, int32(1), w.maxIn.Load(), "passes never overlapped")
}

// A clean stop releases the lease: the other process takes it at its next
// try, long before the expiry.
func TestCleanStopReleasesTheLease(t *testing.T) {
	st := testenv.NewReplicaStores(t, 2)
	ctx := context.Background()
	w := newWork(1_000_000)
	const ttl = time.Hour // an expiry no check below waits for
	stopA := runner(st[0], "proc-a", ttl, 20*time.Millisecond).Start(background.Sweep{Name: "items", Every: 5 * time.Millisecond, Pass: w.pass("proc-a")})
	require.Eventually(t, func() bool { return w.passesOf("proc-a") > 0 }, deadline, 5*time.Millisecond)
	stopB := runner(st[1], "proc-b", ttl, 20*time.Millisecond).Start(background.Sweep{Name: "items", Every: 5 * time.Millisecond, Pass: w.pass("proc-b")})
	t.Cleanup(func() { stopB(ctx) })

	stopA(ctx)
	h, err := st[0].LeaseHolder(ctx, "items", time.Now())
	require.NoError(t, err)
	assert.NotEqual(t, "proc-a", h, "the lease was released at the stop")
	require.Eventually(t, func() bool { return w.passesOf("proc-b") > 0 }, deadline, 5*time.Millisecond)
	h, err = st[1].LeaseHolder(ctx, "items", time.Now())
	require.NoError(t, err)
	assert.Equal(t, "proc-b", h)
}

// A sweep's pass failing is counted and retried at the next pass; the
// lease stays.
func TestFailedPassIsRetried(t *testing.T) {
	st := testenv.NewReplicaStores(t, 1)
	var calls atomic.Int32
	stop := runner(st[0], "proc-a", 0, 0).Start(background.Sweep{Name: "flaky", Every: time.Millisecond,
		Pass: func(context.Context) (int64, error) {
			if calls.Add(1) == 1 {
				return 0, errors.New("database down")
			}
			return 1, nil
		}})
	require.Eventually(t, func() bool { return calls.Load() >= 3 }, deadline, time.Millisecond)
	stop(context.Background())
	h, err := st[0].LeaseHolder(context.Background(), "flaky", time.Now())
	require.NoError(t, err)
	assert.Empty(t, h, "released at the stop")
}

var _ background.Leases = (*store.Store)(nil)
