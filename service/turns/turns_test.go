package turns_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"holdco/activities"
	"holdco/models"
	"holdco/providers/llm/scripted"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/service/tasks"
	"holdco/service/turns"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// world is an owner with a ready company, a Temporal test server and a
// worker running turns with the given model.
type world struct {
	e       *servicetest.Env
	tmp     *testenv.Temporal
	acts    *activities.Turns
	worker  worker.Worker
	owner   context.Context
	cong    string
	company string
}

// agentCtx is the company's agent (its key).
func (w *world) agentCtx(t testing.TB) context.Context {
	key, err := w.e.Svc.CompanyAPIKey(w.owner, w.company)
	require.NoError(t, err)
	return w.e.As(t, key.Key)
}

func newWorld(t testing.TB, model turns.Model, credits int64) *world {
	t.Helper()
	return newWorldWith(t, model, credits, func(c client.Client) client.Client { return c })
}

// newWorldWith is newWorld whose use cases reach Temporal through wrap's
// client (the worker and tests' w.tmp.Client reach it directly).
func newWorldWith(t testing.TB, model turns.Model, credits int64, wrap func(client.Client) client.Client) *world {
	t.Helper()
	tmp := testenv.NewTemporal(t, nil)
	e := servicetest.NewWith(t, usecases.Options{Temporal: wrap(tmp.Client), AgentRunEvery: time.Hour})
	w := &world{e: e, tmp: tmp}
	w.owner, w.cong = e.User(t, "ada@example.com")
	co := e.SeedCompany(t, w.owner, companies.CompanyInput{Name: "Ada Bakery", Idea: "Bread by subscription"})
	w.company = co.ID
	w.setReady(t)
	if credits > 0 {
		_, err := e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(w.cong), models.EntryAdminAdjustment, credits, "test credits")
		require.NoError(t, err)
	}
	w.acts = &activities.Turns{Store: e.Store, Engine: &turns.Engine{Store: e.Store, Billing: e.Svc.BillingUseCases, Tools: e.Svc.Tools, Model: model, Traces: e.Svc.TraceWriter,
		Scheduled: e.Svc.Turns, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), TextEvery: 20 * time.Millisecond},
		HeartbeatEvery: 100 * time.Millisecond}
	w.startWorker(t)
	return w
}

func (w *world) startWorker(t testing.TB) {
	// As the app's worker: heartbeats reach the server at least every
	// second, so an interrupt reaches a model call at once.
	w.worker = w.tmp.Server.NewWorkerWithOptions(contract.TaskQueue, func(r worker.Registry) { workflows.RegisterTurns(r, w.acts) },
		worker.Options{MaxHeartbeatThrottleInterval: workflows.MaxHeartbeatThrottle()})
}

func (w *world) setReady(t testing.TB) {
	ctx := context.Background()
	scope, err := w.e.Store.SystemCompanyScope(ctx, w.company)
	require.NoError(t, err)
	for _, k := range models.ResourceKinds {
		require.NoError(t, w.e.Store.Companies().SaveResource(ctx, scope, models.CompanyResource{CompanyID: w.company, Kind: k, Status: models.ResourceReady, Ref: "ref"}))
	}
}

func (w *world) send(t *testing.T, text string) turns.Started {
	t.Helper()
	st, err := w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: text})
	require.NoError(t, err)
	return st
}

// turnBound bounds a wait for a turn: a minute of work on a loaded
// machine, plus the model call's heartbeat timeout (10 s, scaled for tests)
// that a worker stopped mid-call makes the server wait out before it
// retries the call on another worker. A bound, not an expectation.
var turnBound = time.Minute + time.Duration(testenv.TimeoutScale())*10*time.Second

// wait polls the turn until cond holds.
func (w *world) wait(t *testing.T, turnID string, cond func(turns.View) bool) turns.View {
	t.Helper()
	var v turns.View
	require.Eventually(t, func() bool {
		var err error
		v, err = w.e.Svc.Turns.GetTurn(w.owner, turnID)
		require.NoError(t, err)
		return cond(v)
	}, turnBound, 20*time.Millisecond, "turn %s", turnID)
	return v
}

func ended(v turns.View) bool { return !v.Status.Active() }

func (w *world) balance(t *testing.T) int64 {
	st, err := w.e.Svc.Credits(w.owner, w.cong)
	require.NoError(t, err)
	return st.Balance
}

// usageEntries counts the ledger's usage entries of a run.
func (w *world) usageEntries(t *testing.T, runID string, typ models.LedgerEntryType) int64 {
	var n int64
	require.NoError(t, w.e.SQL.QueryRow("SELECT COUNT(*) FROM credit_ledger_entries WHERE run_id = "+ph(w.e.Placeholder, 1)+" AND type = "+ph(w.e.Placeholder, 2), runID, string(typ)).Scan(&n))
	return n
}

func ph(style string, n int) string {
	if style == "?" {
		return "?"
	}
	return "$" + string(rune('0'+n))
}

func domainErr(t *testing.T, err error) *models.Error {
	t.Helper()
	var de *models.Error
	require.ErrorAs(t, err, &de)
	return de
}

