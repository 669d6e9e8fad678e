package activities

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"holdco/models"
	"holdco/service/turns"
	"holdco/store"
	"holdco/workflows/contract"
)

// Model is the language model a workflow's activity calls
// (providers/llm/...).
type Model interface {
	Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error)
}

// TurnEngine is what the turn's activities run: service/turns' Engine.
type TurnEngine interface {
	StartTurn(ctx context.Context, sc turns.Scopes, ref contract.TurnRef) (contract.StartTurnResult, error)
	ModelStep(ctx context.Context, sc turns.Scopes, in contract.StepInput) (contract.ModelStepResult, error)
	ToolStep(ctx context.Context, sc turns.Scopes, in contract.ToolStepInput, attempt int) (contract.ToolStepResult, error)
	FinishTurn(ctx context.Context, sc turns.Scopes, in contract.FinishTurnInput) (models.TurnStatus, error)
	StartScheduledRun(ctx context.Context, company store.CompanyScope) (contract.ScheduledRunResult, error)
}

var _ TurnEngine = (*turns.Engine)(nil)

// Turns is the activity set of the agent turn workflow and of the
// scheduled run: each activity acts as the system on the turn's company
// and makes one call of the turn engine, whose steps are idempotent (a
// retry never pays a call twice). The model and
// tool steps heartbeat every HeartbeatEvery from their start to their
// end, so an interrupt reaches the call at the next heartbeat and a dead
// worker is noticed, while a slow database after the call is not mistaken
// for one.
type Turns struct {
	Store  *store.Store
	Engine TurnEngine
	// HeartbeatEvery is how often a step heartbeats (0: 1 s).
	HeartbeatEvery time.Duration
}

// StartTurn marks the turn running (or says it is not to be worked on).
// A turn whose company is gone is not. The workflow runs it as a local
// activity (an activity in runs started before that), as FinishTurn.
func (t *Turns) StartTurn(ctx context.Context, ref contract.TurnRef) (contract.StartTurnResult, error) {
	sc, err := t.scopes(ctx, ref)
	if errors.Is(err, models.ErrNotFound) {
		return contract.StartTurnResult{}, nil
	}
	if err != nil {
		return contract.StartTurnResult{}, err
	}
	return t.Engine.StartTurn(ctx, sc, ref)
}

// ModelStep makes (or finds) the step's model call and charges it once.
func (t *Turns) ModelStep(ctx context.Context, in contract.StepInput) (contract.ModelStepResult, error) {
	defer t.heartbeat(ctx)()
	sc, err := t.scopes(ctx, in.TurnRef)
	if err != nil {
		return contract.ModelStepResult{}, err
	}
	out, err := t.Engine.ModelStep(turns.WithWorkerStop(ctx, activity.GetWorkerStopChannel(ctx)), sc, in)
	return out, stepError(ctx, err)
}

// ToolStep makes (or finds) one tool call of a step.
func (t *Turns) ToolStep(ctx context.Context, in contract.ToolStepInput) (contract.ToolStepResult, error) {
	defer t.heartbeat(ctx)()
	sc, err := t.scopes(ctx, in.TurnRef)
	if err != nil {
		return contract.ToolStepResult{}, err
	}
	out, err := t.Engine.ToolStep(ctx, sc, in, int(activity.GetInfo(ctx).Attempt))
	return out, stepError(ctx, err)
}

// FinishTurn writes the turn's end once and returns the status stored
// (the one given when the company is gone).
func (t *Turns) FinishTurn(ctx context.Context, in contract.FinishTurnInput) (models.TurnStatus, error) {
	sc, err := t.scopes(ctx, in.TurnRef)
	if errors.Is(err, models.ErrNotFound) {
		return in.Status, nil
	}
	if err != nil {
		return "", err
	}
	return t.Engine.FinishTurn(ctx, sc, in)
}

// StartScheduledRun is the scheduled run's one activity: it starts the
// company's turn or says why it skipped.
func (t *Turns) StartScheduledRun(ctx context.Context, in contract.ScheduledRunInput) (contract.ScheduledRunResult, error) {
	company, err := t.Store.SystemCompanyScope(ctx, in.CompanyID)
	if errors.Is(err, models.ErrNotFound) {
		return contract.ScheduledRunResult{Skipped: "the company no longer exists"}, nil
	}
	if err != nil {
		return contract.ScheduledRunResult{}, err
	}
	return t.Engine.StartScheduledRun(ctx, company)
}

// scopes are the turn's company and account, acted on as the system.
func (t *Turns) scopes(ctx context.Context, ref contract.TurnRef) (turns.Scopes, error) {
	company, err := t.Store.SystemCompanyScope(ctx, ref.CompanyID)
	if err != nil {
		return turns.Scopes{}, err
	}
	return turns.Scopes{Company: company, Conglomerate: t.Store.SystemConglomerateScope(company.ConglomerateID())}, nil
}

// heartbeat reports liveness every HeartbeatEvery until stopped. Not at
// once: the heartbeat timeout counts from the activity's start, and a
// first heartbeat is a round trip to the server (about 2 ms here) that a
// step of a few milliseconds would wait for; an interrupt reaches a call
// at the first tick as at any later one.
func (t *Turns) heartbeat(ctx context.Context) (stop func()) {
	every := t.HeartbeatEvery
	if every <= 0 {
		every = time.Second
	}
	return heartbeatWith(ctx, every, nil)
}

// stepError makes the engine's decision the workflow's: a turn failure is
// an application error of its code (non-retryable unless the engine says
// otherwise), a cancelled call is the benign Interrupted.
func stepError(ctx context.Context, err error) error {
	var se *turns.StepError
	if !errors.As(err, &se) {
		return err
	}
	if se.Interrupted {
		return interrupted(ctx, se.Message, se.Err)
	}
	return temporal.NewApplicationErrorWithOptions(se.Message, string(se.Code), temporal.ApplicationErrorOptions{
		NonRetryable: !se.Retryable, NextRetryDelay: se.RetryAfter, Cause: se.Err})
}
