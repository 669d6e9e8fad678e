package analytics

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"holdco/models"
	"holdco/store"
)

// Folding. The writer acknowledges a batch once its events are committed
// as one inbox row (store.AppendAnalyticsInbox): one small insert and one
// sync per commit, whatever the batch holds. The folder moves inbox rows
// into the raw events and the rollups the reports read
// (store.FoldAnalyticsInbox), in transactions of up to FoldEvents events,
// each deleting the rows it folds: an acknowledged event is in the inbox
// or folded, counted once either way.
//
// The folder runs in the process while events it acknowledged wait: it
// gathers them for FoldDelay (or until FoldEvents wait) so that one fold
// writes each rollup row once for many commits, then folds. During a
// flood (at least FoldDeferRate events a second acknowledged over the
// gathering) folding would take the CPU and the database's write lock
// from the acknowledgements, so the folder defers, for at most
// FoldMaxLag after its last fold; then it folds everything waiting, one
// transaction at a time; while the writer commits, in passes of a quarter
// of FoldEvents each followed by an equal pause (foldSome), so
// capture keeps about half of the write lock. A burst is taken at the
// rate of the inbox and folded after it; a sustained flood at about the
// rate capture and the fold can share, in rounds of FoldMaxLag. Reports fold what this process
// acknowledged before they read (settle; up to FoldEvents*4 events, a
// report during a flood reads what is folded), so a client reads its own
// events; another replica's show within about FoldDelay.
// Rows left by a process that stopped before folding them are folded by
// the next fold anywhere in the cluster, and by the periodic sweep
// (app: analytics_fold).
//
// When folding falls behind by MaxUnfolded events, capture answers 503
// (ErrQueueFull) until it catches up: the inbox stays bounded.

// Defaults of the fold's options.
const (
	DefaultFoldEvents    = 5_000
	DefaultFoldDelay     = 200 * time.Millisecond
	DefaultFoldDeferRate = 2_000
	DefaultFoldMaxLag    = 10 * time.Second
	DefaultMaxUnfolded   = 1_000_000
	// FoldSweepEvery is how often the cluster folds what a stopped
	// process left in the inbox (app's analytics_fold sweep).
	FoldSweepEvery = 10 * time.Second
	// foldTimeout bounds one fold transaction.
	foldTimeout = 30 * time.Second
	// foldRetry is the wait after a failed fold before the next try.
	foldRetry = time.Second
)

// folder is the process's fold state.
type folder struct {
	// pending counts the events this process put in the inbox that no
	// fold has taken since (folds elsewhere can take them: it is an upper
	// bound, cleared when the inbox is found empty).
	pending atomic.Int64
	// pass serializes fold passes in the process.
	pass sync.Mutex

	wake chan struct{} // (1) pending reached FoldEvents
	stop chan struct{} // closed by stopFolder

	// lastFold is when the fold goroutine last folded, or started (only
	// it uses it once started).
	lastFold time.Time

	mu      sync.Mutex
	running bool          // the fold goroutine runs
	idle    chan struct{} // closed while it does not
	stopped bool          // stop is closed
}

func newFolder() *folder {
	idle := make(chan struct{})
	close(idle)
	return &folder{idle: idle, wake: make(chan struct{}, 1), stop: make(chan struct{})}
}