func TestMessageRunsATurnThatCallsToolsAndIsCharged(t *testing.T) {
	w := newWorld(t, scripted.New(0), 100)
	st := w.send(t, "Plan the launch of the bakery")
	assert.Equal(t, models.TurnQueued, st.Status)
	assert.Equal(t, w.company, st.CompanyID)
	assert.NotEmpty(t, st.SessionID)

	v := w.wait(t, st.TurnID, ended)
	require.Equal(t, models.TurnCompleted, v.Status, "%s: %s", v.ErrorCode, v.ErrorDetail)
	assert.Contains(t, v.Answer, "I wrote the document")
	assert.Contains(t, v.Answer, "I created the task")
	assert.Contains(t, v.Text, "I'll write down notes first.")
	require.NotNil(t, v.CreditsCost)
	assert.Equal(t, int64(100)-*v.CreditsCost, w.balance(t), "the cost is what the ledger charged")
	assert.Equal(t, int64(3), w.usageEntries(t, st.TurnID, models.EntryTokenUsagePartial), "three model calls, each charged once")
	// Elapsed is from start to end (a fast turn's rounds to 0.0 s).
	require.NotNil(t, v.StartedAt)
	require.NotNil(t, v.EndedAt)
	assert.False(t, v.EndedAt.Before(*v.StartedAt))
	assert.Equal(t, v.EndedAt.Sub(*v.StartedAt).Round(100*time.Millisecond).Seconds(), v.ElapsedSeconds)

	doc, err := w.e.Svc.Documents.Get(w.owner, w.company, "notes")
	require.NoError(t, err)
	assert.Contains(t, doc.Content, "Plan the launch of the bakery")
	assert.Equal(t, models.ActorAgent, doc.UpdatedBy)
	list, err := w.e.Svc.Tasks.List(w.owner, w.company, tasksAll)
	require.NoError(t, err)
	require.Len(t, list.Tasks, 1)

	feed, err := w.e.Svc.Activity(w.owner, w.company, companies.ActivityInput{Limit: 10})
	require.NoError(t, err)
	assert.Equal(t, models.ActivityTurnEnded, feed.Events[0].Kind)

	page, err := w.e.Svc.Turns.ListTurns(w.owner, w.company, 10, "")
	require.NoError(t, err)
	require.Len(t, page.Turns, 1)
	assert.Equal(t, st.TurnID, page.Turns[0].ID)

	dash, err := w.e.Svc.Dashboard(w.owner, w.company)
	require.NoError(t, err)
	require.NotNil(t, dash.LastTurn)
	assert.Equal(t, st.TurnID, dash.LastTurn.ID)

	// write_document and create_task are quick tools: their calls ran as
	// local activities, and only the model calls were activity tasks.
	ctx := context.Background()
	require.NoError(t, w.tmp.Client.GetWorkflow(ctx, contract.TurnWorkflowID(w.company), "").Get(ctx, nil))
	scheduled := map[string]int{}
	for it := w.tmp.Client.GetWorkflowHistory(ctx, contract.TurnWorkflowID(w.company), "", false, 0); it.HasNext(); {
		e, err := it.Next()
		require.NoError(t, err)
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[a.GetActivityType().GetName()]++
		}
	}
	assert.Equal(t, map[string]int{"ModelStep": 3}, scheduled)

	// The run's trace: one JSONL line per event, start to end.
	raw, err := w.e.Svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	tr, err := w.e.Svc.Traces.OpenTrace(w.e.As(t, raw), st.TurnID)
	require.NoError(t, err)
	body, err := io.ReadAll(tr.Body)
	require.NoError(t, tr.Body.Close())
	require.NoError(t, err)
	assert.Equal(t, "trace.jsonl", tr.Name)
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	var types []string
	for _, l := range lines {
		var ev struct{ Type, Tool string }
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		types = append(types, strings.TrimSuffix(ev.Type+":"+ev.Tool, ":"))
	}
	// Every step's part (written beside the step's own writes) and the end.
	assert.Equal(t, []string{"turn_started",
		"model_request", "model_response", "usage", "tool_call:write_document", "tool_result:write_document",
		"model_request", "model_response", "usage", "tool_call:create_task", "tool_result:create_task",
		"model_request", "model_response", "usage", "turn_ended"}, types)
}

func TestQuestionWaitsAndTheAnswerContinuesTheSession(t *testing.T) {
	w := newWorld(t, scripted.New(0), 100)
	first := w.send(t, "What should we bake first? Ask me.")
	v := w.wait(t, first.TurnID, ended)
	require.Equal(t, models.TurnWaiting, v.Status, "%s: %s", v.ErrorCode, v.ErrorDetail)
	assert.Contains(t, v.Question, "what matters most to you")

	second := w.send(t, "Sourdough, made with local flour")
	assert.Equal(t, first.SessionID, second.SessionID, "the answer continues the session")
	assert.NotEqual(t, first.TurnID, second.TurnID)
	v2 := w.wait(t, second.TurnID, ended)
	require.Equal(t, models.TurnCompleted, v2.Status, "%s: %s", v2.ErrorCode, v2.ErrorDetail)

	third := w.send(t, "Thanks")
	assert.NotEqual(t, first.SessionID, third.SessionID, "after a completed turn a message starts a new session")
	w.wait(t, third.TurnID, ended)
	again, err := w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: "One more thing", SessionID: first.SessionID})
	require.NoError(t, err)
	assert.Equal(t, first.SessionID, again.SessionID, "a named session is continued")
	w.wait(t, again.TurnID, ended)
}

func TestConcurrentMessagesStartExactlyOneTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t, scripted.New(3*time.Second), 100)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var started []turns.Started
	var conflicts []*models.Error
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: "message " + string(rune('a'+i))})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				started = append(started, st)
				return
			}
			var de *models.Error
			if assert.ErrorAs(t, err, &de) {
				conflicts = append(conflicts, de)
			}
		}()
	}
	wg.Wait()
	require.Len(t, started, 1, "one turn starts")
	require.Len(t, conflicts, 19)
	for _, c := range conflicts {
		assert.Equal(t, models.CodeConflict, c.Code)
		assert.Equal(t, started[0].TurnID, c.Extra["turn_id"], "the conflict names the running turn")
	}
	page, err := w.e.Svc.Turns.ListTurns(w.owner, w.company, 100, "")
	require.NoError(t, err)
	assert.Len(t, page.Turns, 1, "refused messages leave no turn behind")
	_, err = w.e.Svc.Turns.InterruptTurn(w.owner, started[0].TurnID)
	require.NoError(t, err)
}

func TestInterruptCancelsTheCallInFlight(t *testing.T) {
	t.Parallel()
	// The model call would take a day: the interrupt's answer (the turn
	// interrupted, nothing charged) can only come from cancelling it.
	w := newWorld(t, scripted.New(24*time.Hour), 100)
	st := w.send(t, "Write a long plan")
	w.wait(t, st.TurnID, func(v turns.View) bool { return v.Status == models.TurnRunning })
	v, err := w.e.Svc.Turns.InterruptTurn(w.owner, st.TurnID)
	require.NoError(t, err)
	assert.Equal(t, models.TurnInterrupted, v.Status)
	require.NotNil(t, v.CreditsCost)
	assert.Equal(t, int64(0), *v.CreditsCost, "the cancelled call is not charged")

	again, err := w.e.Svc.Turns.InterruptTurn(w.owner, st.TurnID)
	require.NoError(t, err, "interrupting an ended turn is a no-op")
	assert.Equal(t, models.TurnInterrupted, again.Status)
	assert.Equal(t, v.EndedAt, again.EndedAt)

	next := w.send(t, "Something short")
	assert.NotEqual(t, st.TurnID, next.TurnID, "a new turn starts after the interrupt")
	_, err = w.e.Svc.Turns.InterruptTurn(w.owner, next.TurnID)
	require.NoError(t, err)
}

