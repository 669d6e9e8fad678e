package activities_test

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
	"go.temporal.io/sdk/testsuite"

	"holdco/activities"
	"holdco/models"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/store"
)

// turnWorld is a company with credits, its turn activities run outside a
// workflow (as a worker would, attempt by attempt).
type turnWorld struct {
	e       *servicetest.Env
	acts    *activities.Turns
	scope   store.CompanyScope
	cong    string
	company string
}

func newTurnWorld(t *testing.T, model activities.Model, credits int64) *turnWorld {
	t.Helper()
	e := servicetest.New(t)
	owner, cong := e.User(t, "ada@example.com")
	co, err := e.Svc.CreateCompany(owner, cong, companies.CompanyInput{Name: "Ada Bakery", Idea: "Bread by subscription"})
	require.NoError(t, err)
	if credits > 0 {
		_, err = e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, credits, "test credits")
		require.NoError(t, err)
	}
	scope, err := e.Store.SystemCompanyScope(context.Background(), co.ID)
	require.NoError(t, err)
	return &turnWorld{e: e, scope: scope, cong: cong, company: co.ID,
		acts: &activities.Turns{Store: e.Store, Billing: e.Svc.BillingUseCases, Tools: e.Svc.Tools, Model: model,
			Logger: slog.New(slog.DiscardHandler), HeartbeatEvery: 50 * time.Millisecond}}
}

// newTurn stores a running turn with the user's message.
func (w *turnWorld) newTurn(t *testing.T, message string) activities.TurnRef {
	t.Helper()
	ctx := context.Background()
	turn, err := w.e.Store.CreateTurn(ctx, w.scope, models.Turn{SessionID: uuid.NewString(), Trigger: models.TriggerMessage, Message: message},
		[]models.ContentBlock{{Type: models.ContentText, Text: message}})
	require.NoError(t, err)
	_, err = w.e.Store.MarkTurnRunning(ctx, w.scope, turn.ID, time.Now().UTC())
	require.NoError(t, err)
	return activities.TurnRef{TurnID: turn.ID, CompanyID: w.company, ConglomerateID: w.cong}
}

func (w *turnWorld) env() *testsuite.TestActivityEnvironment {
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	env.RegisterActivity(w.acts)
	return env
}

func (w *turnWorld) count(t *testing.T, query string, args ...any) int64 {
	t.Helper()
	var c int64
	require.NoError(t, w.e.SQL.QueryRow(rebind(w.e.Placeholder, query), args...).Scan(&c))
	return c
}

func (w *turnWorld) balance(t *testing.T) int64 {
	t.Helper()
	b, err := w.e.Store.CreditBalance(context.Background(), w.e.Store.SystemConglomerateScope(w.cong), time.Now().UTC().Truncate(24*time.Hour))
	require.NoError(t, err)
	return b.Balance
}

// A crash between a tool's effect and the step's stored result (the
// worker died after the task's insert committed, or after the mail went
// out) makes Temporal run the activity again: the effect is found by the
// call's key, not made a second time, and the billable call is paid once.
func TestToolCallRetriedAfterACrashMakesItsEffectOnce(t *testing.T) {
	w := newTurnWorld(t, nil, 10)
	ref := w.newTurn(t, "Plan the launch")
	ctx := context.Background()
	args := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	_, _, err := w.e.Store.PutTurnMessage(ctx, w.scope, models.TurnMessage{TurnID: ref.TurnID, Step: 1, Part: 0, Role: models.RoleAssistant,
		Content: []models.ContentBlock{
			{Type: models.ContentText, Text: "On it."},
			{Type: models.ContentToolUse, ToolUseID: "call_1", ToolName: "create_task", Input: args(map[string]string{"title": "Order flour", "description": "Ten sacks"})},
			{Type: models.ContentToolUse, ToolUseID: "call_2", ToolName: "send_email", Input: args(map[string]string{"to": "miller@example.com", "subject": "Flour", "text": "Ten sacks, please."})},
			{Type: models.ContentToolUse, ToolUseID: "call_3", ToolName: "add_prospect", Input: args(map[string]string{"name": "The Miller"})},
		}})
	require.NoError(t, err)

	for attempt := 1; attempt <= 3; attempt++ {
		for index := range 3 {
			v, err := w.env().ExecuteActivity(w.acts.ToolStep, activities.ToolStepInput{StepInput: activities.StepInput{TurnRef: ref, Step: 1}, Index: index})
			require.NoError(t, err, "attempt %d, call %d", attempt, index)
			var res activities.ToolStepResult
			require.NoError(t, v.Get(&res))
			assert.False(t, res.IsError, "attempt %d, call %d", attempt, index)
		}
		// The crash: the effects committed, the step's results did not.
		_, err := w.e.SQL.Exec(rebind(w.e.Placeholder, "DELETE FROM turn_messages WHERE turn_id = ? AND step = 1 AND part > 0"), ref.TurnID)
		require.NoError(t, err)
	}

	assert.Equal(t, int64(1), w.count(t, "SELECT COUNT(*) FROM company_tasks WHERE company_id = ?", w.company), "one task")
	assert.Equal(t, int64(1), w.count(t, "SELECT COUNT(*) FROM company_emails WHERE company_id = ? AND direction = ?", w.company, string(models.EmailOutbound)), "one email")
	assert.Equal(t, int64(1), w.count(t, "SELECT COUNT(*) FROM company_prospects WHERE company_id = ?", w.company), "one prospect")
	assert.Equal(t, int64(1), w.count(t, "SELECT COUNT(*) FROM credit_ledger_entries WHERE run_id = ? AND type = ?", ref.TurnID, string(models.EntryToolUsage)),
		"send_email charged once, with the turn's id")
	assert.Equal(t, int64(9), w.balance(t))
}

func rebind(style, q string) string {
	if style == "?" {
		return q
	}
	n := 0
	out := []byte{}
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			out = append(out, []byte("$"+string(rune('0'+n)))...)
			continue
		}
		out = append(out, q[i])
	}
	return string(out)
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

// Fifty turns on 10 credits start their model calls at once: each call
// holds its maximum price (or what is left) before it runs, so the calls
// that run are the ones the balance pays for, and every one is paid.
func TestConcurrentModelCallsAreBoundedByTheBalance(t *testing.T) {
	const turns, credits = 50, 10
	m := &gateModel{entered: make(chan struct{}, turns), release: make(chan struct{})}
	w := newTurnWorld(t, m, credits)
	refs := make([]activities.TurnRef, turns)
	for i := range refs {
		refs[i] = w.newTurn(t, "Hello")
	}
	var refused atomic.Int64
	done := make(chan struct{}, turns)
	var wg sync.WaitGroup
	for _, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.env().ExecuteActivity(w.acts.ModelStep, activities.StepInput{TurnRef: ref, Step: 1})
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
	for inside+int(refused.Load()) < turns {
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
	held, err := w.e.Store.HeldCredits(context.Background(), w.e.Store.SystemConglomerateScope(w.cong), time.Now().UTC())
	require.NoError(t, err)
	assert.Zero(t, held, "every hold was settled or released")
}
