package turns_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/service/turns"
	"holdco/store"
	"holdco/workflows/contract"
)

// turnWorld is a company with credits and the turn engine, its steps run
// without Temporal (as the activities would, attempt by attempt).
type turnWorld struct {
	e       *servicetest.Env
	engine  *turns.Engine
	scope   store.CompanyScope
	sc      turns.Scopes
	cong    string
	company string
	owner   context.Context
}

func newTurnWorld(t *testing.T, model turns.Model, credits int64) *turnWorld {
	t.Helper()
	e := servicetest.New(t)
	owner, cong := e.User(t, "ada@example.com")
	// Seeded, not started: the test's balance is its own (a start grants
	// welcome credits).
	co := e.SeedCompany(t, owner, companies.CompanyInput{Name: "Ada Bakery", Idea: "Bread by subscription"})
	if credits > 0 {
		_, err := e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, credits, "test credits")
		require.NoError(t, err)
	}
	scope, err := e.Store.SystemCompanyScope(context.Background(), co.ID)
	require.NoError(t, err)
	return &turnWorld{e: e, scope: scope, cong: cong, company: co.ID, owner: owner, sc: turns.Scopes{Company: scope, Conglomerate: e.Store.SystemConglomerateScope(cong)},
		engine: &turns.Engine{Store: e.Store, Billing: e.Svc.BillingUseCases, Tools: e.Svc.Tools, Model: model,
			Logger: slog.New(slog.DiscardHandler)}}
}

// newTurn stores a running turn with the user's message.
func (w *turnWorld) newTurn(t *testing.T, message string) contract.TurnRef {
	t.Helper()
	ctx := context.Background()
	turn, err := w.e.Store.Turns().CreateTurn(ctx, w.scope, models.Turn{SessionID: uuid.NewString(), Trigger: models.TriggerMessage, Message: message},
		[]models.ContentBlock{{Type: models.ContentText, Text: message}})
	require.NoError(t, err)
	_, err = w.e.Store.Turns().MarkTurnRunning(ctx, w.scope, turn.ID, time.Now().UTC())
	require.NoError(t, err)
	return contract.TurnRef{TurnID: turn.ID, CompanyID: w.company, ConglomerateID: w.cong}
}

// newCompanyTurn seeds another company of the account and stores a
// running turn of it (a company runs one turn at a time): the turn and the
// scopes its steps run in.
func (w *turnWorld) newCompanyTurn(t *testing.T, message string) (contract.TurnRef, turns.Scopes) {
	t.Helper()
	ctx := context.Background()
	co := w.e.SeedCompany(t, w.owner, companies.CompanyInput{Name: "Ada " + uuid.NewString()[:8], Idea: "Bread by subscription"})
	scope, err := w.e.Store.SystemCompanyScope(ctx, co.ID)
	require.NoError(t, err)
	turn, err := w.e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: uuid.NewString(), Trigger: models.TriggerMessage, Message: message},
		[]models.ContentBlock{{Type: models.ContentText, Text: message}})
	require.NoError(t, err)
	_, err = w.e.Store.Turns().MarkTurnRunning(ctx, scope, turn.ID, time.Now().UTC())
	require.NoError(t, err)
	return contract.TurnRef{TurnID: turn.ID, CompanyID: co.ID, ConglomerateID: w.cong}, turns.Scopes{Company: scope, Conglomerate: w.sc.Conglomerate}
}

func (w *turnWorld) count(t *testing.T, query string, args ...any) int64 {
	t.Helper()
	var c int64
	require.NoError(t, w.e.SQL.QueryRow(w.e.Rebind(query), args...).Scan(&c))
	return c
}

func (w *turnWorld) balance(t *testing.T) int64 {
	t.Helper()
	b, err := w.e.Store.Billing().CreditBalance(context.Background(), w.e.Store.SystemConglomerateScope(w.cong), time.Now().UTC().Truncate(24*time.Hour))
	require.NoError(t, err)
	return b.Balance
}

