package analytics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"holdco/models"
)

// ErrQueueFull is capture's answer when the writer is behind by the
// queue's size (503 with Retry-After): memory stays bounded.
var ErrQueueFull = errors.New("analytics: capture queue is full")

// ErrStopped is capture's answer once the writer has been stopped.
var ErrStopped = errors.New("analytics: capture is shut down")

// errRefusing is capture's answer for refuseFor after a failed commit:
// the database is taken to be out, requests do not pile up waiting for it.
var errRefusing = fmt.Errorf("analytics: events cannot be stored right now: %w", models.ErrUnavailable)

// Group commit. A capture request puts its events in the open batch and
// waits until the transaction holding that batch commits: it answers 200
// only then, so an acknowledged event is in the database, whatever happens
// to the process afterwards. One writer goroutine per process commits the
// batches one after another, pipelined: while one batch commits, the
// requests arriving fill the next, which is committed as soon as the
// writer is free. There is no fixed gathering interval: a batch waits
// (at most GroupWait) only for the requests the last commit answered to
// come back — under a closed loop of clients (wrk's connections, a
// browser's beacons one after another) they are the next batch; from
// idle, a lone request is committed at once. The writer runs only while
// batches wait; nothing needs starting.
const (
	// writeTimeout bounds one batch's transaction; past it the batch's
	// requests answer 503 and their clients retry.
	writeTimeout = 10 * time.Second
	// refuseFor is how long capture answers 503 at once after a failed
	// commit before letting the next batch try the database again.
	refuseFor = time.Second
)

// batch is the events of the requests that wait for one commit.
type batch struct {
	events   []models.AnalyticsEvent
	requests int           // how many requests' events it holds
	done     chan struct{} // closed once committed or failed
	err      error         // set before done is closed
}

// Queue holds the batches waiting for the writer. A request's events are
// in one batch (all or none).
type Queue struct {
	max, flushAt int

	mu      sync.Mutex
	batches []*batch // oldest first; the last one still takes events
	queued  int      // events in batches
	writing bool     // the writer goroutine runs
	idle    chan struct{}
	closed  bool
	// want > 0: the writer waits until the open batch holds want requests
	// (or is full), and push closes ready then.
	want  int
	ready chan struct{}
	// spare is the events slice of the last batch committed, emptied, for
	// the next batch (recycle): the writer commits one batch at a time, so
	// one slice goes round instead of a new one a batch.
	spare []models.AnalyticsEvent
}

func newQueue(o Options) *Queue {
	idle := make(chan struct{})
	close(idle)
	return &Queue{max: o.QueueEvents, flushAt: o.FlushEvents, idle: idle}
}

// push adds events to the open batch (a new one when it is full) and
// says whether the caller must start the writer.
func (q *Queue) push(events []models.AnalyticsEvent) (*batch, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return nil, false, ErrStopped
	case q.queued+len(events) > q.max:
		return nil, false, ErrQueueFull
	}
	var b *batch
	if n := len(q.batches); n > 0 && len(q.batches[n-1].events)+len(events) <= q.flushAt {
		b = q.batches[n-1]
	} else {
		size := min(q.flushAt, max(len(events), 64))
		b = &batch{events: q.spare, done: make(chan struct{})}
		q.spare = nil
		if cap(b.events) < size {
			b.events = make([]models.AnalyticsEvent, 0, size)
		}
		q.batches = append(q.batches, b)
	}
	b.events = append(b.events, events...)
	b.requests++
	q.queued += len(events)
	if q.want > 0 && (b.requests >= q.want || len(q.batches) > 1 || len(b.events) >= q.flushAt) {
		q.want = 0
		close(q.ready)
	}
	start := !q.writing
	if start {
		q.writing = true
		q.idle = make(chan struct{})
	}
	return b, start, nil
}

