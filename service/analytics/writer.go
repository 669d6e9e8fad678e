package analytics

import (
	"context"
	"errors"
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

// Queue holds captured events until the writer stores them. A request's
// events are queued all or none.
type Queue struct {
	max, flushAt int
	every        time.Duration

	mu      sync.Mutex
	pending []models.AnalyticsEvent
	closed  bool
	wake    chan struct{} // a batch is ready
}

func newQueue(o Options) *Queue {
	return &Queue{max: o.QueueEvents, flushAt: o.FlushEvents, every: o.FlushEvery, wake: make(chan struct{}, 1),
		pending: make([]models.AnalyticsEvent, 0, o.FlushEvents)}
}

func (q *Queue) push(events []models.AnalyticsEvent) error {
	q.mu.Lock()
	switch {
	case q.closed:
		q.mu.Unlock()
		return ErrStopped
	case len(q.pending)+len(events) > q.max:
		q.mu.Unlock()
		return ErrQueueFull
	}
	q.pending = append(q.pending, events...)
	ready := len(q.pending) >= q.flushAt
	q.mu.Unlock()
	if ready {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// take removes up to n of the oldest waiting events.
func (q *Queue) take(n int) []models.AnalyticsEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	n = min(n, len(q.pending))
	if n == 0 {
		return nil
	}
	batch := make([]models.AnalyticsEvent, n)
	copy(batch, q.pending)
	rest := copy(q.pending, q.pending[n:])
	clear(q.pending[rest:])
	q.pending = q.pending[:rest]
	return batch
}

// Len is the number of waiting events.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

func (q *Queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
}

// Counters count what capture did; unknown keys and malformed events are
// dropped silently for the sender (it gets 200) but counted here.
type Counters struct {
	Accepted, Stored, UnknownKey, Malformed, QueueFull, WriteFailed atomic.Int64
}

// Stats is a snapshot of the counters.
type Stats struct {
	Accepted, Stored, UnknownKey, Malformed, QueueFull, WriteFailed int64
	Queued                                                          int
}

// Stats returns the capture counters and the queue's length.
func (s *Service) Stats() Stats {
	c := &s.counter
	return Stats{Accepted: c.Accepted.Load(), Stored: c.Stored.Load(), UnknownKey: c.UnknownKey.Load(), Malformed: c.Malformed.Load(),
		QueueFull: c.QueueFull.Load(), WriteFailed: c.WriteFailed.Load(), Queued: s.queue.Len()}
}

// Writer attempts of one batch before it is given up (and counted in
// WriteFailed); between attempts it waits retryWait, doubling.
const (
	writeAttempts = 5
	retryWait     = 200 * time.Millisecond
)

// RunWriter stores queued events until ctx ends: a batch every FlushEvery,
// or at once when FlushEvents are waiting. The process serving capture
// runs it (the api role) and stops it with StopWriter.
func (s *Service) RunWriter(ctx context.Context) {
	q := s.queue
	t := time.NewTicker(q.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-q.wake:
		}
		s.flush(ctx, false)
	}
}

// flush writes batches until fewer than FlushEvents wait (all of them
// with drain). A batch whose write fails is retried with backoff; after
// writeAttempts it is dropped and counted.
func (s *Service) flush(ctx context.Context, drain bool) {
	q := s.queue
	for {
		batch := q.take(q.flushAt)
		if len(batch) == 0 {
			return
		}
		s.write(ctx, batch)
		if !drain && q.Len() < q.flushAt {
			return
		}
	}
}

func (s *Service) write(ctx context.Context, batch []models.AnalyticsEvent) {
	wait := retryWait
	for attempt := 1; ; attempt++ {
		err := s.store.RecordAnalyticsEvents(context.WithoutCancel(ctx), batch)
		if err == nil {
			s.counter.Stored.Add(int64(len(batch)))
			return
		}
		if attempt == writeAttempts {
			s.counter.WriteFailed.Add(int64(len(batch)))
			s.logger.Error("analytics: events dropped after failed writes", "events", len(batch), "error", err)
			return
		}
		s.logger.Warn("analytics: write failed; retrying", "events", len(batch), "attempt", attempt, "error", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done(): // stopping: the drain retries once more without waiting
		}
		wait *= 2
	}
}

// StopWriter refuses new events (ErrStopped), then stores every queued
// event before returning, or gives up when ctx ends. Call it after the
// listeners stopped and after RunWriter's context was cancelled.
func (s *Service) StopWriter(ctx context.Context) {
	s.queue.close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.flush(ctx, true)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.logger.Warn("analytics: shutdown deadline passed with events queued", "queued", s.queue.Len())
	}
	st := s.Stats()
	s.logger.Info("analytics: capture stopped", "accepted", st.Accepted, "stored", st.Stored, "unknown_key", st.UnknownKey,
		"malformed", st.Malformed, "queue_full", st.QueueFull, "write_failed", st.WriteFailed)
}

// Flush stores every event queued now (tests, benchmarks); RunWriter does
// the same in the background.
func (s *Service) Flush(ctx context.Context) { s.flush(ctx, true) }
