package identity

import (
	"context"
	"log/slog"
	"time"

	"holdco/store"
)

// Expired sign-in codes (browser login codes, CLI loopback codes,
// device-flow grants, and the development identity provider's sign-ins
// and access tokens) are deleted CodeRetention after they expire: until
// then a late exchange or poll still gets its precise answer (a device
// poll says expired_token, not "unknown device code"). The worker sweeps
// every CodeSweepEvery.
const (
	CodeRetention  = time.Hour
	CodeSweepEvery = 10 * time.Minute
	codeSweepBatch = 1000
)

// CodeSweeper deletes expired sign-in codes.
type CodeSweeper struct {
	Store  *store.Store
	Logger *slog.Logger
	Now    func() time.Time // nil: the wall clock
}

// Sweep deletes the codes expired more than CodeRetention ago and says
// how many.
func (w *CodeSweeper) Sweep(ctx context.Context) (int64, error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	return w.Store.Identity().DeleteExpiredSignInCodes(ctx, now().Add(-CodeRetention), codeSweepBatch)
}
