package turns

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"holdco/models"
	"holdco/service/billing"
	"holdco/service/traces"
	"holdco/store"
	"holdco/workflows/contract"
)

// DefaultMaxOutputTokens is the adapters' answer cap when none is
// configured.
const DefaultMaxOutputTokens = 4096

// InputBytesPerToken is the bytes per input token a hold assumes: fewer
// than any tokenizer's average on text, so the hold is not below the
// price.
const InputBytesPerToken = 3

// ModelStep calls the model with the session's conversation and stores its
// answer as the step's message (part 0), then charges the call
// (TOKEN_USAGE_PARTIAL with the run id, key "<turn>/model/<step>"). Before
// the call, its maximum price is held under the same key (or what the
// account has left, at least one credit), so concurrent turns cannot make
// calls the balance does not cover; the charge settles the hold. The
// streamed text reaches the turn row at most every TextEvery. A step whose
// answer is stored already (the activity ran again after a crash) only
// makes sure the call is charged.
func (e *Engine) ModelStep(ctx context.Context, sc Scopes, in contract.StepInput) (contract.ModelStepResult, error) {
	scope := sc.Company
	turn, err := e.Store.Turns().GetTurn(ctx, scope, in.TurnID)
	if err != nil {
		return contract.ModelStepResult{}, err
	}
	msg, err := e.Store.Turns().GetTurnMessage(ctx, scope, in.TurnID, in.Step, 0)
	switch {
	case errors.Is(err, models.ErrNotFound):
		var traced func()
		msg, traced, err = e.callModel(ctx, sc, turn, in.Step)
		if traced != nil {
			// The step's trace part is written beside the answer and
			// the charge.
			defer traced()
		}
		if err != nil {
			return contract.ModelStepResult{}, err
		}
	case err != nil:
		return contract.ModelStepResult{}, err
	}
	if err := e.charge(ctx, sc.Conglomerate, billing.Usage{CompanyID: in.CompanyID, RunID: in.TurnID, Type: models.EntryTokenUsagePartial,
		Credits: billing.ModelCallCredits(models.ModelUsage{InputTokens: msg.InputTokens, OutputTokens: msg.OutputTokens}),
		Key:     modelKey(in.TurnID, in.Step)}); err != nil {
		return contract.ModelStepResult{}, err
	}
	var out contract.ModelStepResult
	for _, b := range msg.Content {
		if b.Type == models.ContentToolUse {
			out.Calls = append(out.Calls, contract.ToolCallRef{Index: len(out.Calls), ID: b.ToolUseID, Name: b.ToolName,
				Control: e.Tools.IsControl(b.ToolName), Quick: e.Tools.IsQuick(b.ToolName)})
		}
	}
	return out, nil
}

