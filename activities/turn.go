package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"holdco/models"
	"holdco/service"
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

// Turns is the activity set of the agent turn workflow. Every activity is
// idempotent: what a step did is stored under (turn, step, part) before it
// is charged, and each charge has its own key, so an activity retried
// after a crash finds its earlier work and never pays a call twice.
type Turns struct {
	Store   *store.Store
	Billing *billing.Service
	Tools   *agenttools.Catalog
	Model   Model
	// Scheduled starts scheduled runs (nil: they skip).
	Scheduled ScheduledRuns
	// Traces writes each run's JSONL trace; nil writes none.
	Traces *traces.Writer
	Logger *slog.Logger
	// TextEvery is how often the streamed text is written to the turn row
	// (0: 500 ms).
	TextEvery time.Duration
	// HeartbeatEvery is how often a model call heartbeats (0: 1 s); an
	// interrupt reaches the call at its next heartbeat.
	HeartbeatEvery time.Duration
	// MaxOutputTokens caps a model call's answer (the configured
	// HOLDCO_LLM_MAX_TOKENS; 0: the adapter's default, DefaultMaxOutputTokens).
	// A call holds its maximum price, which this bounds, before it runs.
	MaxOutputTokens int
}

// DefaultMaxOutputTokens is the adapters' answer cap when none is
// configured.
const DefaultMaxOutputTokens = 4096

// Error types of the turn activities' non-retryable failures: the turn
// ends failed with this code (a connector error case) and the message as
// its detail.
const (
	ErrTurnInsufficientCredits = string(models.CodeInsufficientCredits)
	ErrTurnRateLimited         = string(models.CodeRateLimited)
	ErrTurnUpstream            = string(models.CodeUpstreamUnavailable)
	ErrTurnTooLarge            = string(models.CodeTooLarge)
	ErrTurnInternal            = string(models.CodeInternal)
)

// TurnRef names a turn and its company.
type TurnRef struct {
	TurnID         string
	CompanyID      string
	ConglomerateID string
}

// StartTurnResult says whether the turn is still to be worked on.
type StartTurnResult struct {
	Active bool
}

// StartTurn marks the turn running. A turn that no longer exists or that
// ended already (interrupted while queued) is not worked on.
func (t *Turns) StartTurn(ctx context.Context, ref TurnRef) (StartTurnResult, error) {
	scope, err := t.Store.SystemCompanyScope(ctx, ref.CompanyID)
	if errors.Is(err, models.ErrNotFound) {
		return StartTurnResult{}, nil
	}
	if err != nil {
		return StartTurnResult{}, err
	}
	turn, err := t.Store.MarkTurnRunning(ctx, scope, ref.TurnID, time.Now().UTC())
	if errors.Is(err, models.ErrNotFound) {
		return StartTurnResult{}, nil
	}
	if err != nil {
		return StartTurnResult{}, err
	}
	if turn.Status == models.TurnRunning {
		if err := t.moveTask(ctx, scope, turn, models.TaskDispatched, models.TaskRunning, ""); err != nil {
			return StartTurnResult{}, err
		}
		t.trace(ctx, turn.ID, "000000-start", traces.Event{Type: traces.EventTurnStarted,
			Data: map[string]any{"trigger": string(turn.Trigger), "session_id": turn.SessionID, "message_chars": len(turn.Message)}})
	}
	return StartTurnResult{Active: turn.Status == models.TurnRunning}, nil
}

// StepInput names one step of a turn.
type StepInput struct {
	TurnRef
	Step int
}

// ToolCallRef is one tool call of a step's model answer.
type ToolCallRef struct {
	Index int
	ID    string
	Name  string
	// Control: the workflow handles the call (ask_question).
	Control bool
}

// ModelStepResult is a model call's outcome: the tool calls to make, or
// none when the answer is final.
type ModelStepResult struct {
	Calls []ToolCallRef
}

