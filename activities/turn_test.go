package activities_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"holdco/activities"
	"holdco/models"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/service/turns"
	"holdco/store"
	"holdco/testenv"
	"holdco/workflows/contract"
)

func activityEnv(acts any) *testsuite.TestActivityEnvironment {
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	env.RegisterActivity(acts)
	return env
}

// beatingEnv is an activity environment that counts the activity's
// heartbeats as it records them (before the SDK throttles what it sends to
// one per 30 s in this environment).
func beatingEnv(acts any, beats *atomic.Int64) *testsuite.TestActivityEnvironment {
	env := activityEnv(acts)
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{&beatCounter{beats: beats}}})
	return env
}

type beatCounter struct {
	interceptor.WorkerInterceptorBase
	beats *atomic.Int64
}

func (c *beatCounter) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &beatInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, beats: c.beats}
}

type beatInbound struct {
	interceptor.ActivityInboundInterceptorBase
	beats *atomic.Int64
}

func (b *beatInbound) Init(outbound interceptor.ActivityOutboundInterceptor) error {
	return b.Next.Init(&beatOutbound{ActivityOutboundInterceptorBase: interceptor.ActivityOutboundInterceptorBase{Next: outbound}, beats: b.beats})
}

type beatOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
	beats *atomic.Int64
}

func (b *beatOutbound) RecordHeartbeat(ctx context.Context, details ...any) {
	b.beats.Add(1)
	b.Next.RecordHeartbeat(ctx, details...)
}

// listModel asks for list_documents once, then answers.
type listModel struct{ calls atomic.Int64 }

func (m *listModel) Complete(_ context.Context, _ models.ModelRequest, onText func(string)) (models.ModelResponse, error) {
	usage := models.ModelUsage{InputTokens: 10, OutputTokens: 1}
	if m.calls.Add(1) == 1 {
		onText("Looking.")
		return models.ModelResponse{Model: "list", StopReason: models.StopToolUse, Usage: usage, Content: []models.ContentBlock{
			{Type: models.ContentText, Text: "Looking."},
			{Type: models.ContentToolUse, ToolUseID: "call_1", ToolName: "list_documents", Input: []byte(`{}`)}}}, nil
	}
	return models.ModelResponse{Model: "list", StopReason: models.StopEndTurn, Usage: usage,
		Content: []models.ContentBlock{{Type: models.ContentText, Text: "Nothing written yet."}}}, nil
}

// The turn's activities run a whole turn through the engine, each as the
// worker runs it: start, a model step with a tool call, the tool step, the
// final model step, the end; the turn is completed and each call charged.
func TestTurnActivitiesRunATurnThroughTheEngine(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	owner, cong := e.User(t, "ada@example.com")
	co, err := e.Svc.CreateCompany(owner, cong, companies.CompanyInput{Name: "Ada Bakery", Idea: "Bread by subscription"})
	require.NoError(t, err)
	_, err = e.Svc.GrantCredits(ctx, e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 10, "test credits")
	require.NoError(t, err)
	scope, err := e.Store.SystemCompanyScope(ctx, co.ID)
	require.NoError(t, err)
	turn, err := e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: uuid.NewString(), Trigger: models.TriggerMessage, Message: "What is written?"},
		[]models.ContentBlock{{Type: models.ContentText, Text: "What is written?"}})
	require.NoError(t, err)
	acts := &activities.Turns{Store: e.Store, Engine: &turns.Engine{Store: e.Store, Billing: e.Svc.BillingUseCases, Tools: e.Svc.Tools, Model: &listModel{},
		Logger: slog.New(slog.DiscardHandler)}, HeartbeatEvery: 10 * time.Millisecond}
	ref := contract.TurnRef{TurnID: turn.ID, CompanyID: co.ID, ConglomerateID: cong}

	v, err := activityEnv(acts).ExecuteActivity(acts.StartTurn, ref)
	require.NoError(t, err)
	var started contract.StartTurnResult
	require.NoError(t, v.Get(&started))
	assert.True(t, started.Active)

	v, err = activityEnv(acts).ExecuteActivity(acts.ModelStep, contract.StepInput{TurnRef: ref, Step: 1})
	require.NoError(t, err)
	var step contract.ModelStepResult
	require.NoError(t, v.Get(&step))
	assert.Equal(t, []contract.ToolCallRef{{Index: 0, ID: "call_1", Name: "list_documents", Quick: true}}, step.Calls)

	v, err = activityEnv(acts).ExecuteActivity(acts.ToolStep, contract.ToolStepInput{StepInput: contract.StepInput{TurnRef: ref, Step: 1}, Index: 0})
	require.NoError(t, err)
	var tool contract.ToolStepResult
	require.NoError(t, v.Get(&tool))
	assert.Equal(t, contract.ToolStepResult{}, tool)

	v, err = activityEnv(acts).ExecuteActivity(acts.ModelStep, contract.StepInput{TurnRef: ref, Step: 2})
	require.NoError(t, err)
	require.NoError(t, v.Get(&step))
	assert.Empty(t, step.Calls, "the final answer")

	v, err = activityEnv(acts).ExecuteActivity(acts.FinishTurn, contract.FinishTurnInput{TurnRef: ref, Status: models.TurnCompleted})
	require.NoError(t, err)
	var status models.TurnStatus
	require.NoError(t, v.Get(&status))
	assert.Equal(t, models.TurnCompleted, status)
	ended, err := e.Store.Turns().GetTurn(ctx, scope, turn.ID)
	require.NoError(t, err)
	assert.Equal(t, "Nothing written yet.", ended.Answer)
	require.NotNil(t, ended.CreditsCost)
	assert.EqualValues(t, 4, *ended.CreditsCost, "two calls of 2 credits")

	v, err = activityEnv(acts).ExecuteActivity(acts.StartScheduledRun, contract.ScheduledRunInput{CompanyID: co.ID})
	require.NoError(t, err)
	var run contract.ScheduledRunResult
	require.NoError(t, v.Get(&run))
	assert.Equal(t, "scheduled runs are not configured", run.Skipped)
}

