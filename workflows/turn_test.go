package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"holdco/models"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

var turnOptions = workflow.RegisterOptions{Name: contract.TurnWorkflowName}

// fakeTurn is the turn's activities in memory: model answers by step,
// tool results by call, and what FinishTurn was told.
type fakeTurn struct {
	mu       sync.Mutex
	model    func(ctx context.Context, step int) (contract.ModelStepResult, error)
	tool     func(ctx context.Context, in contract.ToolStepInput) (contract.ToolStepResult, error)
	finished []contract.FinishTurnInput
}

func (f *fakeTurn) register(r worker.Registry) {
	r.RegisterActivityWithOptions(func(context.Context, contract.TurnRef) (contract.StartTurnResult, error) {
		return contract.StartTurnResult{Active: true}, nil
	}, activity.RegisterOptions{Name: "StartTurn"})
	r.RegisterActivityWithOptions(func(ctx context.Context, in contract.StepInput) (contract.ModelStepResult, error) {
		return f.model(ctx, in.Step)
	}, activity.RegisterOptions{Name: "ModelStep"})
	r.RegisterActivityWithOptions(func(ctx context.Context, in contract.ToolStepInput) (contract.ToolStepResult, error) {
		if f.tool == nil {
			return contract.ToolStepResult{}, nil
		}
		return f.tool(ctx, in)
	}, activity.RegisterOptions{Name: "ToolStep"})
	r.RegisterActivityWithOptions(func(_ context.Context, in contract.FinishTurnInput) (models.TurnStatus, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.finished = append(f.finished, in)
		return in.Status, nil
	}, activity.RegisterOptions{Name: "FinishTurn"})
}

func (f *fakeTurn) end(t *testing.T) contract.FinishTurnInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	require.Len(t, f.finished, 1, "the turn ends once")
	return f.finished[0]
}

func toolCall(name string) contract.ModelStepResult {
	return contract.ModelStepResult{Calls: []contract.ToolCallRef{{Index: 0, ID: "call_1", Name: name}}}
}

func turnEnv(f *fakeTurn) *testsuite.TestWorkflowEnvironment {
	env := newTestEnv()
	env.RegisterWorkflowWithOptions(workflows.Turn, turnOptions)
	f.register(env)
	return env
}

var turnIn = contract.TurnInput{TurnID: "turn-1", CompanyID: "co-1", ConglomerateID: "cong-1"}

func TestTurnCompletesWhenTheModelAnswersWithoutTools(t *testing.T) {
	f := &fakeTurn{model: func(_ context.Context, step int) (contract.ModelStepResult, error) {
		if step < 3 {
			return toolCall("write_document"), nil
		}
		return contract.ModelStepResult{}, nil
	}}
	env := turnEnv(f)
	env.ExecuteWorkflow(workflows.Turn, turnIn)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, models.TurnCompleted, f.end(t).Status)
}

func TestTurnWaitsForTheAnswerToItsQuestion(t *testing.T) {
	f := &fakeTurn{
		model: func(context.Context, int) (contract.ModelStepResult, error) { return toolCall("ask_question"), nil },
		tool: func(context.Context, contract.ToolStepInput) (contract.ToolStepResult, error) {
			return contract.ToolStepResult{Question: "Which city?"}, nil
		},
	}
	env := turnEnv(f)
	env.ExecuteWorkflow(workflows.Turn, turnIn)
	require.NoError(t, env.GetWorkflowError())
	end := f.end(t)
	assert.Equal(t, models.TurnWaiting, end.Status)
	assert.Equal(t, "Which city?", end.Question)
}

func TestInterruptCancelsTheToolCallInFlight(t *testing.T) {
	var canceled atomic.Bool
	f := &fakeTurn{
		model: func(context.Context, int) (contract.ModelStepResult, error) { return toolCall("query_database"), nil },
		tool: func(ctx context.Context, _ contract.ToolStepInput) (contract.ToolStepResult, error) {
			select { // a long call; the real server cancels its context (service/turns tests that)
			case <-ctx.Done():
			case <-time.After(3 * time.Second):
			}
			return contract.ToolStepResult{}, ctx.Err()
		},
	}
	env := turnEnv(f)
	env.SetOnActivityCanceledListener(func(info *activity.Info) {
		if info.ActivityType.Name == "ToolStep" {
			canceled.Store(true)
		}
	})
	answered := interruptAfter(t, env, time.Second)
	env.ExecuteWorkflow(workflows.Turn, turnIn)
	require.NoError(t, env.GetWorkflowError())
	assert.True(t, canceled.Load(), "the workflow cancelled the tool call")
	assert.Equal(t, models.TurnInterrupted, f.end(t).Status)
	assert.Equal(t, models.TurnInterrupted, answered().Status, "the update answers once the turn ended")
}