func (f *folder) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// added records n events committed to the inbox by this process and
// starts the fold goroutine if it is not running.
func (s *Service) added(n int) {
	f := s.fold
	if f.pending.Add(int64(n)) >= int64(s.foldEvents) {
		f.poke()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running || f.stopped {
		return
	}
	f.running = true
	f.idle = make(chan struct{})
	f.lastFold = time.Now() // the lag counts from the first event waiting
	go s.foldLoop()
}

// StartFolder folds what the inbox holds from an earlier run (a process
// that stopped before folding) in the background.
func (s *Service) StartFolder() { s.added(0) }

// foldLoop gathers, folds, and ends once nothing this process
// acknowledged waits.
func (s *Service) foldLoop() {
	f := s.fold
	for {
		for {
			stored, since := s.counter.Stored.Load(), time.Now()
			if f.pending.Load() < int64(s.foldEvents) {
				f.sleep(s.foldDelay, true) // gather
			} else if !f.isStopped() && time.Since(f.lastFold) < s.foldMaxLag {
				f.sleep(s.foldDelay, false) // measure the rate
			}
			if !s.deferFold(stored, since) {
				break
			}
		}
		// Background work: requests' writes go before the fold's.
		err := s.foldSome(store.Background(context.Background()), false)
		f.lastFold = time.Now()
		f.mu.Lock()
		if err != nil && f.stopped || err == nil && f.pending.Load() <= 0 {
			f.running = false
			close(f.idle)
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		if err != nil {
			f.sleep(foldRetry, false)
		}
	}
}

// deferFold: events were acknowledged at FoldDeferRate or more since
// `since` (when Stored was stored), the last fold was less than FoldMaxLag
// ago, and the inbox is far from MaxUnfolded: the fold waits for the
// flood to end.
func (s *Service) deferFold(stored int64, since time.Time) bool {
	f := s.fold
	if f.isStopped() || time.Since(f.lastFold) >= s.foldMaxLag || f.pending.Load() >= int64(s.maxUnfolded)/2 {
		return false
	}
	el := time.Since(since).Seconds()
	return el > 0 && float64(s.counter.Stored.Load()-stored)/el >= float64(s.foldDeferRate)
}

// sleep waits for d, or until stop, or (early) until FoldEvents wait.
func (f *folder) sleep(d time.Duration, early bool) {
	wake := f.wake
	if early {
		select { // a wake from before this sleep is stale
		case <-wake:
		default:
		}
	} else {
		wake = nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-f.stop:
	}
}

func (f *folder) isStopped() bool {
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

// errFoldBusy: another process holds the cluster's fold lock.
var errFoldBusy = errors.New("analytics: another process folds")

// foldSome runs fold passes: catching up (the fold goroutine's, all
// false) until a pass leaves no row behind; all (the sweep, Flush, a
// report's settle) until the inbox is empty or as many events as were
// pending at the start are folded. It returns nil when it stopped for one
// of those reasons and the error of a failed pass (errFoldBusy while
// another process folds).
//
// Catching up yields to capture: while capture's writer is committing,
// the passes are a quarter of FoldEvents and each is followed by a pause
// as long as it took, so that capture keeps about half of the database's
// write lock instead of one commit a pass (a pass of FoldEvents took the
// lock for 100–200 ms, and the writer, gathering its next batch when a
// pass ended, was not yet waiting for the lock: the next pass took it
// first). The backlog is folded in about twice the time.
func (s *Service) foldSome(ctx context.Context, all bool) error {
	f := s.fold
	f.pass.Lock()
	defer f.pass.Unlock()
	goal := f.pending.Load()
	var total int64
	for {
		size, yields := s.passSize(!all)
		start := time.Now()
		pctx, cancel := context.WithTimeout(ctx, foldTimeout)
		res, err := s.store.Analytics().FoldAnalyticsInbox(pctx, size)
		cancel()
		if err != nil {
			s.foldFailed(err)
			return err
		}
		s.foldRecovered()
		if res.Busy {
			return errFoldBusy
		}
		total += int64(res.Events)
		s.counter.Folded.Add(int64(res.Events))
		if res.Events == 0 {
			f.pending.Store(0) // the inbox is empty: a fold somewhere took the rest
			return nil
		}
		if p := f.pending.Add(-int64(res.Events)); p < 0 {
			f.pending.CompareAndSwap(p, 0)
		}
		if !all && !res.More || all && total >= goal && goal > 0 {
			return nil
		}
		if yields {
			f.sleep(min(time.Since(start), foldYieldMax), false)
		}
	}
}

// passSize is how many events the next pass takes, and whether it
// yields to capture's writer after it (catching up while the writer is
// busy).
func (s *Service) passSize(catchingUp bool) (int, bool) {
	if catchingUp && s.queue.busy() {
		return max(s.foldEvents/4, 1), true
	}
	return s.foldEvents, false
}

// foldYieldMax bounds a catching-up fold's pause after a pass.
const foldYieldMax = 200 * time.Millisecond

// FoldNow folds what the inbox holds now (the sweep, Flush). It returns
// how many events it folded.
func (s *Service) FoldNow(ctx context.Context) (int64, error) {
	before := s.counter.Folded.Load()
	err := s.foldSome(ctx, true)
	if errors.Is(err, errFoldBusy) {
		err = nil
	}
	return s.counter.Folded.Load() - before, err
}

// FoldLeftovers is the sweep's pass (once per cluster): it folds the
// inbox when its oldest row has waited more than twice FoldMaxLag, so no
// process's folder is taking care of it (the process stopped, or
// captures nothing now). It returns how many events it folded.
func (s *Service) FoldLeftovers(ctx context.Context) (int64, error) {
	oldest, ok, err := s.store.Analytics().AnalyticsInboxOldest(ctx)
	if err != nil || !ok || time.Since(oldest) <= 2*s.foldMaxLag { // the store's clock
		return 0, err
	}
	return s.FoldNow(ctx)
}

// settle folds, before a report reads, the events this process
// acknowledged and has not folded yet (nothing to do, and no statement,
// when there are none; more than settleFolds transactions' worth: the
// folder's work, the report reads what is folded). A failed fold leaves the report a little
// behind; it is not the report's error.
func (s *Service) settle(ctx context.Context) {
	if p := s.fold.pending.Load(); p > 0 && p <= int64(s.foldEvents)*settleFolds {
		_ = s.foldSome(ctx, true)
	}
}

// settleFolds is how many fold transactions a report may wait for.
const settleFolds = 4

func (s *Service) foldFailed(err error) {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if s.foldFailing.IsZero() {
		s.foldFailing = time.Now()
		// A database outage is reported once by the store's outage log;
		// here it is a warning.
		level := slog.LevelError
		if errors.Is(err, models.ErrUnavailable) || store.IsUnavailable(err) {
			level = slog.LevelWarn
		}
		s.logger.Log(context.Background(), level, "analytics: captured events cannot be folded into the reports; they wait in the inbox", "error", err)
	}
}

func (s *Service) foldRecovered() {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if !s.foldFailing.IsZero() {
		s.logger.Info("analytics: captured events are folded again", "after", time.Since(s.foldFailing).Round(time.Millisecond).String())
		s.foldFailing = time.Time{}
	}
}

// stopFolder folds what is left (until ctx ends; what is not folded stays
// in the inbox for the next process) and stops the fold goroutine.
func (s *Service) stopFolder(ctx context.Context) {
	f := s.fold
	f.mu.Lock()
	if !f.stopped {
		f.stopped = true
		close(f.stop)
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
		return
	}
	if _, err := s.FoldNow(ctx); err != nil && ctx.Err() == nil {
		s.logger.Warn("analytics: events left in the inbox at shutdown are folded by the next process", "error", err)
	}
}