// callModel makes the step's model call and stores the answer. Once the
// model answered, the step's trace part is being written (traceAside);
// traced waits for it.
func (e *Engine) callModel(ctx context.Context, sc Scopes, turn models.Turn, step int) (_ models.TurnMessage, traced func(), _ error) {
	scope, cong := sc.Company, sc.Conglomerate
	company, err := e.Store.Companies().GetCompany(ctx, scope)
	if err != nil {
		return models.TurnMessage{}, nil, err
	}
	history, err := e.Store.Turns().SessionMessages(ctx, scope, turn.SessionID)
	if err != nil {
		return models.TurnMessage{}, nil, err
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
	req := models.ModelRequest{System: systemPrompt(company, turn), Messages: conversation(history), Tools: e.Tools.Specs(),
		MaxTokens: e.MaxOutputTokens}
	// The call's maximum price is held before it runs: the balance bounds
	// the calls in flight. When less is free, what is free is held if it
	// pays the input and at least one credit of answer, and the answer is
	// limited to what the hold pays: every call that runs is paid in full
	// (before, a call holding its last credit ran a whole answer and was
	// charged only that credit).
	hold := billing.Usage{CompanyID: turn.CompanyID, RunID: turn.ID, Type: models.EntryTokenUsagePartial,
		Credits: MaxModelCallCredits(req, e.MaxOutputTokens), Key: modelKey(turn.ID, step)}
	inputCredits := maxInputCredits(req)
	held, paid, err := e.Billing.Reserve(ctx, cong, hold, inputCredits+1)
	if err != nil {
		return models.TurnMessage{}, nil, chargeError(err, "The account has no credits left for the next model call; top up to continue.")
	}
	if !paid && held < hold.Credits {
		req.MaxTokens = int((held - inputCredits) * billing.OutputTokensPerCredit)
	}

	stream := newTextStream(strings.Join(earlier, "\n\n"))
	stop := e.streamText(ctx, scope, turn.ID, stream)
	began := time.Now()
	resp, err := e.Model.Complete(ctx, req, stream.add)
	stop()
	part := fmt.Sprintf("%06d-model", step)
	request := traces.Event{Type: traces.EventModelRequest, Step: step,
		Data: map[string]any{"messages": len(req.Messages), "tools": len(req.Tools), "system_chars": len(req.System)}}
	if err != nil {
		failed := modelError(ctx, err)
		// Interrupted once the model had written text, which the turn
		// showed: the provider bills what it produced, so the call is
		// charged its input and that text (estimated at
		// paidBytesPerToken), at most what it held. Before, an answer
		// interrupted near its end was free, as often as asked. A call
		// cut by its worker's stop is not an interrupt, and a call that
		// wrote nothing is not paid: the hold is freed (a retry makes
		// the call again, holds again and pays the whole call).
		record := context.WithoutCancel(ctx)
		if !paid && stream.streamed() > 0 && !workerStopping(ctx) && isInterrupt(failed) {
			written := models.ModelUsage{InputTokens: estimatedTokens(inputBytes(req)), OutputTokens: estimatedTokens(stream.streamed())}
			paidFor := hold
			paidFor.Credits = min(billing.ModelCallCredits(written), held)
			if cerr := e.charge(record, cong, paidFor); cerr != nil {
				e.Logger.WarnContext(ctx, "turn: charging an interrupted model call", "turn", turn.ID, "error", cerr)
			}
		} else if rerr := e.Billing.Release(record, cong, hold.Key); rerr != nil {
			e.Logger.WarnContext(ctx, "turn: releasing a model call's hold", "turn", turn.ID, "error", rerr)
		}
		e.trace(ctx, turn.ID, part, request, traces.Event{Type: traces.EventError, Step: step, Error: err.Error()})
		return models.TurnMessage{}, nil, failed
	}
	var calls []map[string]any
	for _, c := range resp.ToolCalls() {
		calls = append(calls, map[string]any{"id": c.ToolUseID, "name": c.ToolName, "input": string(c.Input)})
	}
	usage := models.ModelUsage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens}
	traced = e.traceAside(ctx, turn.ID, part, request,
		traces.Event{Type: traces.EventModelResponse, Step: step, Model: resp.Model,
			Data: map[string]any{"stop_reason": string(resp.StopReason), "text": resp.Text(), "tool_calls": calls, "ms": time.Since(began).Milliseconds()}},
		traces.Event{Type: traces.EventUsage, Step: step, Model: resp.Model,
			Usage: &traces.Usage{InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens, Credits: billing.ModelCallCredits(usage)}})
	content := resp.Content
	if len(content) == 0 {
		content = []models.ContentBlock{{Type: models.ContentText, Text: ""}}
	}
	// The answer and the turn's text so far in one transaction.
	msg, _, err := e.Store.Turns().PutTurnAnswer(ctx, scope, models.TurnMessage{TurnID: turn.ID, Step: step, Part: 0, Role: models.RoleAssistant,
		Content: content, Model: resp.Model, InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens},
		stream.full(textOf(content)))
	return msg, traced, err
}