// ModelStep calls the model with the session's conversation and stores its
// answer as the step's message (part 0), then charges the call
// (TOKEN_USAGE_PARTIAL with the run id, key "<turn>/model/<step>"). Before
// the call, its maximum price is held under the same key (or what the
// account has left, at least one credit), so concurrent turns cannot make
// calls the balance does not cover; the charge settles the hold. The
// streamed text reaches the turn row at most every TextEvery.
func (t *Turns) ModelStep(ctx context.Context, in StepInput) (_ ModelStepResult, err error) {
	scope, turn, err := t.turn(ctx, in.TurnRef)
	if err != nil {
		return ModelStepResult{}, err
	}
	msg, err := t.Store.GetTurnMessage(ctx, scope, in.TurnID, in.Step, 0)
	switch {
	case errors.Is(err, models.ErrNotFound):
		msg, err = t.callModel(ctx, scope, turn, in.Step)
		if err != nil {
			return ModelStepResult{}, err
		}
	case err != nil:
		return ModelStepResult{}, err
	}
	if err := t.charge(ctx, scope, billing.Usage{CompanyID: in.CompanyID, RunID: in.TurnID, Type: models.EntryTokenUsagePartial,
		Credits: billing.ModelCallCredits(models.ModelUsage{InputTokens: msg.InputTokens, OutputTokens: msg.OutputTokens}),
		Key:     modelKey(in.TurnID, in.Step)}); err != nil {
		return ModelStepResult{}, err
	}
	var out ModelStepResult
	for _, b := range msg.Content {
		if b.Type == models.ContentToolUse {
			out.Calls = append(out.Calls, ToolCallRef{Index: len(out.Calls), ID: b.ToolUseID, Name: b.ToolName, Control: t.Tools.IsControl(b.ToolName)})
		}
	}
	return out, nil
}

// callModel makes the step's model call and stores the answer.
func (t *Turns) callModel(ctx context.Context, scope store.CompanyScope, turn models.Turn, step int) (models.TurnMessage, error) {
	company, err := t.Store.GetCompany(ctx, scope)
	if err != nil {
		return models.TurnMessage{}, err
	}
	history, err := t.Store.SessionMessages(ctx, scope, turn.SessionID)
	if err != nil {
		return models.TurnMessage{}, err
	}
	// The text of this turn's earlier steps: what the agent said so far.
	var earlier []string
	for _, m := range history {
		if m.TurnID == turn.ID && m.Role == models.RoleAssistant && m.Step < step {
			if s := textOf(m.Content); s != "" {
				earlier = append(earlier, s)
			}
		}
	}
	req := models.ModelRequest{System: systemPrompt(company, turn), Messages: conversation(history), Tools: t.Tools.Specs(),
		MaxTokens: t.MaxOutputTokens}
	// The call's maximum price is held before it runs (at least one
	// credit must be free): the balance bounds the calls in flight.
	hold := billing.Usage{CompanyID: turn.CompanyID, RunID: turn.ID, Type: models.EntryTokenUsagePartial,
		Credits: MaxModelCallCredits(req, t.MaxOutputTokens), Key: modelKey(turn.ID, step)}
	cong := t.Store.SystemConglomerateScope(scope.ConglomerateID())
	if _, _, err := t.Billing.Reserve(ctx, cong, hold, 1); err != nil {
		return models.TurnMessage{}, t.chargeError(err, "The account has no credits left for the next model call; top up to continue.")
	}

	stream := newTextStream(strings.Join(earlier, "\n\n"))
	stop := t.keepAlive(ctx, scope, turn.ID, stream)
	began := time.Now()
	resp, err := t.Model.Complete(ctx, req, stream.add)
	stop()
	if err != nil {
		// No answer, nothing to pay: the hold is freed (a retry holds
		// again).
		if rerr := t.Billing.Release(context.WithoutCancel(ctx), cong, hold.Key); rerr != nil {
			t.Logger.WarnContext(ctx, "turn: releasing a model call's hold", "turn", turn.ID, "error", rerr)
		}
	}
	part := fmt.Sprintf("%06d-model", step)
	request := traces.Event{Type: traces.EventModelRequest, Step: step,
		Data: map[string]any{"messages": len(req.Messages), "tools": len(req.Tools), "system_chars": len(req.System)}}
	if err != nil {
		t.trace(ctx, turn.ID, part, request, traces.Event{Type: traces.EventError, Step: step, Error: err.Error()})
		return models.TurnMessage{}, modelError(ctx, err)
	}
	var calls []map[string]any
	for _, c := range resp.ToolCalls() {
		calls = append(calls, map[string]any{"id": c.ToolUseID, "name": c.ToolName, "input": string(c.Input)})
	}
	usage := models.ModelUsage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens}
	t.trace(ctx, turn.ID, part, request,
		traces.Event{Type: traces.EventModelResponse, Step: step, Model: resp.Model,
			Data: map[string]any{"stop_reason": string(resp.StopReason), "text": resp.Text(), "tool_calls": calls, "ms": time.Since(began).Milliseconds()}},
		traces.Event{Type: traces.EventUsage, Step: step, Model: resp.Model,
			Usage: &traces.Usage{InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens, Credits: billing.ModelCallCredits(usage)}})
	content := resp.Content
	if len(content) == 0 {
		content = []models.ContentBlock{{Type: models.ContentText, Text: ""}}
	}
	msg, _, err := t.Store.PutTurnMessage(ctx, scope, models.TurnMessage{TurnID: turn.ID, Step: step, Part: 0, Role: models.RoleAssistant,
		Content: content, Model: resp.Model, InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens})
	if err != nil {
		return msg, err
	}
	if s := stream.full(textOf(content)); s != "" {
		if err := t.Store.SetTurnText(ctx, scope, turn.ID, s); err != nil {
			t.Logger.WarnContext(ctx, "turn text", "turn", turn.ID, "error", err)
		}
	}
	return msg, nil
}

