package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/models"
	"holdco/workflows/contract"
)

// modelActivity is a model call: it heartbeats every second, so an
// interrupt reaches it at once and a dead worker is noticed within the
// heartbeat timeout; the retry policy retries rate limits, overloads and
// broken streams (after the provider's retry-after when given).
var modelActivity = workflow.ActivityOptions{
	StartToCloseTimeout: 10 * time.Minute,
	HeartbeatTimeout:    10 * time.Second,
	WaitForCancellation: true,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    time.Minute,
		MaximumAttempts:    6,
		NonRetryableErrorTypes: []string{contract.ErrTurnInsufficientCredits, contract.ErrTurnRateLimited,
			contract.ErrTurnTooLarge, contract.ErrTurnInternal},
	},
}

// toolActivity is a tool call (documents, email, SQL…): bounded, retried
// a few times when the service side fails.
var toolActivity = workflow.ActivityOptions{
	StartToCloseTimeout: 2 * time.Minute,
	HeartbeatTimeout:    10 * time.Second,
	WaitForCancellation: true,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    10 * time.Second,
		MaximumAttempts:    5,
		NonRetryableErrorTypes: []string{contract.ErrTurnInsufficientCredits, contract.ErrTurnRateLimited,
			contract.ErrTurnInternal},
	},
}

// bookkeeping is the start and the end of a turn: database writes only.
var bookkeeping = workflow.ActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    30 * time.Second,
	},
}

// localBookkeeping runs the start and the end of a turn as local
// activities: inside the workflow task that needs them, with no activity
// task, no round trip through the server and no workflow task of their
// own. Both steps are idempotent (the row's first end wins), so one run
// again after a worker died mid-task is harmless.
var localBookkeeping = workflow.LocalActivityOptions{
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy:         bookkeeping.RetryPolicy,
}

// localToolActivity runs a quick tool's call (contract.ToolCallRef.Quick)
// as a local activity: in the workflow task that got the model's answer,
// with no activity task and no workflow task of its own. Its retries are
// the tool activity's. ToolStep is idempotent (a call whose result is
// stored is not made again), so an attempt run again after a worker died
// mid-task finds the stored result, as a retried activity does. An
// interrupt reaches the workflow once the call returns: quick calls take
// milliseconds.
var localToolActivity = workflow.LocalActivityOptions{
	StartToCloseTimeout: toolActivity.StartToCloseTimeout,
	RetryPolicy:         toolActivity.RetryPolicy,
}

// Versions of the turn workflow (workflow.GetVersion). Runs started before
// a version replay with the code they started with.
const (
	// changeLocalBookkeeping: StartTurn and FinishTurn are local
	// activities (before: activities).
	changeLocalBookkeeping = "turn-local-bookkeeping"
	// changeLocalTools: quick tools' calls are local activities (before:
	// every tool call was an activity).
	changeLocalTools = "turn-local-tools"
)

// turnWorkflow is one agent turn: its state, the handlers that read and
// change it, and the loop of model and tool calls.
type turnWorkflow struct {
	in    contract.TurnInput
	state contract.TurnState
	ref   contract.TurnRef
	// cancel cancels the call in flight (nil between calls).
	cancel workflow.CancelFunc
	ended  bool
	// calls counts the activities this run made: the history grows by
	// about eventsPerCall with each.
	calls int
	// local: the bookkeeping steps run as local activities (the version
	// of this run, changeLocalBookkeeping).
	local bool
	// localTools: quick tools' calls run as local activities
	// (changeLocalTools).
	localTools bool
}

// eventsPerCall is the history a call adds: scheduled, started, completed
// and the workflow task around it.
const eventsPerCall = 6