// chattyModel writes text, then waits until its call is cancelled.
type chattyModel struct{ text string }

func (m *chattyModel) Complete(ctx context.Context, _ models.ModelRequest, onText func(string)) (models.ModelResponse, error) {
	onText(m.text)
	<-ctx.Done()
	return models.ModelResponse{}, ctx.Err()
}

// A call interrupted once the model had written text, which the turn
// showed, is charged its input and that text, estimated, within what it
// held (the provider bills them); before, it was free however much it
// had written. A call interrupted before any text is not charged
// (TestInterruptCancelsTheCallInFlight).
func TestInterruptedCallIsChargedForTheTextItWrote(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("A plan in many words. ", 100) // 2,200 bytes: 550 tokens, 1 credit
	w := newWorld(t, &chattyModel{text: text}, 100)
	st := w.send(t, "Write a long plan")
	w.wait(t, st.TurnID, func(v turns.View) bool { return strings.Contains(v.Text, "A plan in many words.") })
	v, err := w.e.Svc.Turns.InterruptTurn(w.owner, st.TurnID)
	require.NoError(t, err)
	require.Equal(t, models.TurnInterrupted, v.Status)
	require.NotNil(t, v.CreditsCost)
	// 1 credit of text and at least 1 of input (the system prompt and the
	// tools' specs), less than a whole call's hold.
	assert.GreaterOrEqual(t, *v.CreditsCost, int64(2))
	assert.LessOrEqual(t, *v.CreditsCost, int64(12))
	assert.Equal(t, 100-*v.CreditsCost, w.balance(t), "the ledger took what the turn says")
	assert.Equal(t, int64(1), w.usageEntries(t, st.TurnID, models.EntryTokenUsagePartial))
}

// await waits for ch to close, failing with why after turnBound.
func await(t *testing.T, ch <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(turnBound):
		t.Fatal(why)
	}
}

// cutModel's first call writes text, then waits until it is cancelled;
// the next answers with usage worth 4 credits (10 input tokens, 3,000
// output).
type cutModel struct {
	calls atomic.Int32
	wrote chan struct{}
}

func (m *cutModel) Complete(ctx context.Context, _ models.ModelRequest, onText func(string)) (models.ModelResponse, error) {
	if m.calls.Add(1) == 1 {
		onText("Thinking about it")
		close(m.wrote)
		<-ctx.Done()
		return models.ModelResponse{}, ctx.Err()
	}
	onText("Done.")
	return models.ModelResponse{Usage: models.ModelUsage{InputTokens: 10, OutputTokens: 3000}, Model: "cut", StopReason: models.StopEndTurn,
		Content: []models.ContentBlock{{Type: models.ContentText, Text: "Done."}}}, nil
}

// A call cut by its worker's stop after it wrote text is not an
// interrupt: its hold is released, the step's retry makes the call again
// and pays all of it (were the cut charged as an interrupt, under the
// call's key, the retry would find it paid and the whole call would cost
// the cut's estimate).
func TestCallCutByAWorkerStopIsPaidInFullWhenMadeAgain(t *testing.T) {
	t.Parallel()
	m := &cutModel{wrote: make(chan struct{})}
	w := newWorld(t, m, 100)
	st := w.send(t, "Plan the launch")
	await(t, m.wrote, "the model call never wrote")
	w.wait(t, st.TurnID, func(v turns.View) bool { return strings.Contains(v.Text, "Thinking") })
	w.worker.Stop()
	w.startWorker(t)
	v := w.wait(t, st.TurnID, ended)
	require.Equal(t, models.TurnCompleted, v.Status, "%s: %s", v.ErrorCode, v.ErrorDetail)
	assert.Equal(t, int32(2), m.calls.Load())
	assert.Equal(t, int64(4), *v.CreditsCost, "the call made again, paid in full")
	assert.Equal(t, int64(96), w.balance(t))
}

// greedyModel answers with text only, reporting many tokens per call; the
// first `failures` calls fail with a rate limit.
type greedyModel struct {
	calls    atomic.Int64
	failures int64
	tokens   int64
	tool     bool
}

func (m *greedyModel) Complete(ctx context.Context, req models.ModelRequest, onText func(string)) (models.ModelResponse, error) {
	n := m.calls.Add(1)
	if n <= m.failures {
		return models.ModelResponse{}, &models.ModelCallError{Kind: models.ModelRateLimited, Retryable: true, Status: 429, RetryAfter: 50 * time.Millisecond}
	}
	onText("thinking")
	resp := models.ModelResponse{Usage: models.ModelUsage{InputTokens: m.tokens, OutputTokens: 1}, Model: "greedy", StopReason: models.StopEndTurn,
		Content: []models.ContentBlock{{Type: models.ContentText, Text: "thinking"}}}
	if m.tool {
		resp.StopReason = models.StopToolUse
		resp.Content = append(resp.Content, models.ContentBlock{Type: models.ContentToolUse, ToolUseID: "call_" + string(rune('0'+n%10)), ToolName: "list_documents", Input: []byte(`{}`)})
	}
	return resp, nil
}

func TestRateLimitedModelCallIsRetriedAndChargedOnce(t *testing.T) {
	t.Parallel()
	m := &greedyModel{failures: 2, tokens: 10}
	w := newWorld(t, m, 100)
	st := w.send(t, "Hello")
	v := w.wait(t, st.TurnID, ended)
	require.Equal(t, models.TurnCompleted, v.Status, "%s: %s", v.ErrorCode, v.ErrorDetail)
	assert.Equal(t, int64(3), m.calls.Load(), "two 429s, then the answer")
	assert.Equal(t, int64(1), w.usageEntries(t, st.TurnID, models.EntryTokenUsagePartial))
	assert.Equal(t, int64(2), *v.CreditsCost, "1 input + 1 output credit")
}

