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
	"holdco/service/background"
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
)

// Sweep starts the queued turns older than grace that no workflow picked
// up. One whose company runs another turn meanwhile ends failed with
// conflict (it was never answered). It returns how many it started; it
// stops at the first failed start (background.Drain).
func (w *Sweeper) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	return background.Outbox[store.UnstartedTurn]{Key: func(p store.UnstartedTurn) string { return p.Turn.ID },
		Pending: w.Store.Turns().UnstartedTurns, Start: w.start}.Sweep(ctx, grace)
}

// start starts a lost turn; a turn that another start beat is left to its
// run or, when the company runs another turn, ended failed with conflict.
// A started turn stays queued until its workflow's first activity marks
// it.
func (w *Sweeper) start(ctx context.Context, p store.UnstartedTurn) error {
	err := startWorkflow(ctx, w.Temporal, p.Turn)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if !errors.As(err, &already) {
		return err
	}
	if RunningTurnID(ctx, w.Temporal, p.Turn.CompanyID) == p.Turn.ID {
		return background.ErrSkip // it runs; its first activity marks it
	}
	_, ended, err := w.Store.Turns().FinishTurn(ctx, p.Scope, p.Turn.ID, "", models.TurnResult{Status: models.TurnFailed,
		ErrorCode: string(models.CodeConflict), ErrorDetail: "Another turn was running when this message was due to start; send it again.",
		EndedAt: time.Now().UTC()}, models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: models.ActorSystem, Summary: "A turn could not start"})
	if err != nil {
		return err
	}
	if ended {
		observability.TurnEnded(string(models.TurnFailed))
	}
	return background.ErrSkip
}