func TestInterruptOfAnotherTurnIsRejected(t *testing.T) {
	f := &fakeTurn{model: func(context.Context, int) (contract.ModelStepResult, error) {
		return contract.ModelStepResult{}, nil
	}}
	env := turnEnv(f)
	rejected := false
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateInterrupt, "interrupt-1", &testsuite.TestUpdateCallback{
			OnReject: func(error) { rejected = true }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, "another-turn")
	}, 0)
	env.ExecuteWorkflow(workflows.Turn, turnIn)
	require.NoError(t, env.GetWorkflowError())
	assert.True(t, rejected)
	assert.Equal(t, models.TurnCompleted, f.end(t).Status)
}

func TestTurnThatRunsOutOfCreditsEndsFailed(t *testing.T) {
	f := &fakeTurn{model: func(_ context.Context, step int) (contract.ModelStepResult, error) {
		if step == 2 {
			return contract.ModelStepResult{}, temporal.NewNonRetryableApplicationError("The account ran out of credits.", contract.ErrTurnInsufficientCredits, nil)
		}
		return toolCall("create_task"), nil
	}}
	env := turnEnv(f)
	env.ExecuteWorkflow(workflows.Turn, turnIn)
	require.NoError(t, env.GetWorkflowError())
	end := f.end(t)
	assert.Equal(t, models.TurnFailed, end.Status)
	assert.Equal(t, string(models.CodeInsufficientCredits), end.ErrorCode)
	assert.Equal(t, "The account ran out of credits.", end.ErrorDetail)
}

func TestModelRateLimitIsRetriedByThePolicy(t *testing.T) {
	calls := 0
	f := &fakeTurn{model: func(context.Context, int) (contract.ModelStepResult, error) {
		calls++
		if calls == 1 {
			return contract.ModelStepResult{}, temporal.NewApplicationErrorWithOptions("rate limited", contract.ErrTurnUpstream,
				temporal.ApplicationErrorOptions{NextRetryDelay: 2 * time.Second})
		}
		return contract.ModelStepResult{}, nil
	}}
	env := turnEnv(f)
	env.ExecuteWorkflow(workflows.Turn, turnIn)
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, 2, calls)
	assert.Equal(t, models.TurnCompleted, f.end(t).Status)
}

func TestLongTurnContinuesAsNew(t *testing.T) {
	f := &fakeTurn{model: func(context.Context, int) (contract.ModelStepResult, error) { return toolCall("list_documents"), nil }}
	env := turnEnv(f)
	in := turnIn
	in.MaxHistoryEvents = 40
	env.ExecuteWorkflow(workflows.Turn, in)
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, err, &can)
	var next contract.TurnInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	assert.Equal(t, in.TurnID, next.TurnID)
	assert.Greater(t, next.Step, 1, "the next run resumes after the steps done")
	assert.Less(t, next.Step, 20)
	f.mu.Lock()
	assert.Empty(t, f.finished, "the turn has not ended")
	f.mu.Unlock()

	// The next run does not start the turn again and goes on from there.
	f2 := &fakeTurn{model: func(_ context.Context, step int) (contract.ModelStepResult, error) {
		assert.Greater(t, step, next.Step)
		return contract.ModelStepResult{}, nil
	}}
	env2 := turnEnv(f2)
	env2.ExecuteWorkflow(workflows.Turn, next)
	require.NoError(t, env2.GetWorkflowError())
	assert.Equal(t, models.TurnCompleted, f2.end(t).Status)
}

// turnHistories are recorded runs of the turn workflow: the _v1 ones with
// its bookkeeping as local activities (version turn-local-bookkeeping 1),
// the others from before, with StartTurn and FinishTurn as activities:
// runs started then replay on the old path. Record the current version
// after an intended change: UPDATE_TURN_HISTORIES=1 go test -run TestReplayTurn ./workflows/
// (a change of what a run does needs a new version and new files; the
// files of earlier versions stay).
var turnHistories = []string{"turn_tools_question.json", "turn_interrupted.json", "turn_tools_question_v1.json", "turn_interrupted_v1.json",
	"turn_tools_question_v2.json", "turn_interrupted_v2.json"}

// legacyTurnHistories were recorded before the bookkeeping was local.
var legacyTurnHistories = map[string]bool{"turn_tools_question.json": true, "turn_interrupted.json": true}

// localToolHistories were recorded once quick tools' calls were local
// (changeLocalTools); UPDATE_TURN_HISTORIES records these.
var localToolHistories = map[string]bool{"turn_tools_question_v2.json": true, "turn_interrupted_v2.json": true}