func TestTurnThatRunsOutOfCreditsStopsWithoutOverdrawing(t *testing.T) {
	// Each call costs 4 credits (8,001 input tokens → 3, 1 output → 1);
	// the model keeps calling tools, so the turn runs until the money ends.
	// A call runs only when the free credits pay its input (estimated)
	// and one credit of answer; one that costs more than it held (the
	// model reports more input than the estimate) is charged what is
	// left.
	m := &greedyModel{tokens: 8001, tool: true}
	w := newWorld(t, m, 10)
	st := w.send(t, "Work forever")
	v := w.wait(t, st.TurnID, ended)
	require.Equal(t, models.TurnFailed, v.Status)
	assert.Equal(t, string(models.CodeInsufficientCredits), v.ErrorCode)
	left := w.balance(t)
	assert.GreaterOrEqual(t, left, int64(0), "nothing overdrawn")
	assert.Less(t, left, int64(4), "the turn ran until the credits left could not pay another call")
	assert.Equal(t, 10-left, *v.CreditsCost, "the turn's cost is what the ledger took")
}

// capModel is greedyModel that sets the account's daily cap while its
// first call runs, as an owner's PATCH during a turn would.
type capModel struct {
	greedyModel
	once   sync.Once
	setCap func(int64)
	to     int64
}

func (m *capModel) Complete(ctx context.Context, req models.ModelRequest, onText func(string)) (models.ModelResponse, error) {
	m.once.Do(func() { m.setCap(m.to) })
	return m.greedyModel.Complete(ctx, req, onText)
}

// A model call is charged though the daily cap was lowered while it ran
// (before, the charge met the new cap and the call was free, over and
// over): what it held is taken, and what it cost above the hold as far
// as the cap goes. The turn then stops at the cap.
func TestLoweringTheCapDuringAModelCallDoesNotMakeItFree(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		tokens int64 // 10: 2 credits, within the hold; 40,000: 11, above it
		cap    int64
		cost   int64
	}{
		{"within the hold", 10, 0, 2},
		{"above the hold", 40_000, 7, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := &capModel{greedyModel: greedyModel{tokens: c.tokens, tool: true}, to: c.cap}
			w := newWorld(t, m, 100)
			m.setCap = func(v int64) {
				var u companies.ConglomerateUpdate
				u.DailyCreditCap.Set, u.DailyCreditCap.Value = true, &v
				if _, err := w.e.Svc.UpdateConglomerate(w.owner, w.cong, u); err != nil {
					t.Error(err)
				}
			}
			if c.cap > 0 {
				// The hold is what the cap leaves: 7 credits, the call's
				// input estimate (6) and one credit of answer; the call
				// reports more input than estimated and costs 11.
				m.setCap(c.cap)
				m.once.Do(func() {}) // the cap stays during the call
			}
			st := w.send(t, "Work")
			v := w.wait(t, st.TurnID, ended)
			require.Equal(t, models.TurnFailed, v.Status)
			assert.Equal(t, string(models.CodeRateLimited), v.ErrorCode, v.ErrorDetail)
			require.NotNil(t, v.CreditsCost)
			assert.Equal(t, c.cost, *v.CreditsCost, "the call made is paid")
			assert.Equal(t, 100-c.cost, w.balance(t))
			assert.Equal(t, int64(1), m.calls.Load(), "no call past the cap")
		})
	}
}

func TestWorkerStoppedMidTurnResumesWithoutChargingTwice(t *testing.T) {
	t.Parallel()
	m := &stopAt{Model: scripted.New(1500 * time.Millisecond), call: 2, reached: make(chan struct{})}
	w := newWorld(t, m, 100)
	st := w.send(t, "Plan the launch")
	// Stop the worker while the second model call runs (the first was
	// charged, a tool ran). Stopped anywhere else (an activity task the
	// worker had taken but not started), the server would wait out the
	// task's heartbeat timeout before giving it to the next worker: a
	// minute under -race, for what this test does not check.
	await(t, m.reached, "the second model call never started")
	require.Equal(t, int64(1), w.usageEntries(t, st.TurnID, models.EntryTokenUsagePartial), "the first call charged")
	w.worker.Stop()
	w.startWorker(t)
	v := w.wait(t, st.TurnID, ended)
	require.Equal(t, models.TurnCompleted, v.Status, "%s: %s", v.ErrorCode, v.ErrorDetail)
	assert.Equal(t, int64(3), w.usageEntries(t, st.TurnID, models.EntryTokenUsagePartial), "each model call charged once")
	list, err := w.e.Svc.Tasks.List(w.owner, w.company, tasksAll)
	require.NoError(t, err)
	assert.Len(t, list.Tasks, 1, "each tool call's effect once")
}

