package turns

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"holdco/models"
	"holdco/observability"
	"holdco/service/agenttools"
	"holdco/service/billing"
	"holdco/service/traces"
	"holdco/store"
	"holdco/workflows/contract"
)

// Model is the language model a turn calls (providers/llm/...).
type Model interface {
	Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error)
}

// Engine runs the steps of an agent turn: the rules the turn workflow's
// activities (activities.Turns) carry out, one call per activity. Every
// step is idempotent: what a step did is stored under (turn, step, part)
// before it is charged, and each charge has its own key, so a step run
// again after a crash finds its earlier work and never pays a call twice.
// It knows nothing of Temporal: a failure that decides the turn's end is
// a *StepError, which the activity turns into the workflow's error.
type Engine struct {
	Store   *store.Store
	Billing *billing.Service
	Tools   *agenttools.Catalog
	Model   Model
	// Scheduled starts scheduled runs (nil: they skip).
	Scheduled *Service
	// Traces writes each run's JSONL trace; nil writes none.
	Traces *traces.Writer
	Logger *slog.Logger
	// TextEvery is how often the streamed text is written to the turn row
	// (0: 500 ms).
	TextEvery time.Duration
	// MaxOutputTokens caps a model call's answer (the configured
	// HOLDCO_LLM_MAX_TOKENS; 0: the adapter's default, DefaultMaxOutputTokens).
	// A call holds its maximum price, which this bounds, before it runs.
	MaxOutputTokens int
}

// Scopes are the turn's company and its account as the worker acts on
// them: the activities make them (the store's System producers) and the
// engine works within them.
type Scopes struct {
	Company      store.CompanyScope
	Conglomerate store.ConglomerateScope
}

// StepError is a step's failure as the engine decides it. Unless
// Retryable, the turn ends failed with Code (a connector error case) and
// Message as its detail; a retryable one is tried again by the activity's
// retry policy (after RetryAfter when the provider gave one).
// Interrupted: the call was cancelled (the turn's interrupt, the worker's
// shutdown), Message names the call.
type StepError struct {
	Code        models.ErrorCode
	Message     string
	Retryable   bool
	RetryAfter  time.Duration
	Interrupted bool
	Err         error
}

func (e *StepError) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *StepError) Unwrap() error { return e.Err }

func interrupted(op string, err error) error {
	return &StepError{Interrupted: true, Message: op, Err: err}
}

// isInterrupt reports whether err is a step's interrupted end.
func isInterrupt(err error) bool {
	var se *StepError
	return errors.As(err, &se) && se.Interrupted
}

// turnFailure ends the turn failed with code: not retried.
func turnFailure(code models.ErrorCode, message string) error {
	return &StepError{Code: code, Message: message}
}

// StartTurn marks the turn running. A turn that no longer exists or that
// ended already (interrupted while queued) is not worked on.
func (e *Engine) StartTurn(ctx context.Context, sc Scopes, ref contract.TurnRef) (contract.StartTurnResult, error) {
	scope := sc.Company
	turn, err := e.Store.Turns().MarkTurnRunning(ctx, scope, ref.TurnID, time.Now().UTC())
	if errors.Is(err, models.ErrNotFound) {
		return contract.StartTurnResult{}, nil
	}
	if err != nil {
		return contract.StartTurnResult{}, err
	}
	if turn.Status == models.TurnRunning {
		if err := e.moveTask(ctx, scope, turn, models.TaskDispatched, models.TaskRunning, ""); err != nil {
			return contract.StartTurnResult{}, err
		}
		e.trace(ctx, turn.ID, "000000-start", traces.Event{Type: traces.EventTurnStarted,
			Data: map[string]any{"trigger": string(turn.Trigger), "session_id": turn.SessionID, "message_chars": len(turn.Message)}})
	}
	return contract.StartTurnResult{Active: turn.Status == models.TurnRunning}, nil
}

