package turns

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"holdco/models"
	"holdco/observability"
	"holdco/service/background"
	"holdco/store"
	"holdco/workflows/contract"
)

// Sweeper keeps the turn rows and their workflows in step. It starts
// turns whose row was committed but whose workflow never started (the
// process died between the two, or Temporal did not answer): the turn row
// is its own outbox. And it ends running turns whose workflow stopped
// without ending them (an operator terminated it): the company's one
// active turn would otherwise hold its agent for ever. It runs on the
// worker role.
type Sweeper struct {
	Store    *store.Store
	Temporal client.Client
	// Engine ends the turns whose workflow is gone (the end every turn
	// gets: holds released, cost, task, trace); nil leaves them.
	Engine *Engine
	Logger *slog.Logger
	// Blocked, Idle and CloseWait replace BlockedFor, IdleFor and the
	// start's wait for the turn before to close (5 s) when set (tests).
	Blocked, Idle, CloseWait time.Duration
	// IdleChecks replaces idleChecks when set (tests).
	IdleChecks int

	mu sync.Mutex
	// idleAfter is where the next look at idle running turns starts: the
	// last turn the previous one checked (nil: from the oldest).
	idleAfter *store.TurnCursor
}

func (w *Sweeper) blocked() time.Duration { return cmp.Or(w.Blocked, BlockedFor) }
func (w *Sweeper) idle() time.Duration    { return cmp.Or(w.Idle, IdleFor) }

// Sweep timing.
const (
	// SweepGrace leaves a fresh turn to the request that is starting it.
	SweepGrace = 30 * time.Second
	// SweepEvery is how often the worker looks.
	SweepEvery = 10 * time.Second
	// BlockedFor is how long a queued turn waits for the workflow of the
	// turn before it (ended, its workflow not yet closed) before it ends
	// failed with conflict.
	BlockedFor = 5 * time.Minute
	// IdleFor is how long a running turn's row may go unchanged before
	// the sweeper asks Temporal whether its workflow still runs it.
	IdleFor = 2 * time.Minute
	// idleChecks bounds the workflows described per sweep; the next
	// sweep goes on after the last one checked, and starts again from
	// the oldest once it has seen them all.
	idleChecks = 20
)

// Sweep starts the queued turns older than grace that no workflow picked
// up, then ends the running turns idle for IdleFor whose workflow no
// longer runs them. It returns how many it started or ended; it stops at
// the first failure (background.Drain).
func (w *Sweeper) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	// The waits for closing workflows share one closeWait a sweep: a
	// sweep behind many companies whose workflow is stuck open does not
	// take closeWait for each of them (theirs wait for the next sweep).
	waitUntil := time.Now().Add(cmp.Or(w.CloseWait, closeWait))
	n, err := background.Outbox[store.ScopedTurn]{Key: func(p store.ScopedTurn) string { return p.Turn.ID },
		Pending: w.Store.Turns().UnstartedTurns, Start: func(ctx context.Context, p store.ScopedTurn) error {
			return w.start(ctx, p, time.Until(waitUntil))
		}}.Sweep(ctx, grace)
	if err != nil || w.Engine == nil {
		return n, err
	}
	ended, err := w.endOrphans(ctx, time.Now().UTC().Add(-w.idle()))
	return n + ended, err
}

// start starts a lost turn. A turn that another start beat is left to its
// run. While the company's workflow still runs the turn before (its row
// has ended: the rows let this one in) the start waits for it to close
// (wait at most), then the turn waits for the next sweep, BlockedFor at
// most; then it ends failed with conflict. A started turn stays queued
// until its workflow's first activity marks it.
func (w *Sweeper) start(ctx context.Context, p store.ScopedTurn, wait time.Duration) error {
	err := startTurn(ctx, w.Temporal, p.Turn, wait)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if !errors.As(err, &already) {
		return err
	}
	if RunningTurnID(ctx, w.Temporal, p.Turn.CompanyID) == p.Turn.ID || time.Since(p.Turn.CreatedAt) < w.blocked() {
		return background.ErrSkip
	}
	w.Logger.WarnContext(ctx, "turn sweep: the company's workflow still runs an ended turn; the queued turn fails", "company", p.Turn.CompanyID,
		"turn", p.Turn.ID, "workflow", contract.TurnWorkflowID(p.Turn.CompanyID))
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

// endOrphans ends failed the running turns unchanged since before whose
// company's workflow is closed, missing or runs another turn. A workflow
// that runs without saying which turn (no memo) is left alone. It looks
// at idleChecks turns a sweep, going on after the last one the sweep
// before checked, and from the oldest again once it has seen them all.
func (w *Sweeper) endOrphans(ctx context.Context, before time.Time) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	limit := cmp.Or(w.IdleChecks, idleChecks)
	idle, err := w.Store.Turns().IdleRunningTurns(ctx, before, w.idleAfter, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range idle {
		ended, err := w.endOrphan(ctx, p)
		if err != nil {
			return n, err
		}
		if ended {
			n++
		}
		w.idleAfter = &store.TurnCursor{CreatedAt: p.Turn.CreatedAt, ID: p.Turn.ID}
	}
	if len(idle) < limit {
		w.idleAfter = nil // all seen: the next sweep starts from the oldest
	}
	return n, nil
}

// endOrphan ends the idle running turn failed when its company's workflow
// is closed, missing or runs another turn, and says whether it did.
func (w *Sweeper) endOrphan(ctx context.Context, p store.ScopedTurn) (bool, error) {
	id, running, err := workflowTurn(ctx, w.Temporal, p.Turn.CompanyID)
	if err != nil || running && (id == "" || id == p.Turn.ID) {
		return false, err
	}
	status, err := w.Engine.FinishTurn(ctx, Scopes{Company: p.Scope, Conglomerate: p.Account},
		contract.FinishTurnInput{TurnRef: contract.TurnRef{TurnID: p.Turn.ID, CompanyID: p.Turn.CompanyID, ConglomerateID: p.Turn.ConglomerateID}, Status: models.TurnFailed, ErrorCode: string(models.CodeInternal),
			ErrorDetail: "The turn's workflow stopped before the turn ended; send the message again."})
	if err != nil || status != models.TurnFailed {
		return false, err
	}
	w.Logger.WarnContext(ctx, "turn sweep: a running turn's workflow was gone; the turn ended failed", "company", p.Turn.CompanyID, "turn", p.Turn.ID)
	return true, nil
}