func TestMessagesAreRefusedWithTheirReason(t *testing.T) {
	w := newWorld(t, scripted.New(0), 0)
	ctx := context.Background()

	// Under the minimum: insufficient_credits with the numbers.
	de := domainErr(t, sendErr(w, "hello"))
	assert.Equal(t, models.CodeInsufficientCredits, de.Code)
	assert.Equal(t, int64(3), de.Extra["needed"])
	_, err := w.e.Svc.GrantCredits(ctx, w.e.Store.SystemConglomerateScope(w.cong), models.EntryAdminAdjustment, 50, "credits")
	require.NoError(t, err)

	for _, c := range []struct {
		text, field string
	}{{"", "message"}, {"   ", "message"}, {"nul\x00byte", "message"}, {string(make([]rune, turns.MaxMessageChars+1)), "message"}} {
		de := domainErr(t, sendErr(w, c.text))
		assert.Equal(t, models.CodeInvalidArgument, de.Code, "%q", c.text)
		assert.Equal(t, c.field, de.Field)
	}
	_, err = w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: "see file", Attachments: []string{"0190b7e2-0000-7000-8000-000000000000"}})
	assert.Equal(t, models.CodeNotFound, domainErr(t, err).Code)
	assert.Equal(t, "attachments[0]", domainErr(t, err).Field)

	// The owner's switch: agent_chat false is forbidden.
	scope, err := w.e.Store.SystemCompanyScope(ctx, w.company)
	require.NoError(t, err)
	require.NoError(t, w.e.Store.Turns().SetCompanyChat(ctx, scope, false))
	assert.Equal(t, models.CodeForbidden, domainErr(t, sendErr(w, "hello")).Code)
	require.NoError(t, w.e.Store.Turns().SetCompanyChat(ctx, scope, true))

	// Not provisioned yet.
	co := w.e.SeedCompany(t, w.owner, companies.CompanyInput{Name: "New One"})
	_, err = w.e.Svc.Turns.SendMessage(w.owner, co.ID, turns.Message{Text: "hello"})
	assert.Equal(t, models.CodeBusinessNotActive, domainErr(t, err).Code)

	// Another account: forbidden for the company and its turns.
	st := w.send(t, "hello")
	w.wait(t, st.TurnID, ended)
	bob, _ := w.e.User(t, "bob@example.com")
	_, err = w.e.Svc.Turns.SendMessage(bob, w.company, turns.Message{Text: "hello"})
	assert.Equal(t, models.CodeForbidden, domainErr(t, err).Code)
	_, err = w.e.Svc.Turns.GetTurn(bob, st.TurnID)
	assert.Equal(t, models.CodeForbidden, domainErr(t, err).Code)
	_, err = w.e.Svc.Turns.InterruptTurn(bob, st.TurnID)
	assert.Equal(t, models.CodeForbidden, domainErr(t, err).Code)
	_, err = w.e.Svc.Turns.GetTurn(w.owner, "0190b7e2-0000-7000-8000-000000000000")
	assert.Equal(t, models.CodeNotFound, domainErr(t, err).Code)

	// Archived: not_found.
	require.NoError(t, w.e.Svc.ArchiveCompany(w.owner, w.company))
	assert.Equal(t, models.CodeNotFound, domainErr(t, sendErr(w, "hello")).Code)
}

func sendErr(w *world, text string) error {
	_, err := w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: text})
	if err == nil {
		return errors.New("sent")
	}
	return err
}

var tasksAll = tasks.ListInput{}

func TestTurnsACrashLeftQueuedAreStartedBySweep(t *testing.T) {
	t.Parallel()
	m := &switchable{fast: scripted.New(0), slow: scripted.New(time.Minute)}
	w := newWorld(t, m, 100)
	ctx := context.Background()
	scope, err := w.e.Store.SystemCompanyScope(ctx, w.company)
	require.NoError(t, err)
	// The row of a message whose process died before the start.
	lost, err := w.e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: "0190b7e2-0000-7000-8000-0000000000aa", Trigger: models.TriggerMessage, Message: "hello"},
		[]models.ContentBlock{{Type: models.ContentText, Text: "hello"}})
	require.NoError(t, err)

	sw := &turns.Sweeper{Store: w.e.Store, Temporal: w.tmp.Client, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	n, err := sw.Sweep(ctx, time.Hour)
	require.NoError(t, err)
	assert.Zero(t, n, "a fresh turn is left to its request")
	n, err = sw.Sweep(ctx, -time.Second)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	v := w.wait(t, lost.ID, ended)
	assert.Equal(t, models.TurnCompleted, v.Status)

	// The rows hold one active turn per company: no second row while a
	// turn runs, the conflict names the running one.
	m.useSlow.Store(true)
	running := w.send(t, "busy")
	w.wait(t, running.TurnID, func(v turns.View) bool { return v.Status == models.TurnRunning })
	active, err := w.e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: "0190b7e2-0000-7000-8000-0000000000bb", Trigger: models.TriggerMessage, Message: "hi"},
		[]models.ContentBlock{{Type: models.ContentText, Text: "hi"}})
	require.ErrorIs(t, err, store.ErrTurnActive)
	assert.Equal(t, running.TurnID, active.ID)
	_, err = w.e.Svc.Turns.InterruptTurn(w.owner, running.TurnID)
	require.NoError(t, err)
}

// A queued turn whose start finds the company's workflow still running an
// ended turn waits for later sweeps; after BlockedFor it ends failed with
// conflict. And a running turn whose workflow was terminated is ended by
// the sweep, so the company takes messages again.
func TestSweepEndsTurnsItCannotStartOrWhoseWorkflowIsGone(t *testing.T) {
	t.Parallel()
	w := newWorld(t, scripted.New(time.Minute), 100)
	ctx := context.Background()
	scope, err := w.e.Store.SystemCompanyScope(ctx, w.company)
	require.NoError(t, err)
	sweeper := func(set func(*turns.Sweeper)) *turns.Sweeper {
		sw := &turns.Sweeper{Store: w.e.Store, Temporal: w.tmp.Client, Engine: w.acts.Engine.(*turns.Engine), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			CloseWait: time.Millisecond}
		set(sw)
		return sw
	}
	sw := sweeper(func(*turns.Sweeper) {})

	// A workflow that outlives its turn's row (ended here by hand).
	stuck := w.send(t, "busy")
	w.wait(t, stuck.TurnID, func(v turns.View) bool { return v.Status == models.TurnRunning })
	_, _, err = w.e.Store.Turns().FinishTurn(ctx, scope, stuck.TurnID, "", models.TurnResult{Status: models.TurnCompleted, EndedAt: time.Now().UTC()},
		models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: models.ActorSystem, Summary: "ended by the test"})
	require.NoError(t, err)
	queued, err := w.e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: "0190b7e2-0000-7000-8000-0000000000cc", Trigger: models.TriggerMessage, Message: "next"},
		[]models.ContentBlock{{Type: models.ContentText, Text: "next"}})
	require.NoError(t, err, "the rows let the next turn in")
	_, err = sw.Sweep(ctx, -time.Second)
	require.NoError(t, err)
	v, err := w.e.Svc.Turns.GetTurn(w.owner, queued.ID)
	require.NoError(t, err)
	assert.Equal(t, models.TurnQueued, v.Status, "it waits for the workflow before it")
	impatient := sweeper(func(sw *turns.Sweeper) { sw.Blocked = time.Nanosecond })
	_, err = impatient.Sweep(ctx, -time.Second)
	require.NoError(t, err)
	v, err = w.e.Svc.Turns.GetTurn(w.owner, queued.ID)
	require.NoError(t, err)
	assert.Equal(t, models.TurnFailed, v.Status)
	assert.Equal(t, string(models.CodeConflict), v.ErrorCode)
	require.NoError(t, w.tmp.Client.TerminateWorkflow(ctx, contract.TurnWorkflowID(w.company), "", "test"))

	// A running turn whose workflow an operator terminated.
	orphan := w.send(t, "work")
	w.wait(t, orphan.TurnID, func(v turns.View) bool { return v.Status == models.TurnRunning })
	require.NoError(t, w.tmp.Client.TerminateWorkflow(ctx, contract.TurnWorkflowID(w.company), "", "operator"))
	_, err = w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: "hello?"})
	assert.Equal(t, orphan.TurnID, domainErr(t, err).Extra["turn_id"], "its row still holds the company")
	n, err := sw.Sweep(ctx, -time.Second)
	require.NoError(t, err)
	assert.Zero(t, n, "a row changed lately is not asked about")
	eager := sweeper(func(sw *turns.Sweeper) { sw.Idle = time.Nanosecond })
	n, err = eager.Sweep(ctx, -time.Second)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	v, err = w.e.Svc.Turns.GetTurn(w.owner, orphan.TurnID)
	require.NoError(t, err)
	assert.Equal(t, models.TurnFailed, v.Status)
	assert.Equal(t, string(models.CodeInternal), v.ErrorCode)
	require.NotNil(t, v.CreditsCost, "ended as every turn ends: its cost is known")
	next := w.send(t, "hello again")
	w.wait(t, next.TurnID, func(v turns.View) bool { return v.Status == models.TurnRunning })

	// A running turn whose workflow runs it is left alone, however idle.
	n, err = eager.Sweep(ctx, -time.Second)
	require.NoError(t, err)
	assert.Zero(t, n)
	_, err = w.e.Svc.Turns.InterruptTurn(w.owner, next.TurnID)
	require.NoError(t, err)
}