// keepAlive heartbeats (so an interrupt reaches the call and a dead worker
// is noticed) and, with a stream, writes the streamed text to the row at
// most every TextEvery, until the returned function is called.
func (t *Turns) keepAlive(ctx context.Context, scope store.CompanyScope, turnID string, s *textStream) (stop func()) {
	beat, write := t.HeartbeatEvery, t.TextEvery
	if beat <= 0 {
		beat = time.Second
	}
	if write <= 0 {
		write = 500 * time.Millisecond
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		hb, wr := time.NewTicker(beat), time.NewTicker(write)
		defer hb.Stop()
		defer wr.Stop()
		activity.RecordHeartbeat(ctx)
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-hb.C:
				activity.RecordHeartbeat(ctx)
			case <-wr.C:
				if s == nil {
					continue
				}
				if text, changed := s.take(); changed {
					if err := t.Store.SetTurnText(ctx, scope, turnID, text); err != nil && ctx.Err() == nil {
						t.Logger.WarnContext(ctx, "turn text", "turn", turnID, "error", err)
					}
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// ToolStepInput names one tool call of a step (its index among the
// answer's tool calls).
type ToolStepInput struct {
	StepInput
	Index int
}

// ToolStepResult is a tool call's outcome.
type ToolStepResult struct {
	IsError bool
	// Question is ask_question's question (the turn then ends waiting).
	Question string
}

// ToolStep makes one tool call of a step and stores its result (part
// index+1). The call carries its idempotency key "<turn>/tool/<step>/<index>"
// (service.Call): a use case with a side effect stores the effect under
// an id derived from it, so a retry after a crash between the effect and
// the stored result finds the effect instead of repeating it, and a
// billable tool is paid under it before its effect (billing.PayFor: held,
// charged TOOL_USAGE on success, once). A tool's own refusal — including
// insufficient_credits for a billable tool — is a result for the model
// (IsError), not a failure of the turn.
func (t *Turns) ToolStep(ctx context.Context, in ToolStepInput) (ToolStepResult, error) {
	index := in.Index
	scope, _, err := t.turn(ctx, in.TurnRef)
	if err != nil {
		return ToolStepResult{}, err
	}
	answer, err := t.Store.GetTurnMessage(ctx, scope, in.TurnID, in.Step, 0)
	if err != nil {
		return ToolStepResult{}, err
	}
	var call *models.ContentBlock
	n := 0
	for i := range answer.Content {
		if answer.Content[i].Type == models.ContentToolUse {
			if n == index {
				call = &answer.Content[i]
				break
			}
			n++
		}
	}
	if call == nil {
		return ToolStepResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("step %d has no tool call %d", in.Step, index), ErrTurnInternal, nil)
	}
	var out ToolStepResult
	if call.ToolName == agenttools.ToolAskQuestion {
		var q agenttools.AskQuestionInput
		_ = json.Unmarshal(call.Input, &q)
		out.Question = strings.TrimSpace(q.Question)
		if out.Question == "" {
			out.Question = "Could you tell me more?"
		}
	}
	stored, err := t.Store.GetTurnMessage(ctx, scope, in.TurnID, in.Step, index+1)
	switch {
	case errors.Is(err, models.ErrNotFound):
		stop := t.keepAlive(ctx, scope, in.TurnID, nil)
		stored, err = t.callTool(ctx, scope, in, *call, out.Question)
		stop()
		if err == nil && len(stored.Content) > 0 {
			res := stored.Content[0]
			t.trace(ctx, in.TurnID, fmt.Sprintf("%06d-tool-%02d", in.Step, index),
				traces.Event{Type: traces.EventToolCall, Step: in.Step, Tool: call.ToolName, CallID: call.ToolUseID, Data: string(call.Input)},
				traces.Event{Type: traces.EventToolResult, Step: in.Step, Tool: call.ToolName, CallID: call.ToolUseID,
					Data: map[string]any{"is_error": res.IsError, "result": res.Text}})
		}
		if err != nil {
			return ToolStepResult{}, err
		}
	case err != nil:
		return ToolStepResult{}, err
	}
	out.IsError = len(stored.Content) > 0 && stored.Content[0].IsError
	return out, nil
}

func (t *Turns) callTool(ctx context.Context, scope store.CompanyScope, in ToolStepInput, call models.ContentBlock, question string) (models.TurnMessage, error) {
	var result json.RawMessage
	isError := false
	if question != "" {
		result, _ = json.Marshal(map[string]string{"status": "asked", "note": "The question was sent to the user; their answer is their next message."})
	} else {
		agent := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialCompanyKey,
			CredentialID: "turn:" + in.TurnID, CompanyID: in.CompanyID, ConglomerateID: in.ConglomerateID})
		agent = service.WithCall(agent, service.Call{RunID: in.TurnID, Key: ToolCallKey(in.TurnID, in.Step, in.Index)})
		res, err := t.Tools.Call(agent, in.CompanyID, call.ToolName, call.Input)
		if err != nil {
			if ctx.Err() != nil {
				return models.TurnMessage{}, interrupted(ctx, "tool "+call.ToolName, err)
			}
			var de *models.Error
			if !errors.As(err, &de) || de.Code == models.CodeInternal || de.Code == models.CodeUpstreamUnavailable {
				// The service side failed: retried by the activity's policy;
				// the model sees the error once the retries are spent.
				if activity.GetInfo(ctx).Attempt < toolAttempts {
					return models.TurnMessage{}, err
				}
			}
			res, isError = agenttools.ErrorJSON(err), true
		}
		result = res
	}
	msg, _, err := t.Store.PutTurnMessage(ctx, scope, models.TurnMessage{TurnID: in.TurnID, Step: in.Step, Part: in.Index + 1,
		Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentToolResult, ToolUseID: call.ToolUseID, Text: string(result), IsError: isError}}})
	return msg, err
}

