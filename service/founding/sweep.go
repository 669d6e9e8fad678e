package founding

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"holdco/service/background"
	"holdco/store"
)

// Sweeper starts the workflows of open interviews whose start a crash (or
// an unreachable Temporal) lost between the row's commit and the start.
type Sweeper struct {
	Store    *store.Store
	Temporal client.Client
	Logger   *slog.Logger
}

// Sweep timings.
const (
	// SweepGrace leaves a fresh interview to the request that opened it.
	SweepGrace = 10 * time.Second
	// SweepEvery is how often the worker's sweeper looks.
	SweepEvery = 5 * time.Second
)

// Sweep starts every open interview older than grace whose workflow is not
// marked started; it returns how many it started and stops at the first
// failure (background.Drain).
func (w *Sweeper) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	return background.Outbox[store.UnstartedFounding]{Key: func(r store.UnstartedFounding) string { return r.Interview.ID },
		Pending: w.Store.Founding().UnstartedFoundingInterviews,
		Start: func(ctx context.Context, r store.UnstartedFounding) error {
			return StartInterviewWorkflow(ctx, w.Store, w.Temporal, r.Scope, r.Interview)
		}}.Sweep(ctx, grace)
}