// The sweeper looks at a bounded number of idle running turns a sweep;
// the next sweep goes on after the last one it checked, so turns that
// stay idle legitimately (a long model call) do not hide an orphan
// behind them for ever.
func TestSweepGoesOnPastIdleTurnsThatStillRun(t *testing.T) {
	t.Parallel()
	w := newWorld(t, scripted.New(time.Minute), 100)
	ctx := context.Background()
	long := w.send(t, "a long one")
	w.wait(t, long.TurnID, func(v turns.View) bool { return v.Status == models.TurnRunning })

	// Another company's running turn, newer, that no workflow runs.
	other := w.e.SeedCompany(t, w.owner, companies.CompanyInput{Name: "Bob Books", Idea: "Books by post"})
	scope, err := w.e.Store.SystemCompanyScope(ctx, other.ID)
	require.NoError(t, err)
	orphan, err := w.e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: "0190b7e2-0000-7000-8000-0000000000dd", Trigger: models.TriggerMessage, Message: "hi"},
		[]models.ContentBlock{{Type: models.ContentText, Text: "hi"}})
	require.NoError(t, err)
	_, err = w.e.Store.Turns().MarkTurnRunning(ctx, scope, orphan.ID, time.Now().UTC())
	require.NoError(t, err)

	sw := &turns.Sweeper{Store: w.e.Store, Temporal: w.tmp.Client, Engine: w.acts.Engine.(*turns.Engine), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Idle: time.Nanosecond, IdleChecks: 1}
	status := func(id string) models.TurnStatus {
		got, err := w.e.Store.Turns().GetTurn(ctx, scope, id)
		require.NoError(t, err)
		return got.Status
	}
	n, err := sw.Sweep(ctx, time.Hour)
	require.NoError(t, err)
	assert.Zero(t, n, "the first sweep checks the oldest, which its workflow runs")
	assert.Equal(t, models.TurnRunning, status(orphan.ID))
	n, err = sw.Sweep(ctx, time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the next one goes on after it")
	assert.Equal(t, models.TurnFailed, status(orphan.ID))

	// Past the newest it starts from the oldest again, which still runs.
	for range 2 {
		n, err = sw.Sweep(ctx, time.Hour)
		require.NoError(t, err)
		assert.Zero(t, n)
	}
	v, err := w.e.Svc.Turns.GetTurn(w.owner, long.TurnID)
	require.NoError(t, err)
	assert.Equal(t, models.TurnRunning, v.Status)
	_, err = w.e.Svc.Turns.InterruptTurn(w.owner, long.TurnID)
	require.NoError(t, err)
}

// A sweep waits for closing workflows once, closeWait in all: behind
// companies whose workflow is stuck open it does not wait closeWait for
// each (their turns wait for the next sweep).
func TestSweepWaitsForClosingWorkflowsOnceASweep(t *testing.T) {
	t.Parallel()
	w := newWorld(t, scripted.New(0), 100)
	ctx := context.Background()
	for i := range 3 {
		co := w.e.SeedCompany(t, w.owner, companies.CompanyInput{Name: fmt.Sprintf("Stuck %d", i), Idea: "Stuck"})
		// A workflow no worker runs holds the company's workflow id.
		_, err := w.tmp.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: contract.TurnWorkflowID(co.ID), TaskQueue: "nobody-polls-" + co.ID}, "Stuck")
		require.NoError(t, err)
		scope, err := w.e.Store.SystemCompanyScope(ctx, co.ID)
		require.NoError(t, err)
		_, err = w.e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: fmt.Sprintf("0190b7e2-0000-7000-8000-00000000010%d", i), Trigger: models.TriggerMessage, Message: "hi"},
			[]models.ContentBlock{{Type: models.ContentText, Text: "hi"}})
		require.NoError(t, err)
	}
	waits := &countWaits{Client: w.tmp.Client}
	// CloseWait is the sweep's whole budget: long enough that the read
	// before the first start cannot use it up on a loaded machine.
	sw := &turns.Sweeper{Store: w.e.Store, Temporal: waits, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), CloseWait: 2 * time.Second}
	n, err := sw.Sweep(ctx, -time.Second)
	require.NoError(t, err)
	assert.Zero(t, n, "each turn waits for its company's workflow")
	assert.Equal(t, int32(1), waits.n.Load(), "one wait, then the sweep goes on")
}