// charge spends a call's credits once (by its key). When the balance
// cannot cover it, what is left is charged under the same key (nothing
// is overdrawn, and a retry pays nothing more) and the turn fails with
// insufficient_credits; the daily cap fails it with rate_limited.
//
// The charge settles the call's hold (same key): the held credits are the
// charge's, so a call that cost no more than it held is always paid.
func (t *Turns) charge(ctx context.Context, scope store.CompanyScope, u billing.Usage) error {
	cong := t.Store.SystemConglomerateScope(scope.ConglomerateID())
	st, _, err := t.Billing.SpendOnce(ctx, cong, u)
	if isCode(err, models.CodeInsufficientCredits) && st.Balance > 0 {
		rest := u
		rest.Credits = st.Balance
		if _, _, err := t.Billing.SpendOnce(ctx, cong, rest); err != nil && !isCode(err, models.CodeInsufficientCredits) {
			return err
		}
	}
	return t.chargeError(err, "The account ran out of credits during the turn; top up to continue.")
}

// chargeError makes a refused hold or charge the turn's failure:
// insufficient_credits (with the sentence given) or rate_limited (the
// daily cap), neither retried.
func (t *Turns) chargeError(err error, insufficient string) error {
	var de *models.Error
	if !errors.As(err, &de) {
		return err
	}
	switch de.Code {
	case models.CodeInsufficientCredits:
		return temporal.NewNonRetryableApplicationError(insufficient, ErrTurnInsufficientCredits, nil)
	case models.CodeRateLimited:
		return temporal.NewNonRetryableApplicationError(de.Detail, ErrTurnRateLimited, nil)
	}
	return err
}

