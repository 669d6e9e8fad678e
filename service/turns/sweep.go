package turns

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"holdco/models"
	"holdco/observability"
	"holdco/store"
)

// Sweeper starts turns whose row was committed but whose workflow never
// started (the process died between the two, or Temporal did not answer):
// the turn row is its own outbox. It runs on the worker role.
type Sweeper struct {
	Store    *store.Store
	Temporal client.Client
	Logger   *slog.Logger
}

// Sweep timing.
const (
	// SweepGrace leaves a fresh turn to the request that is starting it.
	SweepGrace = 30 * time.Second
	// SweepEvery is how often the worker looks.
	SweepEvery = 10 * time.Second
	sweepBatch = 50
)

// Sweep starts the queued turns older than grace that no workflow picked
// up. One whose company runs another turn meanwhile ends failed with
// conflict (it was never answered). It returns how many it started; it
// stops at the first failed start (Temporal is most likely down).
func (w *Sweeper) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	pending, err := w.Store.Turns().UnstartedTurns(ctx, time.Now().UTC().Add(-grace), sweepBatch)
	if err != nil {
		return 0, err
	}
	started := 0
	for _, p := range pending {
		err := startWorkflow(ctx, w.Temporal, p.Turn)
		var already *serviceerror.WorkflowExecutionAlreadyStarted
		switch {
		case err == nil:
			started++
		case errors.As(err, &already):
			if RunningTurnID(ctx, w.Temporal, p.Turn.CompanyID) == p.Turn.ID {
				continue // it runs; its first activity marks it
			}
			var ended bool
			_, ended, err = w.Store.Turns().FinishTurn(ctx, p.Scope, p.Turn.ID, "", models.TurnResult{Status: models.TurnFailed,
				ErrorCode: string(models.CodeConflict), ErrorDetail: "Another turn was running when this message was due to start; send it again.",
				EndedAt: time.Now().UTC()}, models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: models.ActorSystem, Summary: "A turn could not start"})
			if err != nil {
				return started, err
			}
			if ended {
				observability.TurnEnded(string(models.TurnFailed))
			}
		default:
			return started, err
		}
	}
	return started, nil
}