// gather waits until the oldest batch holds want requests or cannot take
// more events, or until wait has passed, or the queue is closed.
func (q *Queue) gather(want int, wait time.Duration) {
	q.mu.Lock()
	if q.closed || len(q.batches) > 1 || len(q.batches) == 1 && (q.batches[0].requests >= want || len(q.batches[0].events) >= q.flushAt) {
		q.mu.Unlock()
		return
	}
	q.want, q.ready = want, make(chan struct{})
	ready := q.ready
	q.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
		q.mu.Lock()
		if q.ready == ready && q.want > 0 {
			q.want = 0
		}
		q.mu.Unlock()
	}
}

// recycle keeps a committed batch's events slice for the next batch.
// Its rows are cleared first: the collector may free what they held.
func (q *Queue) recycle(events []models.AnalyticsEvent) {
	if cap(events) > max(q.flushAt, 64) {
		return // a one-off large batch is not kept
	}
	clear(events)
	q.mu.Lock()
	q.spare = events[:0]
	q.mu.Unlock()
}

// openRequests is how many requests wait in batches.
func (q *Queue) openRequests() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, b := range q.batches {
		n += b.requests
	}
	return n
}

// next takes the oldest batch; with none left the writer stops (false).
func (q *Queue) next() (*batch, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.batches) == 0 {
		q.writing = false
		close(q.idle)
		return nil, false
	}
	b := q.batches[0]
	q.batches[0] = nil
	q.batches = q.batches[1:]
	q.queued -= len(b.events)
	return b, true
}

// busy is whether the writer goroutine runs: batches wait or one is
// being committed.
func (q *Queue) busy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.writing
}

// Len is the number of events waiting for a commit (not counting the
// batch being written).
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// Counters count what capture did; unknown keys and malformed events are
// dropped silently for the sender (it gets 200) but counted here.
// WriteFailed counts events whose commit failed: their requests were
// answered 503, so the clients still hold them.
type Counters struct {
	Accepted, Stored, UnknownKey, Malformed, QueueFull, WriteFailed, RateLimited atomic.Int64
	// Commits counts the writer's committed batches (stored / commits is
	// the mean batch); CommitNanos is the time their transactions took,
	// the sync included (a request waits for one or two of them).
	Commits, CommitNanos atomic.Int64
	// Folded counts the events this process folded from the inbox into
	// the reports' tables (fold.go).
	Folded atomic.Int64
}

// Stats is a snapshot of the counters.
type Stats struct {
	Accepted, Stored, UnknownKey, Malformed, QueueFull, WriteFailed, RateLimited int64
	Queued                                                                       int
	// Commits is how many batches were committed and CommitTime how long
	// their transactions took in all (group commit: Stored / Commits is
	// the mean batch, CommitTime / Commits the mean commit).
	Commits    int64
	CommitTime time.Duration
	// Folded counts the events this process folded; Unfolded is how many
	// it stored that wait in the inbox (at most).
	Folded, Unfolded int64
}

// Stats returns the capture counters and the queue's length.
func (s *Service) Stats() Stats {
	c := &s.counter
	return Stats{Accepted: c.Accepted.Load(), Stored: c.Stored.Load(), UnknownKey: c.UnknownKey.Load(), Malformed: c.Malformed.Load(),
		QueueFull: c.QueueFull.Load(), WriteFailed: c.WriteFailed.Load(), RateLimited: c.RateLimited.Load(), Queued: s.queue.Len(),
		Commits: c.Commits.Load(), CommitTime: time.Duration(c.CommitNanos.Load()),
		Folded: c.Folded.Load(), Unfolded: max(s.fold.pending.Load(), 0)}
}