// Turn runs an agent turn: model call, its tool calls, again, until the
// model answers without tools (completed), asks the user (waiting), an
// interrupt arrives (interrupted) or a call fails for good (failed). Long
// turns continue as new at a step boundary.
func Turn(ctx workflow.Context, in contract.TurnInput) (contract.TurnState, error) {
	w := &turnWorkflow{in: in, ref: contract.TurnRef{TurnID: in.TurnID, CompanyID: in.CompanyID, ConglomerateID: in.ConglomerateID},
		state: contract.TurnState{TurnID: in.TurnID, Status: models.TurnQueued, Step: in.Step}}
	if in.Step > 0 {
		w.state.Status = models.TurnRunning
	}
	if err := workflow.SetQueryHandler(ctx, contract.QueryTurnState, func() (contract.TurnState, error) { return w.state, nil }); err != nil {
		return w.state, err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, contract.UpdateInterrupt, w.interrupt, workflow.UpdateHandlerOptions{
		Validator: func(_ workflow.Context, turnID string) error {
			if turnID != w.in.TurnID {
				return fmt.Errorf("turn %s is not the running turn", turnID)
			}
			return nil
		},
	}); err != nil {
		return w.state, err
	}
	st, err := w.run(ctx)
	// An interrupt's update returns once the turn has ended.
	w.ended = true
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return st, err
}

// interrupt cancels the call in flight and waits until the turn ended.
func (w *turnWorkflow) interrupt(ctx workflow.Context, _ string) (contract.TurnState, error) {
	w.state.Interrupted = true
	if w.cancel != nil {
		w.cancel()
	}
	err := workflow.Await(ctx, func() bool { return w.ended || !w.state.Status.Active() })
	return w.state, err
}

func (w *turnWorkflow) run(ctx workflow.Context) (contract.TurnState, error) {
	var a *activities.Turns
	w.local = workflow.GetVersion(ctx, changeLocalBookkeeping, workflow.DefaultVersion, 1) >= 1
	w.localTools = workflow.GetVersion(ctx, changeLocalTools, workflow.DefaultVersion, 1) >= 1
	if w.in.Step == 0 {
		var started contract.StartTurnResult
		if err := w.bookkeep(ctx, a.StartTurn, w.ref).Get(ctx, &started); err != nil {
			return w.finish(ctx, models.TurnFailed, "", err)
		}
		if !started.Active {
			w.state.Status = models.TurnInterrupted
			return w.state, nil
		}
		w.state.Status = models.TurnRunning
	}
	limit := w.in.MaxHistoryEvents
	if limit <= 0 {
		limit = contract.DefaultTurnHistoryEvents
	}
	for step := w.in.Step + 1; ; step++ {
		if w.state.Interrupted {
			return w.finish(ctx, models.TurnInterrupted, "", nil)
		}
		if step > contract.MaxTurnSteps {
			return w.finish(ctx, models.TurnFailed, "", temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("The turn reached its limit of %d steps; send a message to go on.", contract.MaxTurnSteps), string(models.CodeRateLimited), nil))
		}
		if step > w.in.Step+1 && (max(workflow.GetInfo(ctx).GetCurrentHistoryLength(), w.calls*eventsPerCall) >= limit ||
			workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			// Updates in flight are answered by the next run (the client
			// retries them there); none is lost.
			next := w.in
			next.Step = step - 1
			return w.state, workflow.NewContinueAsNewError(ctx, Turn, next)
		}
		w.state.Step, w.state.Doing = step, "model"
		in := contract.StepInput{TurnRef: w.ref, Step: step}
		var out contract.ModelStepResult
		if err := w.call(ctx, modelActivity, a.ModelStep, in, &out); err != nil {
			return w.finish(ctx, models.TurnFailed, "", err)
		}
		if len(out.Calls) == 0 {
			return w.finish(ctx, models.TurnCompleted, "", nil)
		}
		question := ""
		for _, c := range out.Calls {
			if w.state.Interrupted {
				return w.finish(ctx, models.TurnInterrupted, "", nil)
			}
			w.state.Doing = "tool:" + c.Name
			var res contract.ToolStepResult
			if err := w.callTool(ctx, c, contract.ToolStepInput{StepInput: in, Index: c.Index}, &res); err != nil {
				return w.finish(ctx, models.TurnFailed, "", err)
			}
			if res.Question != "" && question == "" {
				question = res.Question
			}
		}
		w.state.Doing = ""
		if question != "" {
			return w.finish(ctx, models.TurnWaiting, question, nil)
		}
	}
}