// modelKey is the charge key (and hold key) of a step's model call.
func modelKey(turnID string, step int) string { return fmt.Sprintf("%s/model/%d", turnID, step) }

// ToolCallKey is the idempotency key of a step's index-th tool call: its
// effects' ids derive from it and a billable tool is charged under it.
func ToolCallKey(turnID string, step, index int) string {
	return fmt.Sprintf("%s/tool/%d/%d", turnID, step, index)
}

// MaxModelCallCredits is the most a call with this request can cost: its
// input estimated high (one token per InputBytesPerToken bytes of the
// system prompt, the messages and the tool specs; English runs near four)
// plus a full answer of maxOutput tokens (0: DefaultMaxOutputTokens).
func MaxModelCallCredits(req models.ModelRequest, maxOutput int) int64 {
	if req.MaxTokens > 0 {
		maxOutput = req.MaxTokens
	}
	if maxOutput <= 0 {
		maxOutput = DefaultMaxOutputTokens
	}
	n := len(req.System)
	for _, m := range req.Messages {
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Input) + len(b.ToolName) + len(b.ToolUseID)
		}
	}
	for _, tl := range req.Tools {
		n += len(tl.Name) + len(tl.Description) + len(tl.InputSchema)
	}
	input := (int64(n) + InputBytesPerToken - 1) / InputBytesPerToken
	return billing.ModelCallCredits(models.ModelUsage{InputTokens: input, OutputTokens: int64(maxOutput)})
}

// InputBytesPerToken is the bytes per input token a hold assumes: fewer
// than any tokenizer's average on text, so the hold is not below the
// price.
const InputBytesPerToken = 3

func isCode(err error, code models.ErrorCode) bool {
	var de *models.Error
	return errors.As(err, &de) && de.Code == code
}

// turn reads the turn with its company's scope.
func (t *Turns) turn(ctx context.Context, ref TurnRef) (store.CompanyScope, models.Turn, error) {
	scope, err := t.Store.SystemCompanyScope(ctx, ref.CompanyID)
	if err != nil {
		return scope, models.Turn{}, err
	}
	turn, err := t.Store.GetTurn(ctx, scope, ref.TurnID)
	return scope, turn, err
}

// FinishInput is how the workflow ends a turn.
type FinishInput struct {
	TurnRef
	Status      models.TurnStatus
	Question    string
	ErrorCode   string
	ErrorDetail string
}