// countWaits counts GetWorkflow calls (a start's wait for a workflow to
// close).
type countWaits struct {
	client.Client
	n atomic.Int32
}

func (c *countWaits) GetWorkflow(ctx context.Context, workflowID, runID string) client.WorkflowRun {
	c.n.Add(1)
	return c.Client.GetWorkflow(ctx, workflowID, runID)
}

// switchable is the fast scripted model until useSlow is set.
// stopAt is a model that says when its call-th call has started.
type stopAt struct {
	*scripted.Model
	call    int32
	calls   atomic.Int32
	reached chan struct{}
}

func (m *stopAt) Complete(ctx context.Context, req models.ModelRequest, onText func(string)) (models.ModelResponse, error) {
	if m.calls.Add(1) == m.call {
		close(m.reached)
	}
	return m.Model.Complete(ctx, req, onText)
}

type switchable struct {
	fast, slow *scripted.Model
	useSlow    atomic.Bool
}

func (m *switchable) Complete(ctx context.Context, req models.ModelRequest, onText func(string)) (models.ModelResponse, error) {
	if m.useSlow.Load() {
		return m.slow.Complete(ctx, req, onText)
	}
	return m.fast.Complete(ctx, req, onText)
}

func TestOperatorRunsATaskWithoutTheCreditCheck(t *testing.T) {
	w := newWorld(t, scripted.New(0), 1) // under the minimum of a message
	task, err := w.e.Svc.Tasks.Create(w.owner, w.company, tasks.CreateInput{Title: "Write the menu", Description: "Three breads"})
	require.NoError(t, err)
	raw, err := w.e.Svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	admin := w.e.As(t, raw)

	_, err = w.e.Svc.Turns.RunTask(w.owner, task.ID)
	assert.Equal(t, models.CodeForbidden, domainErr(t, err).Code, "operators only")
	run, err := w.e.Svc.Turns.RunTask(admin, task.ID)
	require.NoError(t, err)
	assert.Equal(t, task.ID, run.TaskID)
	v := w.wait(t, run.RunID, ended)
	assert.Equal(t, models.TriggerTask, v.Trigger)
	got, err := w.e.Svc.Tasks.Get(w.owner, task.ID)
	require.NoError(t, err)
	assert.Equal(t, run.RunID, *got.LastRunID)
	// One credit pays no model call (a call needs its input and one credit
	// of answer free): the run fails before calling.
	assert.Equal(t, models.TurnFailed, v.Status)
	assert.Equal(t, string(models.CodeInsufficientCredits), v.ErrorCode)
	assert.Equal(t, models.TaskFailed, got.Status)
	assert.Contains(t, got.FailureReason, "credits")

	_, err = w.e.Svc.GrantCredits(context.Background(), w.e.Store.SystemConglomerateScope(w.cong), models.EntryAdminAdjustment, 50, "more")
	require.NoError(t, err)
	run2, err := w.e.Svc.Turns.RunTask(admin, task.ID)
	require.NoError(t, err, "a failed task runs again")
	v2 := w.wait(t, run2.RunID, ended)
	require.Equal(t, models.TurnCompleted, v2.Status, "%s: %s", v2.ErrorCode, v2.ErrorDetail)
	got, err = w.e.Svc.Tasks.Get(w.owner, task.ID)
	require.NoError(t, err)
	assert.Equal(t, models.TaskDone, got.Status)
	_, err = w.e.Svc.Turns.RunTask(admin, task.ID)
	assert.Equal(t, models.CodeConflict, domainErr(t, err).Code, "a done task does not run again")
	_, err = w.e.Svc.Turns.RunTask(admin, "0190b7e2-0000-7000-8000-000000000000")
	assert.Equal(t, models.CodeNotFound, domainErr(t, err).Code)
}

// A person (or the company's agents) moving a task to dispatched starts
// its run through the turn use case, with the credit gate: under the
// minimum a turn needs it is refused with nothing changed; with credits
// the run starts (the task's last_run_id), moves the task to running and
// ends it done.
func TestDispatchingATaskStartsItsRun(t *testing.T) {
	w := newWorld(t, scripted.New(0), 1) // under the minimum of a turn
	task, err := w.e.Svc.Tasks.Create(w.owner, w.company, tasks.CreateInput{Title: "Bake the menu", Description: "Three breads"})
	require.NoError(t, err)
	dispatched := func() (models.Task, error) {
		return w.e.Svc.Tasks.Update(w.owner, task.ID, tasks.UpdateInput{Status: new(models.TaskDispatched)})
	}
	_, err = dispatched()
	assert.Equal(t, models.CodeInsufficientCredits, domainErr(t, err).Code, "the credit gate")
	got, err := w.e.Svc.Tasks.Get(w.owner, task.ID)
	require.NoError(t, err)
	assert.Equal(t, models.TaskPending, got.Status, "refused with nothing changed")
	assert.Nil(t, got.LastRunID)

	_, err = w.e.Svc.GrantCredits(context.Background(), w.e.Store.SystemConglomerateScope(w.cong), models.EntryAdminAdjustment, 50, "more")
	require.NoError(t, err)
	got, err = dispatched()
	require.NoError(t, err)
	require.NotNil(t, got.LastRunID)
	v := w.wait(t, *got.LastRunID, ended)
	require.Equal(t, models.TurnCompleted, v.Status, "%s: %s", v.ErrorCode, v.ErrorDetail)
	assert.Equal(t, models.TriggerTask, v.Trigger)
	got, err = w.e.Svc.Tasks.Get(w.owner, task.ID)
	require.NoError(t, err)
	assert.Equal(t, models.TaskDone, got.Status)
	assert.Less(t, w.balance(t), int64(51), "the run was charged")
}