// call runs an activity that an interrupt can cancel.
func (w *turnWorkflow) call(ctx workflow.Context, opts workflow.ActivityOptions, fn, in, out any) error {
	callCtx, done := w.cancellable(workflow.WithActivityOptions(ctx, opts))
	defer done()
	return workflow.ExecuteActivity(callCtx, fn, in).Get(callCtx, out)
}

// callTool runs a tool call: a quick tool's as a local activity (in runs
// of changeLocalTools), any other as an activity.
func (w *turnWorkflow) callTool(ctx workflow.Context, c contract.ToolCallRef, in contract.ToolStepInput, out *contract.ToolStepResult) error {
	var a *activities.Turns
	if !w.localTools || !c.Quick {
		return w.call(ctx, toolActivity, a.ToolStep, in, out)
	}
	callCtx, done := w.cancellable(workflow.WithLocalActivityOptions(ctx, localToolActivity))
	defer done()
	return workflow.ExecuteLocalActivity(callCtx, a.ToolStep, in).Get(callCtx, out)
}

// cancellable is ctx for the call in flight, which an interrupt cancels
// (w.cancel) until done; it counts the call.
func (w *turnWorkflow) cancellable(ctx workflow.Context) (callCtx workflow.Context, done func()) {
	callCtx, cancel := workflow.WithCancel(ctx)
	w.cancel = cancel
	w.calls++
	return callCtx, func() { w.cancel = nil; cancel() }
}

// finish writes the turn's end (in a context an interrupt does not
// cancel). An error decides the failure's code and detail; a canceled
// call after an interrupt is the interrupt.
func (w *turnWorkflow) finish(ctx workflow.Context, status models.TurnStatus, question string, cause error) (contract.TurnState, error) {
	in := contract.FinishTurnInput{TurnRef: w.ref, Status: status, Question: question}
	if cause != nil {
		if w.state.Interrupted || isCanceled(cause) {
			in.Status = models.TurnInterrupted
		} else {
			in.ErrorCode, in.ErrorDetail = failure(cause)
		}
	}
	w.state.Doing = ""
	var stored models.TurnStatus
	var a *activities.Turns
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	if err := w.bookkeep(dctx, a.FinishTurn, in).Get(dctx, &stored); err != nil {
		return w.state, err
	}
	w.state.Status = stored
	return w.state, nil
}

// bookkeep runs a bookkeeping step (a method value of a nil
// *activities.Turns: the worker's registered activity runs): a local
// activity, or an activity in runs started before changeLocalBookkeeping.
func (w *turnWorkflow) bookkeep(ctx workflow.Context, fn, in any) workflow.Future {
	if w.local {
		return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, localBookkeeping), fn, in)
	}
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, bookkeeping), fn, in)
}

func isCanceled(err error) bool {
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) {
		return true
	}
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == contract.ErrInterrupted
}

// failure is the connector error case and the sentence for a failed call.
func failure(err error) (code, detail string) {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		switch appErr.Type() {
		case contract.ErrTurnInsufficientCredits, contract.ErrTurnRateLimited, contract.ErrTurnUpstream,
			contract.ErrTurnTooLarge, contract.ErrTurnInternal:
			return appErr.Type(), appErr.Message()
		}
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return string(models.CodeUpstreamUnavailable), "A call of the turn did not finish in time; send the message again."
	}
	return string(models.CodeInternal), "The turn failed on the service side; send the message again shortly."
}