// FinishTurn writes the turn's end once: status, the agent's text, the
// final answer (the last step's text of a completed turn), the question,
// the error and what the run was charged (from the ledger), with a
// turn_ended event in the feed. It returns the status stored (the first
// end written wins).
func (t *Turns) FinishTurn(ctx context.Context, in FinishInput) (models.TurnStatus, error) {
	scope, turn, err := t.turn(ctx, in.TurnRef)
	if errors.Is(err, models.ErrNotFound) {
		return in.Status, nil
	}
	if err != nil {
		return "", err
	}
	if !turn.Status.Active() {
		return turn.Status, nil
	}
	history, err := t.Store.SessionMessages(ctx, scope, turn.SessionID)
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
	// Nothing of the turn runs any more: what its calls still hold is free.
	if err := t.Billing.ReleaseRun(ctx, t.Store.SystemConglomerateScope(scope.ConglomerateID()), turn.ID); err != nil {
		return "", err
	}
	cost, err := t.Store.RunCredits(ctx, t.Store.SystemConglomerateScope(scope.ConglomerateID()), turn.ID)
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
		move = t.moveTask(ctx, scope, turn, models.TaskRunning, models.TaskDone, "")
	case models.TurnWaiting:
		move = t.moveTask(ctx, scope, turn, models.TaskRunning, models.TaskFailed, "The agent asked a question: "+cut(in.Question, 900))
	default:
		reason := "The run was " + string(in.Status)
		if in.ErrorDetail != "" {
			reason += ": " + cut(in.ErrorDetail, 900)
		}
		move = t.moveTask(ctx, scope, turn, models.TaskRunning, models.TaskFailed, reason)
	}
	if move != nil {
		return "", move
	}
	// The trace is complete before the turn reads as ended.
	t.trace(ctx, turn.ID, "999999-end", traces.Event{Type: traces.EventTurnEnded,
		Data: map[string]any{"status": string(in.Status), "error": in.ErrorCode, "credits": cost}})
	if t.Traces != nil {
		if err := t.Traces.Finish(ctx, turn.ID); err != nil {
			t.Logger.WarnContext(ctx, "turn trace: finish", "turn", turn.ID, "error", err)
		}
	}
	ended, _, err := t.Store.FinishTurn(ctx, scope, turn.ID, strings.Join(texts, "\n\n"), r, models.ActivityInput{
		Kind: models.ActivityTurnEnded, Actor: models.ActorAgent, Summary: summary,
		Data: map[string]any{"credits": cost, "trigger": string(turn.Trigger)}})
	if err != nil {
		return "", err
	}
	return ended.Status, nil
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

// conversation turns a session's stored messages into the model's
// messages: consecutive messages of one role are one message. A tool call
// without a stored result (a turn interrupted or failed during its tools)
// is left out, with its result-less id, as providers refuse a tool_use
// that no tool_result answers.
func conversation(history []models.TurnMessage) []models.ModelMessage {
	answered := map[string]bool{}
	for _, m := range history {
		for _, b := range m.Content {
			if b.Type == models.ContentToolResult {
				answered[b.ToolUseID] = true
			}
		}
	}
	var out []models.ModelMessage
	for _, m := range history {
		var content []models.ContentBlock
		for _, b := range m.Content {
			if b.Type == models.ContentToolUse && !answered[b.ToolUseID] {
				continue
			}
			content = append(content, b)
		}
		if len(content) == 0 {
			content = []models.ContentBlock{{Type: models.ContentText, Text: "(interrupted)"}}
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Content = append(out[n-1].Content, content...)
			continue
		}
		out = append(out, models.ModelMessage{Role: m.Role, Content: content})
	}
	return out
}

// systemPrompt tells the model whose agent it is.
func systemPrompt(c models.Company, turn models.Turn) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are the AI agent that runs the company %q (handle %s). ", c.Name, c.Handle)
	b.WriteString("Work toward the company's mission with the tools you have: write documents, manage tasks and files, email, sell products, and keep the owner informed. ")
	b.WriteString("When you need a decision only the owner can make, call ask_question and stop. Answer in the owner's language, briefly.\n")
	if c.Mission != "" {
		fmt.Fprintf(&b, "\nMission: %s\n", c.Mission)
	}
	if c.Idea != "" {
		fmt.Fprintf(&b, "\nIdea: %s\n", cut(c.Idea, 4000))
	}
	switch turn.Trigger {
	case models.TriggerSchedule:
		b.WriteString("\nThis is a scheduled run: review the company's open tasks and make progress on the most important one.\n")
	case models.TriggerTask:
		b.WriteString("\nThis run works on one task, described in the message.\n")
	}
	fmt.Fprintf(&b, "\nToday is %s (UTC).", time.Now().UTC().Format("2006-01-02"))
	return b.String()
}