// A crash between a tool's effect and the step's stored result (the
// worker died after the task's insert committed, or after the mail went
// out) makes Temporal run the step again: the effect is found by the
// call's key, not made a second time, and the billable call is paid once.
func TestToolCallRetriedAfterACrashMakesItsEffectOnce(t *testing.T) {
	w := newTurnWorld(t, nil, 10)
	ref := w.newTurn(t, "Plan the launch")
	ctx := context.Background()
	args := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	_, _, err := w.e.Store.Turns().PutTurnMessage(ctx, w.scope, models.TurnMessage{TurnID: ref.TurnID, Step: 1, Part: 0, Role: models.RoleAssistant,
		Content: []models.ContentBlock{
			{Type: models.ContentText, Text: "On it."},
			{Type: models.ContentToolUse, ToolUseID: "call_1", ToolName: "create_task", Input: args(map[string]string{"title": "Order flour", "description": "Ten sacks"})},
			{Type: models.ContentToolUse, ToolUseID: "call_2", ToolName: "send_email", Input: args(map[string]string{"to": "miller@example.com", "subject": "Flour", "text": "Ten sacks, please."})},
			{Type: models.ContentToolUse, ToolUseID: "call_3", ToolName: "add_prospect", Input: args(map[string]string{"name": "The Miller"})},
		}})
	require.NoError(t, err)

	for attempt := 1; attempt <= 3; attempt++ {
		for index := range 3 {
			res, err := w.engine.ToolStep(ctx, w.sc, contract.ToolStepInput{StepInput: contract.StepInput{TurnRef: ref, Step: 1}, Index: index}, attempt)
			require.NoError(t, err, "attempt %d, call %d", attempt, index)
			assert.False(t, res.IsError, "attempt %d, call %d", attempt, index)
		}
		// The crash: the effects committed, the step's results did not.
		_, err := w.e.SQL.Exec(w.e.Rebind("DELETE FROM turn_messages WHERE turn_id = ? AND step = 1 AND part > 0"), ref.TurnID)
		require.NoError(t, err)
	}

	assert.Equal(t, int64(1), w.count(t, "SELECT COUNT(*) FROM company_tasks WHERE company_id = ?", w.company), "one task")
	assert.Equal(t, int64(1), w.count(t, "SELECT COUNT(*) FROM company_emails WHERE company_id = ? AND direction = ?", w.company, string(models.EmailOutbound)), "one email")
	assert.Equal(t, int64(1), w.count(t, "SELECT COUNT(*) FROM company_prospects WHERE company_id = ?", w.company), "one prospect")
	assert.Equal(t, int64(1), w.count(t, "SELECT COUNT(*) FROM credit_ledger_entries WHERE run_id = ? AND type = ?", ref.TurnID, string(models.EntryToolUsage)),
		"send_email charged once, with the turn's id")
	assert.Equal(t, int64(9), w.balance(t))
}