// FinishTurn writes the turn's end once: status, the agent's text, the
// final answer (the last step's text of a completed turn), the question,
// the error and what the run was charged (from the ledger), with a
// turn_ended event in the feed. It returns the status stored (the first
// end written wins).
func (e *Engine) FinishTurn(ctx context.Context, sc Scopes, in contract.FinishTurnInput) (models.TurnStatus, error) {
	scope := sc.Company
	turn, err := e.Store.Turns().GetTurn(ctx, scope, in.TurnID)
	if errors.Is(err, models.ErrNotFound) {
		return in.Status, nil
	}
	if err != nil {
		return "", err
	}
	if !turn.Status.Active() {
		return turn.Status, nil
	}
	history, err := e.Store.Turns().SessionMessages(ctx, scope, turn.SessionID)
	if err != nil {
		return "", err
	}
	var texts []string
	last := ""
	for _, m := range history {
		if m.TurnID == turn.ID && m.Role == models.RoleAssistant {
			if s := textOf(m.Content); s != "" {
				texts = append(texts, s)
			}
			last = textOf(m.Content)
		}
	}
	cong := sc.Conglomerate
	// Nothing of the turn runs any more: what its calls still hold is free.
	if err := e.Billing.ReleaseRun(ctx, cong, turn.ID); err != nil {
		return "", err
	}
	cost, err := e.Store.Turns().RunCredits(ctx, cong, turn.ID)
	if err != nil {
		return "", err
	}
	r := models.TurnResult{Status: in.Status, Question: in.Question, ErrorCode: in.ErrorCode, ErrorDetail: cut(in.ErrorDetail, 1000),
		CreditsCost: &cost, EndedAt: time.Now().UTC()}
	if in.Status == models.TurnCompleted {
		r.Answer = last
	}
	summary := map[models.TurnStatus]string{
		models.TurnCompleted:   "The agent finished a turn",
		models.TurnWaiting:     "The agent asked a question",
		models.TurnFailed:      "A turn of the agent failed",
		models.TurnInterrupted: "A turn of the agent was interrupted",
	}[in.Status]
	// The task of a task run first, so whoever sees the turn ended sees its
	// task moved (a retry finds the task moved already and goes on).
	var move error
	switch in.Status {
	case models.TurnCompleted:
		move = e.moveTask(ctx, scope, turn, models.TaskRunning, models.TaskDone, "")
	case models.TurnWaiting:
		move = e.moveTask(ctx, scope, turn, models.TaskRunning, models.TaskFailed, "The agent asked a question: "+cut(in.Question, 900))
	default:
		reason := "The run was " + string(in.Status)
		if in.ErrorDetail != "" {
			reason += ": " + cut(in.ErrorDetail, 900)
		}
		move = e.moveTask(ctx, scope, turn, models.TaskRunning, models.TaskFailed, reason)
	}
	if move != nil {
		return "", move
	}
	// The trace is complete before the turn reads as ended; its end
	// event goes straight into the joined trace.
	if e.Traces != nil {
		end := traces.Event{Type: traces.EventTurnEnded, // stamped by the writer
			Data: map[string]any{"status": string(in.Status), "error": in.ErrorCode, "credits": cost}}
		if err := e.Traces.Finish(ctx, turn.ID, end); err != nil {
			e.Logger.WarnContext(ctx, "turn trace: finish", "turn", turn.ID, "error", err)
		}
	}
	ended, wrote, err := e.Store.Turns().FinishTurn(ctx, scope, turn.ID, strings.Join(texts, "\n\n"), r, models.ActivityInput{
		Kind: models.ActivityTurnEnded, Actor: models.ActorAgent, Summary: summary,
		Data: map[string]any{"credits": cost, "trigger": string(turn.Trigger)}})
	if err != nil {
		return "", err
	}
	if wrote {
		observability.TurnEnded(string(ended.Status))
	}
	return ended.Status, nil
}

// StartScheduledRun is what a company's schedule runs: it starts the
// company's turn or says why it skipped.
func (e *Engine) StartScheduledRun(ctx context.Context, company store.CompanyScope) (contract.ScheduledRunResult, error) {
	if e.Scheduled == nil {
		return contract.ScheduledRunResult{Skipped: "scheduled runs are not configured"}, nil
	}
	return e.Scheduled.StartScheduledRun(ctx, company)
}

// moveTask moves a task run's task from one status to another (the first
// move wins; a task an operator changed meanwhile is left as it is).
func (e *Engine) moveTask(ctx context.Context, scope store.CompanyScope, turn models.Turn, from, to models.TaskStatus, reason string) error {
	if turn.TaskID == nil {
		return nil
	}
	ch := models.TaskChanges{Status: &to}
	if to == models.TaskFailed {
		ch.FailureReason = &reason
	}
	_, err := e.Store.Companies().UpdateTask(ctx, scope, *turn.TaskID, from, ch, models.ActivityInput{Kind: models.ActivityTaskUpdated, Actor: models.ActorAgent,
		Summary: "Task " + string(to), Data: map[string]any{"run_id": turn.ID}})
	if errors.Is(err, store.ErrTaskStatusChanged) || errors.Is(err, models.ErrNotFound) {
		return nil
	}
	return err
}

// traceAside is trace while the caller goes on with the step's own
// writes; wait returns once the part is stored or its failure logged. A
// step waits before it returns, so the part of a finished step is there
// for FinishTurn's join.
func (e *Engine) traceAside(ctx context.Context, runID, part string, events ...traces.Event) (wait func()) {
	if e.Traces == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.trace(ctx, runID, part, events...)
	}()
	return func() { <-done }
}

// trace stores events as one part of the run's trace; a failure is logged
// and never fails the turn.
func (e *Engine) trace(ctx context.Context, runID, part string, events ...traces.Event) {
	if e.Traces == nil {
		return
	}
	now := time.Now().UTC()
	for i := range events {
		events[i].Time = now
	}
	if err := e.Traces.Append(ctx, runID, part, events...); err != nil {
		e.Logger.WarnContext(ctx, "turn trace", "turn", runID, "part", part, "error", err)
	}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// textOf joins a message's text blocks.
func textOf(content []models.ContentBlock) string {
	var b strings.Builder
	for _, c := range content {
		if c.Type == models.ContentText {
			b.WriteString(c.Text)
		}
	}
	return strings.TrimSpace(b.String())
}