func TestReplayTurnHistories(t *testing.T) {
	if os.Getenv("UPDATE_TURN_HISTORIES") != "" {
		recordTurnHistories(t)
	}
	for _, name := range turnHistories {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(workflows.Turn, turnOptions)
		require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", name)), name)
	}
}

func recordTurnHistories(t *testing.T) {
	f := &fakeTurn{
		model: func(ctx context.Context, step int) (contract.ModelStepResult, error) {
			if activity.GetInfo(ctx).WorkflowExecution.ID == "turn:interrupted" {
				<-ctx.Done()
				return contract.ModelStepResult{}, ctx.Err()
			}
			if step == 1 { // a quick call and one that is not
				return contract.ModelStepResult{Calls: []contract.ToolCallRef{{Index: 0, ID: "call_1", Name: "write_document", Quick: true},
					{Index: 1, ID: "call_2", Name: "send_email"}}}, nil
			}
			return contract.ModelStepResult{Calls: []contract.ToolCallRef{{Index: 0, ID: "call_1", Name: "ask_question", Control: true, Quick: true}}}, nil
		},
		tool: func(_ context.Context, in contract.ToolStepInput) (contract.ToolStepResult, error) {
			if in.Step == 2 {
				return contract.ToolStepResult{Question: "Which city?"}, nil
			}
			return contract.ToolStepResult{}, nil
		},
	}
	env := testenv.NewTemporal(t, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(workflows.Turn, turnOptions)
		f.register(r)
	})
	ctx := context.Background()
	record := func(id, file string, during func()) {
		run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: contract.TaskQueue}, contract.TurnWorkflowName,
			contract.TurnInput{TurnID: id, CompanyID: "co", ConglomerateID: "cong"})
		require.NoError(t, err)
		if during != nil {
			during()
		}
		require.NoError(t, run.Get(ctx, nil))
		iter := env.Client.GetWorkflowHistory(ctx, id, run.GetRunID(), false, 0)
		h := &historypb.History{}
		for iter.HasNext() {
			e, err := iter.Next()
			require.NoError(t, err)
			h.Events = append(h.Events, e)
		}
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join("testdata", file), b, 0o644))
	}
	record("turn:tools", "turn_tools_question_v2.json", nil)
	record("turn:interrupted", "turn_interrupted_v2.json", func() {
		time.Sleep(time.Second)
		h, err := env.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: "turn:interrupted", UpdateName: contract.UpdateInterrupt,
			Args: []any{"turn:interrupted"}, WaitForStage: client.WorkflowUpdateStageCompleted})
		require.NoError(t, err)
		var st contract.TurnState
		require.NoError(t, h.Get(ctx, &st))
		if st.Status != models.TurnInterrupted {
			require.NoError(t, errors.New("not interrupted: "+string(st.Status)))
		}
	})
}

// TestTurnHistoriesCoverBothBookkeepingPaths checks what the replayed
// histories hold: the legacy ones schedule StartTurn and FinishTurn as
// activities, the current ones record them as local activities (markers)
// and schedule only the model and tool calls.
func TestTurnHistoriesCoverBothBookkeepingPaths(t *testing.T) {
	for _, name := range turnHistories {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		var h historypb.History
		require.NoError(t, protojson.Unmarshal(raw, &h), name)
		scheduled := map[string]int{}
		local := map[string]int{}
		for _, e := range h.Events {
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				scheduled[a.GetActivityType().GetName()]++
			}
			if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "LocalActivity" {
				var d struct{ ActivityType string }
				require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(m.GetDetails()["data"], &d), name)
				local[d.ActivityType]++
			}
		}
		if legacyTurnHistories[name] {
			assert.Equal(t, 1, scheduled["StartTurn"], name)
			assert.Equal(t, 1, scheduled["FinishTurn"], name)
			assert.Empty(t, local, name)
			continue
		}
		assert.Equal(t, 1, local["StartTurn"], name)
		assert.Equal(t, 1, local["FinishTurn"], name)
		assert.Zero(t, scheduled["StartTurn"]+scheduled["FinishTurn"], name)
		assert.NotZero(t, scheduled["ModelStep"], name)
		if localToolHistories[name] && strings.Contains(name, "tools") {
			// write_document and ask_question local, send_email not.
			assert.Equal(t, 2, local["ToolStep"], name)
			assert.Equal(t, 1, scheduled["ToolStep"], name)
		} else {
			assert.Zero(t, local["ToolStep"], name)
		}
	}
}

