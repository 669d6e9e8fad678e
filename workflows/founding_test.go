package workflows_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"holdco/models"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

var foundingOptions = workflow.RegisterOptions{Name: contract.FoundingWorkflowName}

// fakeInterview plays the interview's activities in memory: each segment
// moves naming → shaping → reviewing; a founder answer claims the segment.
type fakeInterview struct {
	mu       sync.Mutex
	state    models.FoundingState
	answers  int
	segments int
	founded  int
	rejected string
}

func (f *fakeInterview) register(r worker.Registry) {
	r.RegisterActivityWithOptions(func(_ context.Context, ref contract.InterviewRef) (contract.FoundingStatus, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.segments++
		f.state = []models.FoundingState{models.FoundingNaming, models.FoundingShaping, models.FoundingReviewing}[min(f.segments-1, 2)]
		return contract.FoundingStatus{InterviewID: ref.InterviewID, State: f.state, Answers: f.answers}, nil
	}, activity.RegisterOptions{Name: "InterviewSegment"})
	r.RegisterActivityWithOptions(func(_ context.Context, in contract.RecordAnswerInput) (contract.FoundingStatus, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if in.Seq > f.answers {
			f.answers = in.Seq
			switch in.Answer.Action {
			case contract.FoundingActionAccept:
				f.state = models.FoundingFounding
			case contract.FoundingActionWithdraw:
				f.state = models.FoundingRejected
			}
		}
		return contract.FoundingStatus{InterviewID: in.InterviewID, State: f.state, Busy: f.state.Open(), Answers: f.answers}, nil
	}, activity.RegisterOptions{Name: "RecordAnswer"})
	r.RegisterActivityWithOptions(func(_ context.Context, ref contract.InterviewRef) (contract.FoundingStatus, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.founded++
		f.state = models.FoundingFounded
		return contract.FoundingStatus{InterviewID: ref.InterviewID, State: f.state, Answers: f.answers}, nil
	}, activity.RegisterOptions{Name: "Found"})
	r.RegisterActivityWithOptions(func(_ context.Context, in contract.RejectInput) (contract.FoundingStatus, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.rejected, f.state = in.Reason, models.FoundingRejected
		return contract.FoundingStatus{InterviewID: in.InterviewID, State: f.state, Answers: f.answers}, nil
	}, activity.RegisterOptions{Name: "RejectInterview"})
}

func startInterview(t *testing.T, env *testenv.Temporal, user string, idle time.Duration) client.WorkflowRun {
	run, err := env.Client.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: contract.FoundingWorkflowID(user), TaskQueue: contract.TaskQueue},
		contract.FoundingWorkflowName, contract.FoundingInput{InterviewID: "iv-" + user, UserID: user, ConglomerateID: "cong", Kind: models.FoundingNew, IdleTimeout: idle})
	require.NoError(t, err)
	return run
}

func sendAnswer(ctx context.Context, env *testenv.Temporal, user string, a contract.FoundingAnswer) (contract.FoundingStatus, error) {
	h, err := env.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: contract.FoundingWorkflowID(user),
		UpdateName: contract.UpdateFoundingAnswer, Args: []any{a}, WaitForStage: client.WorkflowUpdateStageCompleted})
	var st contract.FoundingStatus
	if err == nil {
		err = h.Get(ctx, &st)
	}
	return st, err
}

func queryInterview(t *testing.T, env *testenv.Temporal, user string) contract.FoundingStatus {
	v, err := env.Client.QueryWorkflow(context.Background(), contract.FoundingWorkflowID(user), "", contract.QueryFoundingState)
	require.NoError(t, err)
	var st contract.FoundingStatus
	require.NoError(t, v.Get(&st))
	return st
}

func rejectedAs(t *testing.T, err error, typ string) {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	assert.Equal(t, typ, appErr.Type())
}