// streamText writes the streamed text to the turn row at most every
// TextEvery until the returned function is called.
func (e *Engine) streamText(ctx context.Context, scope store.CompanyScope, turnID string, s *textStream) (stop func()) {
	every := e.TextEvery
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if text, changed := s.take(); changed {
					if err := e.Store.Turns().SetTurnText(ctx, scope, turnID, text); err != nil && ctx.Err() == nil {
						e.Logger.WarnContext(ctx, "turn text", "turn", turnID, "error", err)
					}
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// charge spends a call's credits once (by its key), settling the call's
// hold (same key). When the balance or the daily cap cannot take it all,
// what they allow is charged under the same key, and always what the hold
// covers: the call was made, and lowering the cap while it ran does not
// make it free. Nothing is overdrawn, a retry pays nothing more, and the
// turn then fails with insufficient_credits (the balance) or rate_limited
// (the cap).
func (e *Engine) charge(ctx context.Context, cong store.ConglomerateScope, u billing.Usage) error {
	_, _, err := e.Billing.SettleOnce(ctx, cong, u)
	return chargeError(err, "The account ran out of credits during the turn; top up to continue.")
}

// chargeError makes a refused hold or charge the turn's failure:
// insufficient_credits (with the sentence given) or rate_limited (the
// daily cap), neither retried.
func chargeError(err error, insufficient string) error {
	var de *models.Error
	if !errors.As(err, &de) {
		return err
	}
	switch de.Code {
	case models.CodeInsufficientCredits:
		return turnFailure(models.CodeInsufficientCredits, insufficient)
	case models.CodeRateLimited:
		return turnFailure(models.CodeRateLimited, de.Detail)
	}
	return err
}

// modelKey is the charge key (and hold key) of a step's model call.
func modelKey(turnID string, step int) string { return fmt.Sprintf("%s/model/%d", turnID, step) }

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
	return billing.ModelCallCredits(models.ModelUsage{InputTokens: maxInputTokens(req), OutputTokens: int64(maxOutput)})
}

// maxInputTokens is the request's input estimated high: one token per
// InputBytesPerToken bytes of the system prompt, the messages and the
// tool specs.
func maxInputTokens(req models.ModelRequest) int64 {
	return (int64(inputBytes(req)) + InputBytesPerToken - 1) / InputBytesPerToken
}

// inputBytes is the size of what a request sends the model: the system
// prompt, the messages and the tool specs.
func inputBytes(req models.ModelRequest) int {
	n := len(req.System)
	for _, m := range req.Messages {
		for _, b := range m.Content {
			n += len(b.Text) + len(b.Input) + len(b.ToolName) + len(b.ToolUseID)
		}
	}
	for _, tl := range req.Tools {
		n += len(tl.Name) + len(tl.Description) + len(tl.InputSchema)
	}
	return n
}

type workerStopKey struct{}

// WithWorkerStop gives a step the channel its worker closes when it stops
// (activity.GetWorkerStopChannel): a call cancelled by the stop is made
// again by the step's retry, not interrupted.
func WithWorkerStop(ctx context.Context, stop <-chan struct{}) context.Context {
	return context.WithValue(ctx, workerStopKey{}, stop)
}

// workerStopping reports whether ctx's worker is stopping.
func workerStopping(ctx context.Context) bool {
	stop, _ := ctx.Value(workerStopKey{}).(<-chan struct{})
	if stop == nil {
		return false
	}
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// paidBytesPerToken is the bytes per token an interrupted call is charged
// by, having no usage of its own: English text's usual figure (a hold
// assumes fewer, InputBytesPerToken, to stay above the price).
const paidBytesPerToken = 4

// estimatedTokens is n bytes counted at paidBytesPerToken.
func estimatedTokens(n int) int64 { return (int64(n) + paidBytesPerToken - 1) / paidBytesPerToken }

// maxInputCredits is what the request's input can cost (estimated high).
func maxInputCredits(req models.ModelRequest) int64 {
	return (maxInputTokens(req) + billing.InputTokensPerCredit - 1) / billing.InputTokensPerCredit
}

// modelError makes a failed model call the step's error: retryable ones
// are retried by the activity's policy (after the provider's retry-after
// when it gave one); others fail the turn.
func modelError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return interrupted("model call", err)
	}
	var me *models.ModelCallError
	if !errors.As(err, &me) {
		return err
	}
	if me.Kind == models.ModelCanceled {
		return interrupted("model call", err)
	}
	code, msg := models.CodeUpstreamUnavailable, "The language model is unavailable; try again shortly."
	switch me.Kind {
	case models.ModelContextTooLong:
		code, msg = models.CodeTooLarge, "The conversation is too long for the model; start a new session."
	case models.ModelAuth, models.ModelInvalidRequest, models.ModelInvalidResponse:
		code, msg = models.CodeInternal, "The language model refused the request; the operator has to check its configuration."
	}
	return &StepError{Code: code, Message: msg, Retryable: me.Retryable, RetryAfter: me.RetryAfter, Err: errors.New(me.Error())}
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

// streamed is how many bytes of text the step's call has written.
func (s *textStream) streamed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
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
