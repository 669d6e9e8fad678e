package founding

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

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
	sweepBatch = 100
)

// Sweep starts every open interview older than grace whose workflow is not
// marked started; it returns how many it started and stops at the first
// failure (Temporal is most likely unreachable).
func (w *Sweeper) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	rows, err := w.Store.Founding().UnstartedFoundingInterviews(ctx, time.Now().UTC().Add(-grace), sweepBatch)
	if err != nil {
		return 0, err
	}
	for i, r := range rows {
		if err := StartInterviewWorkflow(ctx, w.Store, w.Temporal, r.Scope, r.Interview); err != nil {
			return i, err
		}
	}
	return len(rows), nil
}