// runInterview runs an interview to founded: a bad answer and an early
// accept are refused by the validator, three answers reach reviewing, the
// accept founds.
func runInterview(t *testing.T, env *testenv.Temporal, f *fakeInterview, user string) client.WorkflowRun {
	ctx := context.Background()
	run := startInterview(t, env, user, 0)
	waitFor := func(state models.FoundingState) {
		require.Eventually(t, func() bool {
			st := queryInterview(t, env, user)
			return st.State == state && !st.Busy
		}, 30*time.Second, 20*time.Millisecond, "state %s", state)
	}
	waitFor(models.FoundingNaming)
	_, err := sendAnswer(ctx, env, user, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "   "})
	rejectedAs(t, err, contract.FoundingErrInvalid)
	_, err = sendAnswer(ctx, env, user, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "Trail Kin", Handle: "trail-kin"})
	rejectedAs(t, err, contract.FoundingErrInvalid)
	_, err = sendAnswer(ctx, env, user, contract.FoundingAnswer{Action: contract.FoundingActionAccept})
	rejectedAs(t, err, contract.FoundingErrConflict)
	st, err := sendAnswer(ctx, env, user, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "Trail Kin"})
	require.NoError(t, err)
	assert.Equal(t, 1, st.Answers)
	waitFor(models.FoundingShaping)
	_, err = sendAnswer(ctx, env, user, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "Families who hike"})
	require.NoError(t, err)
	waitFor(models.FoundingReviewing)
	_, err = sendAnswer(ctx, env, user, contract.FoundingAnswer{Action: contract.FoundingActionAccept})
	require.NoError(t, err)
	var end contract.FoundingStatus
	require.NoError(t, run.Get(ctx, &end))
	assert.Equal(t, models.FoundingFounded, end.State)
	return run
}

func TestFoundingInterviewWorkflow(t *testing.T) {
	f := &fakeInterview{}
	env := testenv.NewTemporal(t, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(workflows.Founding, foundingOptions)
		f.register(r)
	})
	run := runInterview(t, env, f, "ada")
	assert.Equal(t, 1, f.founded)
	assert.Equal(t, 3, f.segments, "the idea and two answers")
	// The refused answers left no trace in the history.
	ctx := context.Background()
	it := env.Client.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	accepted := 0
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED {
			accepted++
		}
		assert.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED, e.GetEventType())
	}
	assert.Equal(t, 3, accepted)

	// A withdrawal ends the interview; an idle one is rejected.
	g := &fakeInterview{}
	env2 := testenv.NewTemporal(t, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(workflows.Founding, foundingOptions)
		g.register(r)
	})
	w := startInterview(t, env2, "bob", 0)
	require.Eventually(t, func() bool { return !queryInterview(t, env2, "bob").Busy }, 30*time.Second, 20*time.Millisecond)
	_, err := sendAnswer(ctx, env2, "bob", contract.FoundingAnswer{Action: contract.FoundingActionWithdraw})
	require.NoError(t, err)
	var end contract.FoundingStatus
	require.NoError(t, w.Get(ctx, &end))
	assert.Equal(t, models.FoundingRejected, end.State)
	_, err = sendAnswer(ctx, env2, "bob", contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "late"})
	assert.Error(t, err, "an ended interview takes no answer")

	idle := startInterview(t, env2, "cy", time.Second)
	require.NoError(t, idle.Get(ctx, &end))
	assert.Equal(t, models.FoundingRejected, end.State)
	assert.Contains(t, g.rejected, "no answer for a long time")
}

// foundingHistories are recorded interviews. Regenerate after an intended
// change: UPDATE_FOUNDING_HISTORIES=1 go test -run TestReplayFounding ./workflows/
var foundingHistories = []string{"founding_founded.json"}

func TestReplayFoundingHistories(t *testing.T) {
	if os.Getenv("UPDATE_FOUNDING_HISTORIES") != "" {
		f := &fakeInterview{}
		env := testenv.NewTemporal(t, func(r worker.Registry) {
			r.RegisterWorkflowWithOptions(workflows.Founding, foundingOptions)
			f.register(r)
		})
		run := runInterview(t, env, f, "recorded")
		ctx := context.Background()
		it := env.Client.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, 0)
		h := &historypb.History{}
		for it.HasNext() {
			e, err := it.Next()
			require.NoError(t, err)
			h.Events = append(h.Events, e)
		}
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "founding_founded.json"), b, 0o644))
	}
	for _, name := range foundingHistories {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(workflows.Founding, foundingOptions)
		require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", name)), name)
	}
	// A changed interview (a timer before the first question) does not replay.
	changed := func(ctx workflow.Context, in contract.FoundingInput) (contract.FoundingStatus, error) {
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return contract.FoundingStatus{}, err
		}
		return workflows.Founding(ctx, in)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, foundingOptions)
	assert.Error(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", "founding_founded.json")))
}