// modelError makes a failed model call the activity's error: retryable
// ones are retried by the activity's policy (after the provider's
// retry-after when it gave one); others fail the turn.
func modelError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return interrupted(ctx, "model call", err)
	}
	var me *models.ModelCallError
	if !errors.As(err, &me) {
		return err
	}
	if me.Kind == models.ModelCanceled {
		return interrupted(ctx, "model call", err)
	}
	typ, msg := ErrTurnUpstream, "The language model is unavailable; try again shortly."
	switch me.Kind {
	case models.ModelContextTooLong:
		typ, msg = ErrTurnTooLarge, "The conversation is too long for the model; start a new session."
	case models.ModelAuth, models.ModelInvalidRequest, models.ModelInvalidResponse:
		typ, msg = ErrTurnInternal, "The language model refused the request; the operator has to check its configuration."
	}
	return temporal.NewApplicationErrorWithOptions(msg, typ, temporal.ApplicationErrorOptions{
		NonRetryable: !me.Retryable, NextRetryDelay: me.RetryAfter, Cause: errors.New(me.Error())})
}

// textStream collects a call's streamed text after the text of the turn's
// earlier steps.
type textStream struct {
	mu      sync.Mutex
	base    string
	b       strings.Builder
	changed bool
}

func newTextStream(base string) *textStream { return &textStream{base: base} }

func (s *textStream) add(delta string) {
	s.mu.Lock()
	s.b.WriteString(delta)
	s.changed = true
	s.mu.Unlock()
}

// take returns the text so far when it changed since the last take.
func (s *textStream) take() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.changed {
		return "", false
	}
	s.changed = false
	return join(s.base, strings.TrimSpace(s.b.String())), true
}

// full is the text so far with the step's whole text.
func (s *textStream) full(step string) string { return join(s.base, step) }

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// toolAttempts is how often a tool call that failed on the service side is
// tried before the model is told it failed.
const toolAttempts = 3

// moveTask moves a task run's task from one status to another (the first
// move wins; a task an operator changed meanwhile is left as it is).
func (t *Turns) moveTask(ctx context.Context, scope store.CompanyScope, turn models.Turn, from, to models.TaskStatus, reason string) error {
	if turn.TaskID == nil {
		return nil
	}
	ch := models.TaskChanges{Status: &to}
	if to == models.TaskFailed {
		ch.FailureReason = &reason
	}
	_, err := t.Store.UpdateTask(ctx, scope, *turn.TaskID, from, ch, models.ActivityInput{Kind: models.ActivityTaskUpdated, Actor: models.ActorAgent,
		Summary: "Task " + string(to), Data: map[string]any{"run_id": turn.ID}})
	if errors.Is(err, store.ErrTaskStatusChanged) || errors.Is(err, models.ErrNotFound) {
		return nil
	}
	return err
}

// trace stores events as one part of the run's trace; a failure is logged
// and never fails the turn.
func (t *Turns) trace(ctx context.Context, runID, part string, events ...traces.Event) {
	if t.Traces == nil {
		return
	}
	now := time.Now().UTC()
	for i := range events {
		events[i].Time = now
	}
	if err := t.Traces.Append(ctx, runID, part, events...); err != nil {
		t.Logger.WarnContext(ctx, "turn trace", "turn", runID, "part", part, "error", err)
	}
}

// ScheduledRuns starts a company's scheduled turn (service/turns).
type ScheduledRuns interface {
	StartScheduledRun(ctx context.Context, scope store.CompanyScope) (contract.ScheduledRunResult, error)
}

// StartScheduledRun is the scheduled run's one activity: it starts the
// company's turn or says why it skipped.
func (t *Turns) StartScheduledRun(ctx context.Context, in contract.ScheduledRunInput) (contract.ScheduledRunResult, error) {
	if t.Scheduled == nil {
		return contract.ScheduledRunResult{Skipped: "scheduled runs are not configured"}, nil
	}
	scope, err := t.Store.SystemCompanyScope(ctx, in.CompanyID)
	if errors.Is(err, models.ErrNotFound) {
		return contract.ScheduledRunResult{Skipped: "the company no longer exists"}, nil
	}
	if err != nil {
		return contract.ScheduledRunResult{}, err
	}
	return t.Scheduled.StartScheduledRun(ctx, scope)
}