// companyTurnRef is a company of a store, for activities that only look
// the company up before they call the engine.
func companyTurnRef(t *testing.T) (*store.Store, contract.TurnRef) {
	t.Helper()
	ctx := context.Background()
	st := testenv.NewStore(t)
	_, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	co, err := st.Companies().CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: "shop"})
	require.NoError(t, err)
	return st, contract.TurnRef{TurnID: "00000000-0000-4000-8000-000000000000", CompanyID: co.ID, ConglomerateID: cong.ID}
}

// slowEngine's steps last until the activity has heartbeated a few
// times: work after a model call (its trace, message and charge) on a
// slow database is still a live activity.
type slowEngine struct {
	activities.TurnEngine
	beats atomic.Int64
	err   error
}

func (s *slowEngine) waitForBeats(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for s.beats.Load() < 3 {
		if time.Now().After(deadline) {
			return errors.New("no heartbeats while the step ran")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return s.err
}

func (s *slowEngine) ModelStep(ctx context.Context, _ turns.Scopes, _ contract.StepInput) (contract.ModelStepResult, error) {
	return contract.ModelStepResult{}, s.waitForBeats(ctx)
}

func (s *slowEngine) ToolStep(ctx context.Context, _ turns.Scopes, _ contract.ToolStepInput, attempt int) (contract.ToolStepResult, error) {
	if attempt != 1 {
		return contract.ToolStepResult{}, errors.New("the first attempt is attempt 1")
	}
	return contract.ToolStepResult{}, s.waitForBeats(ctx)
}

// The model and tool steps heartbeat from their start to their end, not
// only while the model or the tool runs (issue: a loaded machine reached
// the heartbeat timeout during the writes after a model call, and the
// retried activity called the model a second time).
func TestTurnStepsHeartbeatUntilTheyReturn(t *testing.T) {
	st, ref := companyTurnRef(t)
	for _, name := range []string{"ModelStep", "ToolStep"} {
		t.Run(name, func(t *testing.T) {
			eng := &slowEngine{}
			acts := &activities.Turns{Store: st, Engine: eng, HeartbeatEvery: 5 * time.Millisecond}
			env := beatingEnv(acts, &eng.beats)
			var err error
			if name == "ModelStep" {
				_, err = env.ExecuteActivity(acts.ModelStep, contract.StepInput{TurnRef: ref, Step: 1})
			} else {
				_, err = env.ExecuteActivity(acts.ToolStep, contract.ToolStepInput{StepInput: contract.StepInput{TurnRef: ref, Step: 1}})
			}
			require.NoError(t, err)
			assert.GreaterOrEqual(t, eng.beats.Load(), int64(3))
		})
	}
}

// The engine's decisions become the workflow's errors: a turn failure is
// an application error of its code, retried only when the engine says
// so, after the provider's delay; a cancelled call is Interrupted; any
// other error is returned as it is (the retry policy retries it).
func TestTurnStepErrorsBecomeTheWorkflowsErrors(t *testing.T) {
	st, ref := companyTurnRef(t)
	for _, c := range []struct {
		name         string
		err          error
		typ          string
		nonRetryable bool
		delay        time.Duration
	}{
		{"out of credits", &turns.StepError{Code: models.CodeInsufficientCredits, Message: "top up"}, contract.ErrTurnInsufficientCredits, true, 0},
		{"rate limited upstream", &turns.StepError{Code: models.CodeUpstreamUnavailable, Message: "busy", Retryable: true, RetryAfter: 3 * time.Second},
			contract.ErrTurnUpstream, false, 3 * time.Second},
		{"interrupted", &turns.StepError{Interrupted: true, Message: "model call", Err: context.Canceled}, contract.ErrInterrupted, false, 0},
		{"database", errors.New("database is locked"), "", false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			eng := &slowEngine{err: c.err}
			acts := &activities.Turns{Store: st, Engine: eng, HeartbeatEvery: time.Millisecond}
			env := beatingEnv(acts, &eng.beats)
			_, err := env.ExecuteActivity(acts.ModelStep, contract.StepInput{TurnRef: ref, Step: 1})
			require.Error(t, err)
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, err, &appErr)
			if c.typ == "" {
				assert.Contains(t, appErr.Error(), "database is locked")
				assert.False(t, appErr.NonRetryable())
				return
			}
			assert.Equal(t, c.typ, appErr.Type())
			assert.Equal(t, c.nonRetryable, appErr.NonRetryable())
			assert.Equal(t, c.delay, appErr.NextRetryDelay())
		})
	}
}
