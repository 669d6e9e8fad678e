package analytics

import (
	"context"
	"log/slog"
	"time"

	"holdco/store"
)

// HoldWriter makes the writer call f before each commit (a test holds
// it there to fill the queue).
func HoldWriter(s *Service, f func()) { s.beforeWrite = f }

// SharedCharges is how many times s's flood guard charged the shared
// buckets (a database transaction each), per client address and per key.
func SharedCharges(s *Service) (address, key int64) {
	return s.byAddress.charges.Load(), s.byKey.charges.Load()
}

// Limiter is capture's flood guard alone (one process's limit of one kind).
type Limiter = limiter

// NewSharedLimiter is a limit of perSecond events counted in st's shared
// bucket name.
func NewSharedLimiter(perSecond int, st *store.Store, name string) *Limiter {
	return sharedLimiter(perSecond, st, name, slog.New(slog.DiscardHandler))
}

// Take is the limiter's take.
func (l *limiter) Take(ctx context.Context, key string, n int, now time.Time) (bool, time.Duration, error) {
	return l.take(ctx, key, n, now)
}

// CatchUp is the fold goroutine's catching up: passes until one leaves
// no row behind.
func CatchUp(s *Service) error { return s.foldSome(context.Background(), false) }

// PassSize is the next fold pass's size and whether it yields after it.
func PassSize(s *Service, catchingUp bool) (int, bool) { return s.passSize(catchingUp) }
