package workflows_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

var (
	scheduledOptions = workflow.RegisterOptions{Name: contract.ScheduledRunWorkflowName}
	autoTopUpOptions = workflow.RegisterOptions{Name: contract.AutoTopUpWorkflowName}
)

// Recorded runs of the scheduled run and the auto top-up. Regenerate
// after an intended change: UPDATE_SCHEDULED_HISTORIES=1 go test -run 'TestReplay(Scheduled|AutoTopUp)' ./workflows/
const (
	scheduledHistory = "scheduled_run.json"
	autoTopUpHistory = "auto_top_up_charged.json"
)

func TestReplayScheduledRunHistory(t *testing.T) {
	if os.Getenv("UPDATE_SCHEDULED_HISTORIES") != "" {
		recordScheduledHistories(t)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ScheduledRun, scheduledOptions)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", scheduledHistory)))

	// A run that no longer calls its activity does not replay.
	changed := func(ctx workflow.Context, in contract.ScheduledRunInput) (contract.ScheduledRunResult, error) {
		return contract.ScheduledRunResult{Skipped: "changed"}, workflow.Sleep(ctx, time.Second)
	}
	r = worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, scheduledOptions)
	assert.Error(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", scheduledHistory)))
}

func TestReplayAutoTopUpHistory(t *testing.T) {
	if os.Getenv("UPDATE_SCHEDULED_HISTORIES") != "" {
		recordScheduledHistories(t)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.AutoTopUp, autoTopUpOptions)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", autoTopUpHistory)))

	// A run that looks without its cooldown does not replay.
	changed := func(ctx workflow.Context, in contract.AutoTopUpInput) (int, error) {
		in.Cooldown = -1
		var out contract.AutoTopUpOutcome
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		for attempt := 1; attempt <= 2; attempt++ {
			if err := workflow.ExecuteActivity(ctx, "ChargeAutoTopUp", contract.AutoTopUpAttempt{ConglomerateID: in.ConglomerateID, Attempt: attempt}).Get(ctx, &out); err != nil {
				return 0, err
			}
		}
		return 1, nil
	}
	r = worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, autoTopUpOptions)
	assert.Error(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", autoTopUpHistory)))
}

var recordedScheduled bool

// recordScheduledHistories records a scheduled run that started a turn
// and an auto top-up that charged, absorbed a check signal in its
// cooldown, looked once more and ended.
func recordScheduledHistories(t *testing.T) {
	if recordedScheduled {
		return
	}
	recordedScheduled = true
	env := testenv.NewTemporal(t, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(workflows.ScheduledRun, scheduledOptions)
		r.RegisterWorkflowWithOptions(workflows.AutoTopUp, autoTopUpOptions)
		r.RegisterActivityWithOptions(func(_ context.Context, in contract.ScheduledRunInput) (contract.ScheduledRunResult, error) {
			return contract.ScheduledRunResult{TurnID: "turn-of-" + in.CompanyID}, nil
		}, activity.RegisterOptions{Name: "StartScheduledRun"})
		r.RegisterActivityWithOptions(func(_ context.Context, in contract.AutoTopUpAttempt) (contract.AutoTopUpOutcome, error) {
			if in.Attempt == 1 {
				return contract.AutoTopUpOutcome{Charged: true, Credits: 100}, nil
			}
			return contract.AutoTopUpOutcome{}, nil
		}, activity.RegisterOptions{Name: "ChargeAutoTopUp"})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "scheduled:co", TaskQueue: env.TaskQueue},
		contract.ScheduledRunWorkflowName, contract.ScheduledRunInput{CompanyID: "co"})
	require.NoError(t, err)
	require.NoError(t, run.Get(ctx, nil))
	save(t, ctx, env.Client, run, scheduledHistory)

	run, err = env.Client.SignalWithStartWorkflow(ctx, contract.AutoTopUpWorkflowID("cong"), contract.SignalAutoTopUpCheck, nil,
		client.StartWorkflowOptions{TaskQueue: env.TaskQueue}, contract.AutoTopUpWorkflowName, contract.AutoTopUpInput{ConglomerateID: "cong", Cooldown: 3 * time.Second})
	require.NoError(t, err)
	time.Sleep(time.Second) // into the cooldown: this check is absorbed by the look after it
	require.NoError(t, env.Client.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), contract.SignalAutoTopUpCheck, nil))
	var charges int
	require.NoError(t, run.Get(ctx, &charges))
	require.Equal(t, 1, charges)
	save(t, ctx, env.Client, run, autoTopUpHistory)
}
