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
	return w.Store.Sales().MarkStaleOutgoingEmails(ctx, now().Add(-StaleSendAfter))
}