// enqueue puts a request's events in a batch and waits for its commit.
// When ctx ends first the events may still be stored (the client, gone,
// was not told so and may send them again).
func (s *Service) enqueue(ctx context.Context, events []models.AnalyticsEvent) error {
	if time.Now().UnixNano() < s.refuseUntil.Load() {
		return errRefusing
	}
	if s.fold.pending.Load() >= int64(s.maxUnfolded) {
		return ErrQueueFull
	}
	b, start, err := s.queue.push(events)
	if err != nil {
		return err
	}
	if start {
		go s.writeLoop()
	}
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeLoop commits the waiting batches one by one and ends when none
// is left. After a commit, the next batch is given until GroupWait to
// hold as many requests as were waiting then (the batch just committed
// and those already in the next): the clients just answered come back
// into it. So a closed loop of N clients makes one batch of N requests a
// commit instead of a 5 ms pause each, and a batch that filled during
// the commit goes at once.
func (s *Service) writeLoop() {
	want := 0
	for {
		if want > 0 && s.groupWait > 0 {
			s.queue.gather(want, s.groupWait)
		}
		b, ok := s.queue.next()
		if !ok {
			return
		}
		b.err = s.commit(b.events)
		close(b.done)
		s.queue.recycle(b.events) // the batch's requests read only err
		want = b.requests + s.queue.openRequests()
	}
}

// commit stores one batch. A failure is answered to the batch's requests
// (503, their clients retry): nothing acknowledged is ever dropped. The
// first failure of a run is logged, and the recovery; not each batch.
func (s *Service) commit(events []models.AnalyticsEvent) error {
	if s.beforeWrite != nil {
		s.beforeWrite()
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	began := time.Now()
	err := s.store.Analytics().AppendAnalyticsInbox(ctx, events)
	if err == nil {
		// Counted before the folder hears of them: a folder woken by
		// added measures the rate from Stored and must see these.
		s.counter.CommitNanos.Add(int64(time.Since(began)))
		s.counter.Stored.Add(int64(len(events)))
		s.counter.Commits.Add(1)
		s.added(len(events))
	}
	s.failMu.Lock()
	defer s.failMu.Unlock()
	if err != nil {
		s.counter.WriteFailed.Add(int64(len(events)))
		s.refuseUntil.Store(time.Now().Add(refuseFor).UnixNano())
		if s.failing.IsZero() {
			s.failing = time.Now()
			s.logger.Error("analytics: events cannot be stored; capture answers 503 with Retry-After until the database is back", "error", err)
		}
		s.failedBatches++
		return fmt.Errorf("analytics: store events: %w", err)
	}
	if !s.failing.IsZero() {
		s.logger.Info("analytics: events are stored again", "after", time.Since(s.failing).Round(time.Millisecond).String(),
			"failed_batches", s.failedBatches)
		s.failing, s.failedBatches = time.Time{}, 0
	}
	return nil
}

// StopWriter refuses new events (ErrStopped) and waits until every batch
// already taken is committed (their requests are answered), or ctx ends.
// Call it after the listeners stopped: by then the requests have been
// answered, so there is nothing left to wait for.
func (s *Service) StopWriter(ctx context.Context) {
	q := s.queue
	q.mu.Lock()
	q.closed = true
	idle := q.idle
	q.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
		s.logger.Warn("analytics: shutdown deadline passed with events being committed", "queued", s.queue.Len())
	}
	s.stopFolder(ctx)
	st := s.Stats()
	s.logger.Info("analytics: capture stopped", "accepted", st.Accepted, "stored", st.Stored, "unknown_key", st.UnknownKey,
		"malformed", st.Malformed, "queue_full", st.QueueFull, "rate_limited", st.RateLimited, "write_failed", st.WriteFailed, "commits", st.Commits, "folded", st.Folded, "unfolded", st.Unfolded)
}

// Flush waits until no batch waits or is being written, then folds the
// inbox (tests, benchmarks).
func (s *Service) Flush(ctx context.Context) {
	s.queue.mu.Lock()
	idle := s.queue.idle
	s.queue.mu.Unlock()
	select {
	case <-idle:
	case <-ctx.Done():
		return
	}
	if _, err := s.FoldNow(ctx); err != nil {
		s.logger.Warn("analytics: flush could not fold the inbox", "error", err)
	}
}
