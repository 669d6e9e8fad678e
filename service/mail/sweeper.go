package mail

import (
	"context"
	"log/slog"
	"time"

	"holdco/store"
)

// Outbound sends left half done by a stopped process: a message is written
// `sending` before the provider is called, so a process killed during the
// call leaves it there. After StaleSendAfter the worker's sweep marks it
// `unknown` rather than resending it (it may have gone out).
const (
	StaleSendAfter  = 15 * time.Minute
	StaleSweepEvery = time.Minute
)

// StaleSendSweeper marks stale `sending` messages `unknown`.
type StaleSendSweeper struct {
	Store  *store.Store
	Logger *slog.Logger
	Now    func() time.Time // nil: the wall clock
}

// Sweep marks the messages stale at the sweeper's now and says how many.
func (w *StaleSendSweeper) Sweep(ctx context.Context) (int64, error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	return w.Store.MarkStaleOutgoingEmails(ctx, now().Add(-StaleSendAfter))
}

// Run sweeps every interval until ctx ends.
func (w *StaleSendSweeper) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := w.Sweep(ctx); err != nil && ctx.Err() == nil {
			w.Logger.WarnContext(ctx, "stale send sweep failed", "error", err)
		} else if n > 0 {
			w.Logger.InfoContext(ctx, "outbound messages left sending marked unknown", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