// TestQuickToolCallsRunAsLocalActivities: a quick tool's call runs inside
// the workflow task (a local activity), any other as an activity.
func TestQuickToolCallsRunAsLocalActivities(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	f := &fakeTurn{
		model: func(_ context.Context, step int) (contract.ModelStepResult, error) {
			switch step {
			case 1:
				return contract.ModelStepResult{Calls: []contract.ToolCallRef{{Index: 0, ID: "call_1", Name: "write_document", Quick: true}}}, nil
			case 2:
				return toolCall("send_email"), nil
			}
			return contract.ModelStepResult{}, nil
		},
		tool: func(_ context.Context, in contract.ToolStepInput) (contract.ToolStepResult, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, fmt.Sprintf("%d/%d", in.Step, in.Index))
			return contract.ToolStepResult{}, nil
		},
	}
	env := turnEnv(f)
	started := watchActivities(env)
	env.ExecuteWorkflow(workflows.Turn, turnIn)
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, models.TurnCompleted, f.end(t).Status)
	assert.Equal(t, []string{"StartTurn", "ToolStep", "FinishTurn"}, started.local)
	assert.Equal(t, []string{"ModelStep", "ModelStep", "ToolStep", "ModelStep"}, started.remote)
	assert.Equal(t, []string{"1/0", "2/0"}, calls, "each call made once")
}

// TestInterruptDuringAQuickToolCall: an interrupt that arrives while a
// quick call runs ends the turn interrupted once the call returns, before
// the next model call.
func TestInterruptDuringAQuickToolCall(t *testing.T) {
	var modelCalls atomic.Int32
	f := &fakeTurn{
		model: func(context.Context, int) (contract.ModelStepResult, error) {
			modelCalls.Add(1)
			return contract.ModelStepResult{Calls: []contract.ToolCallRef{{Index: 0, ID: "call_1", Name: "write_document", Quick: true}}}, nil
		},
		tool: func(ctx context.Context, _ contract.ToolStepInput) (contract.ToolStepResult, error) {
			select { // slower than a quick call would be, so the interrupt meets it
			case <-ctx.Done():
				return contract.ToolStepResult{}, ctx.Err()
			case <-time.After(2 * time.Second):
			}
			return contract.ToolStepResult{}, nil
		},
	}
	env := turnEnv(f)
	answered := interruptAfter(t, env, time.Second)
	env.ExecuteWorkflow(workflows.Turn, turnIn)
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, models.TurnInterrupted, f.end(t).Status)
	assert.Equal(t, models.TurnInterrupted, answered().Status, "the update answers once the turn ended")
	assert.Equal(t, int32(1), modelCalls.Load(), "no model call after the interrupt")
}

// interruptAfter sends the turn's interrupt update after d of workflow
// time; the returned function reads its answer once the workflow ran.
func interruptAfter(t *testing.T, env *testsuite.TestWorkflowEnvironment, d time.Duration) func() contract.TurnState {
	var answered contract.TurnState
	env.RegisterDelayedCallback(func() {
		env.UpdateWorkflow(contract.UpdateInterrupt, "interrupt-1", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { t.Errorf("interrupt rejected: %v", err) },
			OnAccept: func() {},
			OnComplete: func(v any, err error) {
				require.NoError(t, err)
				answered = v.(contract.TurnState)
			},
		}, turnIn.TurnID)
	}, d)
	return func() contract.TurnState { return answered }
}

// TestBookkeepingRunsAsLocalActivities: a new run starts and ends the turn
// with local activities; the model and tool calls stay activities (an
// interrupt cancels them at their next heartbeat).
func TestBookkeepingRunsAsLocalActivities(t *testing.T) {
	f := &fakeTurn{model: func(_ context.Context, step int) (contract.ModelStepResult, error) {
		if step < 2 {
			return toolCall("write_document"), nil
		}
		return contract.ModelStepResult{}, nil
	}}
	env := turnEnv(f)
	started := watchActivities(env)
	env.ExecuteWorkflow(workflows.Turn, turnIn)
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, models.TurnCompleted, f.end(t).Status)
	assert.Equal(t, []string{"StartTurn", "FinishTurn"}, started.local)
	assert.Equal(t, []string{"ModelStep", "ToolStep", "ModelStep"}, started.remote)
}

// startedActivities are the names of the activities a test environment
// started, in order: local ones and the others.
type startedActivities struct {
	mu            sync.Mutex
	local, remote []string
}

func watchActivities(env *testsuite.TestWorkflowEnvironment) *startedActivities {
	s := &startedActivities{}
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.local = append(s.local, info.ActivityType.Name)
	})
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.remote = append(s.remote, info.ActivityType.Name)
	})
	return s
}