// gateModel holds every call until the test releases it and counts the
// calls; each costs 2 credits (10 input tokens, 1 output token).
type gateModel struct {
	calls   atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func (m *gateModel) Complete(ctx context.Context, _ models.ModelRequest, _ func(string)) (models.ModelResponse, error) {
	m.calls.Add(1)
	m.entered <- struct{}{}
	select {
	case <-m.release:
	case <-ctx.Done():
		return models.ModelResponse{}, &models.ModelCallError{Kind: models.ModelCanceled, Detail: "canceled"}
	}
	return models.ModelResponse{Model: "gate", StopReason: models.StopEndTurn, Usage: models.ModelUsage{InputTokens: 10, OutputTokens: 1},
		Content: []models.ContentBlock{{Type: models.ContentText, Text: "Done."}}}, nil
}

// Fifty turns (of fifty companies of one account) on 10 credits start
// their model calls at once: each call
// holds its maximum price (or what is left) before it runs, so the calls
// that run are the ones the balance pays for, and every one is paid.
func TestConcurrentModelCallsAreBoundedByTheBalance(t *testing.T) {
	const runs, credits = 50, 10
	m := &gateModel{entered: make(chan struct{}, runs), release: make(chan struct{})}
	w := newTurnWorld(t, m, credits)
	refs := make([]contract.TurnRef, runs)
	scopes := make([]turns.Scopes, runs)
	for i := range refs {
		refs[i], scopes[i] = w.newCompanyTurn(t, "Hello")
	}
	var refused atomic.Int64
	done := make(chan struct{}, runs)
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.engine.ModelStep(context.Background(), scopes[i], contract.StepInput{TurnRef: ref, Step: 1})
			if err != nil {
				assert.Contains(t, err.Error(), "credits", "a refused call is refused for credits")
				refused.Add(1)
				done <- struct{}{}
			}
		}()
	}
	// Every turn either runs its call (held in the model) or was refused
	// before it: then the calls are let go.
	inside := 0
	for inside+int(refused.Load()) < runs {
		select {
		case <-m.entered:
			inside++
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("stuck: %d calls running, %d refused", inside, refused.Load())
		}
	}
	close(m.release)
	wg.Wait()

	calls := m.calls.Load()
	charged := credits - w.balance(t)
	t.Logf("%d calls made, %d refused, %d credits charged", calls, refused.Load(), charged)
	assert.GreaterOrEqual(t, calls, int64(1))
	assert.Equal(t, 2*calls, charged, "every call made was paid in full")
	assert.LessOrEqual(t, charged, int64(credits))
	held, err := w.e.Store.Billing().HeldCredits(context.Background(), w.e.Store.SystemConglomerateScope(w.cong), time.Now().UTC())
	require.NoError(t, err)
	assert.Zero(t, held, "every hold was settled or released")
}

// longAnswerModel answers as long as the request lets it: its output is the
// request's MaxTokens (DefaultMaxOutputTokens when 0), so each call costs
// the most it may.
type longAnswerModel struct{ maxTokens atomic.Int64 }

func (m *longAnswerModel) Complete(_ context.Context, req models.ModelRequest, _ func(string)) (models.ModelResponse, error) {
	out := int64(req.MaxTokens)
	if out <= 0 {
		out = turns.DefaultMaxOutputTokens
	}
	m.maxTokens.Store(out)
	return models.ModelResponse{Model: "greedy", StopReason: models.StopEndTurn, Usage: models.ModelUsage{InputTokens: 10, OutputTokens: out},
		Content: []models.ContentBlock{{Type: models.ContentText, Text: "Done."}}}, nil
}

// TestModelCallOnFewCreditsIsPaidInFull: with less free than a call's
// maximum price (4 credits; a whole answer of 4,096 tokens costs 6), the
// call still runs, its answer limited to what the free credits pay, and
// it is charged its whole price. Before, it ran the whole answer and was
// charged the 4 credits left: `make outage` measured 6 calls on 10
// credits, priced 12.
func TestModelCallOnFewCreditsIsPaidInFull(t *testing.T) {
	const credits = 4
	m := &longAnswerModel{}
	w := newTurnWorld(t, m, credits)
	ref := w.newTurn(t, "Hello")
	_, err := w.engine.ModelStep(context.Background(), w.sc, contract.StepInput{TurnRef: ref, Step: 1})
	require.NoError(t, err, "the call runs and is paid")
	price := billing.ModelCallCredits(models.ModelUsage{InputTokens: 10, OutputTokens: m.maxTokens.Load()})
	assert.Less(t, m.maxTokens.Load(), int64(turns.DefaultMaxOutputTokens), "the answer is limited to what the free credits pay")
	assert.LessOrEqual(t, price, int64(credits))
	assert.Equal(t, price, credits-w.balance(t), "the call is charged its whole price")
}