func TestScheduledRunsFollowTheCompanysStatus(t *testing.T) {
	w := newWorld(t, scripted.New(0), 100)
	ctx := context.Background()
	schedules := &turns.Schedules{Temporal: w.tmp.Client, Every: time.Hour}
	require.NoError(t, schedules.Ensure(ctx, w.company, w.cong, false))
	require.NoError(t, schedules.Ensure(ctx, w.company, w.cong, false), "ensuring twice is fine")
	h := w.tmp.Client.ScheduleClient().GetHandle(ctx, contract.AgentScheduleID(w.company))
	paused := func() bool {
		d, err := describeSchedule(ctx, h)
		require.NoError(t, err)
		return d.Schedule.State.Paused
	}
	assert.False(t, paused())

	// The schedule's run starts a turn of the schedule.
	require.NoError(t, retrySlowCall(ctx, func(ctx context.Context) error { return h.Trigger(ctx, client.ScheduleTriggerOptions{}) }))
	var turn turns.View
	require.Eventually(t, func() bool {
		p, err := w.e.Svc.Turns.ListTurns(w.owner, w.company, 10, "")
		require.NoError(t, err)
		if len(p.Turns) == 0 || !ended(p.Turns[0]) {
			return false
		}
		turn = p.Turns[0]
		return true
	}, 60*time.Second, 50*time.Millisecond)
	assert.Equal(t, models.TriggerSchedule, turn.Trigger)
	assert.Equal(t, models.TurnCompleted, turn.Status)

	// Pausing the company pauses its schedule; a run that fires anyway skips.
	st := models.CompanyPaused
	_, err := w.e.Svc.UpdateCompany(w.owner, w.company, companies.CompanyUpdate{Status: &st})
	require.NoError(t, err)
	assert.True(t, paused())
	scope, err := w.e.Store.SystemCompanyScope(ctx, w.company)
	require.NoError(t, err)
	res, err := w.e.Svc.Turns.StartScheduledRun(ctx, scope)
	require.NoError(t, err)
	assert.Equal(t, "the company is paused", res.Skipped)
	assert.Empty(t, res.TurnID)
	// Messages still work while paused.
	msg := w.send(t, "Still there?")
	w.wait(t, msg.TurnID, ended)

	st = models.CompanyActive
	_, err = w.e.Svc.UpdateCompany(w.owner, w.company, companies.CompanyUpdate{Status: &st})
	require.NoError(t, err)
	assert.False(t, paused())

	// Archiving deletes it.
	require.NoError(t, w.e.Svc.ArchiveCompany(w.owner, w.company))
	_, err = describeSchedule(ctx, h)
	var nf *serviceerror.NotFound
	assert.ErrorAs(t, err, &nf)
}

// A company provisioned while paused (create_business with paused) has no
// schedule; activating it creates one, running.
func TestActivatingACompanyWithoutAScheduleCreatesIt(t *testing.T) {
	w := newWorld(t, scripted.New(0), 100)
	ctx := context.Background()
	schedules := &turns.Schedules{Temporal: w.tmp.Client, Every: time.Hour}
	h := w.tmp.Client.ScheduleClient().GetHandle(ctx, contract.AgentScheduleID(w.company))
	_, err := describeSchedule(ctx, h)
	var nf *serviceerror.NotFound
	require.ErrorAs(t, err, &nf, "no schedule yet")

	require.NoError(t, schedules.Resume(ctx, w.company, w.cong))
	d, err := describeSchedule(ctx, h)
	require.NoError(t, err, "activating made the schedule")
	assert.False(t, d.Schedule.State.Paused)
	require.NoError(t, schedules.Resume(ctx, w.company, w.cong), "activating twice is fine")
}

// describeSchedule describes a schedule, trying again while the server is
// too slow to answer within the SDK's own 10 s deadline, or its scheduler
// workflow's task failed and is being retried (a loaded machine under
// -race: Describe queries that workflow); any other answer, NotFound
// included, is returned.
func describeSchedule(ctx context.Context, h client.ScheduleHandle) (*client.ScheduleDescription, error) {
	var d *client.ScheduleDescription
	err := retrySlowCall(ctx, func(ctx context.Context) (err error) {
		d, err = h.Describe(ctx)
		return err
	})
	return d, err
}

// retrySlowCall runs an idempotent Temporal call until it answers anything
// but a deadline of its own or "workflow not ready", within
// testenv.EventualBound.
func retrySlowCall(ctx context.Context, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, testenv.EventualBound)
	defer cancel()
	for {
		err := call(ctx)
		var deadline *serviceerror.DeadlineExceeded
		var notReady *serviceerror.WorkflowNotReady
		if err == nil || ctx.Err() != nil || !(errors.As(err, &deadline) || errors.As(err, &notReady) || errors.Is(err, context.DeadlineExceeded)) {
			return err
		}
		time.Sleep(100 * time.Millisecond) // not a synchronisation: a pause between attempts
	}
}

// TestMessageWhileTemporalIsDownIsRefusedForNow (docs/reliability.md,
// "Temporal down"): a message whose turn Temporal does not take answers
// upstream_unavailable with retry_after_seconds (REST: 503 with
// Retry-After) and leaves no turn behind; it may be sent again as it is.
// A message while Temporal is down is taken: its turn waits queued and
// the sweep starts it once Temporal answers again.
func TestMessageWhileTemporalIsDownStartsOnceItIsBack(t *testing.T) {
	t.Parallel()
	w := newWorldWith(t, scripted.New(0), 100, func(c client.Client) client.Client {
		return testenv.UnreachableTemporal{Client: c, Err: serviceerror.NewUnavailable("connection refused")}
	})
	st, err := w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: "Plan the launch"})
	require.NoError(t, err)
	assert.Equal(t, models.TurnQueued, st.Status)
	_, err = w.e.Svc.Turns.SendMessage(w.owner, w.company, turns.Message{Text: "And the menu"})
	assert.Equal(t, st.TurnID, domainErr(t, err).Extra["turn_id"], "the queued turn is the company's turn")
	w.e.Svc.Turns.Close(context.Background())
	v, err := w.e.Svc.Turns.GetTurn(w.owner, st.TurnID)
	require.NoError(t, err)
	assert.Equal(t, models.TurnQueued, v.Status)

	sw := &turns.Sweeper{Store: w.e.Store, Temporal: w.tmp.Client, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	n, err := sw.Sweep(context.Background(), -time.Second)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, models.TurnCompleted, w.wait(t, st.TurnID, ended).Status)
}
