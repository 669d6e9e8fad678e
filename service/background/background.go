// Package background runs the background sweeps (outboxes, expiries,
// orphan deletes) once per cluster rather than once per process: a sweep
// runs every interval only while this process holds its lease in the
// database. Every process of the role tries to take the lease; one holds
// it and renews it at a fraction of its time to live; a holder that dies
// loses it at the expiry, and one that stops cleanly releases it, so
// another process takes the sweep over. Each sweep is written once, as a
// pass; this package is its only loop, and Drain is the only loop of the
// workflow-start outboxes within a pass.
package background

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"holdco/observability"
	"holdco/store"
)

// Timing of the leases.
const (
	// DefaultTTL is how long a lease lasts unless renewed: how long a
	// sweep pauses after its holder died.
	DefaultTTL = 30 * time.Second
	// releaseTimeout bounds the release at a clean stop.
	releaseTimeout = 5 * time.Second
)

// Leases take, renew and release the leases (the store's leases table).
type Leases interface {
	TakeLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

var _ Leases = (*store.Store)(nil)

// Sweep is one background sweep.
type Sweep struct {
	// Name names the sweep's lease and its metrics' sweep label.
	Name string
	// Every is the time from the start of a pass to the next one.
	Every time.Duration
	// Pass sweeps once and says how many items it handled. Its ctx ends
	// when the runner stops or the lease is lost.
	Pass func(ctx context.Context) (int64, error)
	// Done is logged, with the count, after a pass that handled items.
	Done string
}

// Runner runs sweeps while this process holds their leases.
type Runner struct {
	Leases Leases
	// Holder names this process in the leases (NewHolder).
	Holder string
	Logger *slog.Logger
	// TTL is the leases' time to live (0: DefaultTTL).
	TTL time.Duration
	// Renew is how often a lease is renewed, or taken by a process that
	// does not hold it (0: a third of TTL).
	Renew time.Duration
}

// NewHolder names this process: host, process id and a random part (two
// processes of one host, or a restarted one, are different holders).
func NewHolder() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

func (r *Runner) ttl() time.Duration {
	if r.TTL > 0 {
		return r.TTL
	}
	return DefaultTTL
}

func (r *Runner) renewEvery() time.Duration {
	if r.Renew > 0 {
		return r.Renew
	}
	return r.ttl() / 3
}

// Start runs each sweep in its own goroutine until the returned function
// is called: that stops them, waits for passes under way (or for
// shutdown's end) and releases the leases held.
func (r *Runner) Start(sweeps ...Sweep) (stop func(shutdown context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, sw := range sweeps {
		wg.Go(func() { r.run(ctx, sw) })
	}
	return func(shutdown context.Context) {
		cancel()
		done := make(chan struct{})
		go func() {
			wg.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-shutdown.Done():
		}
	}
}

type passResult struct {
	n   int64
	err error
}

// run is a sweep's loop: try to take or renew the lease every renewEvery;
// while it is held, start a pass when one is due; on losing it, cut the
// pass under way.
func (r *Runner) run(ctx context.Context, sw Sweep) {
	logger := r.Logger.With("sweep", sw.Name)
	tick := time.NewTicker(r.renewEvery())
	defer tick.Stop()
	var (
		held, everHeld bool
		due            time.Time // the next pass; zero: at once
		passDone       chan passResult
		cancelPass     context.CancelFunc = func() {}
	)
	defer func() {
		cancelPass()
		if passDone != nil {
			r.report(ctx, logger, sw, <-passDone)
		}
		if everHeld {
			rctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
			defer cancel()
			if err := r.Leases.ReleaseLease(rctx, sw.Name, r.Holder); err != nil {
				logger.Warn("sweep lease release failed; another process takes over at its expiry", "error", err)
			}
		}
		observability.SweepLeaseHeld(sw.Name, false)
	}()
	try := func() {
		ok, err := r.Leases.TakeLease(ctx, sw.Name, r.Holder, time.Now(), r.ttl())
		if err != nil && ctx.Err() == nil {
			// Unknown: stop sweeping at once rather than risk two holders;
			// the next try renews the lease if it is still ours.
			logger.Warn("sweep lease: take or renew failed", "error", err)
		}
		ok = ok && err == nil
		switch {
		case ok && !held:
			everHeld, due = true, time.Time{}
			logger.Info("sweep lease taken: this process runs the sweep")
		case !ok && held:
			cancelPass()
			if ctx.Err() == nil {
				logger.Info("sweep lease lost: another process runs the sweep")
			}
		}
		held = ok
		observability.SweepLeaseHeld(sw.Name, held)
	}
	try()
	for {
		var dueC <-chan time.Time
		if held && passDone == nil {
			wait := time.Until(due)
			if wait <= 0 {
				passCtx, cancel := context.WithCancel(ctx)
				cancelPass = cancel // called when the pass ends, the lease is lost or the runner stops
				passDone, due = make(chan passResult, 1), time.Now().Add(sw.Every)
				go func(done chan<- passResult) {
					n, err := sw.Pass(passCtx)
					done <- passResult{n, err}
				}(passDone)
				continue
			}
			dueC = time.After(wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			try()
		case res := <-passDone:
			passDone = nil
			cancelPass()
			r.report(ctx, logger, sw, res)
		case <-dueC:
		}
	}
}

// report counts a pass in the sweep metrics and logs what it did.
func (r *Runner) report(ctx context.Context, logger *slog.Logger, sw Sweep, res passResult) {
	observability.SweepRan(sw.Name, res.err)
	switch {
	case res.err != nil && ctx.Err() == nil && !errors.Is(res.err, context.Canceled): // not a pass cut by a lost lease
		logger.Warn("sweep failed; retried at the next pass", "error", res.err)
	case res.n > 0 && sw.Done != "":
		logger.Info(sw.Done, "count", res.n)
	}
}
