package workflows_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/models"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

var diagnoseOptions = workflow.RegisterOptions{Name: contract.DiagnoseWorkflowName}

// fakeChecks reports the hosting of company "co-3" down, everything else
// healthy.
func fakeChecks(_ context.Context, in contract.CompanyCheck) (contract.CompanyCheckResult, error) {
	res := contract.CompanyCheckResult{CompanyID: in.CompanyID, Problems: map[models.ResourceKind]string{}}
	if in.CompanyID == "co-3" {
		res.Problems[models.ResourceHosting] = "site does not answer"
	}
	return res, nil
}

func diagnoseInput(n int) contract.DiagnoseInput {
	var in contract.DiagnoseInput
	for i := range n {
		in.Companies = append(in.Companies, contract.CompanyCheck{CompanyID: fmt.Sprintf("co-%d", i), Handle: fmt.Sprintf("shop%d", i),
			Kinds: []models.ResourceKind{models.ResourceRepository, models.ResourceHosting}})
	}
	return in
}

// More companies than run at once: every one is checked, results keep the
// input's order, and no more than eight checks run together.
func TestDiagnoseChecksEveryCompanyInOrder(t *testing.T) {
	env := newTestEnv()
	env.RegisterWorkflowWithOptions(workflows.Diagnose, diagnoseOptions)
	var p *activities.Provisioning
	env.RegisterActivity(p)
	var running, most atomic.Int32
	env.OnActivity(p.CheckCompanyResources, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in contract.CompanyCheck) (contract.CompanyCheckResult, error) {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(10 * time.Millisecond)
			return fakeChecks(ctx, in)
		})
	env.ExecuteWorkflow(contract.DiagnoseWorkflowName, diagnoseInput(20))
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res contract.DiagnoseResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Len(t, res.Companies, 20)
	for i, c := range res.Companies {
		assert.Equal(t, fmt.Sprintf("co-%d", i), c.CompanyID)
	}
	assert.Equal(t, map[models.ResourceKind]string{models.ResourceHosting: "site does not answer"}, res.Companies[3].Problems)
	assert.Empty(t, res.Companies[4].Problems)
	assert.LessOrEqual(t, most.Load(), int32(8))
}

func TestDiagnoseOfNothingIsEmpty(t *testing.T) {
	env := newTestEnv()
	env.RegisterWorkflowWithOptions(workflows.Diagnose, diagnoseOptions)
	env.ExecuteWorkflow(contract.DiagnoseWorkflowName, contract.DiagnoseInput{})
	require.NoError(t, env.GetWorkflowError())
	var res contract.DiagnoseResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Empty(t, res.Companies)
}

const diagnoseHistory = "diagnose.json"

// TestReplayDiagnoseHistory replays a recorded run of ten companies (more
// than run at once; regenerate with UPDATE_HISTORIES=1 after an intended
// change).
func TestReplayDiagnoseHistory(t *testing.T) {
	if os.Getenv("UPDATE_HISTORIES") != "" {
		env := testenv.NewTemporal(t, func(r worker.Registry) {
			r.RegisterWorkflowWithOptions(workflows.Diagnose, diagnoseOptions)
			r.RegisterActivityWithOptions(fakeChecks, activity.RegisterOptions{Name: "CheckCompanyResources"})
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: contract.DiagnoseWorkflowID("replay"), TaskQueue: env.TaskQueue},
			contract.DiagnoseWorkflowName, diagnoseInput(10))
		require.NoError(t, err)
		require.NoError(t, run.Get(ctx, nil))
		save(t, ctx, env.Client, run, diagnoseHistory)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.Diagnose, diagnoseOptions)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", diagnoseHistory)))

	// Checking all companies at once is a different command sequence.
	changed := func(ctx workflow.Context, in contract.DiagnoseInput) (contract.DiagnoseResult, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
		var fs []workflow.Future
		for _, c := range in.Companies {
			fs = append(fs, workflow.ExecuteActivity(ctx, "CheckCompanyResources", c))
		}
		var res contract.DiagnoseResult
		for _, f := range fs {
			var c contract.CompanyCheckResult
			if err := f.Get(ctx, &c); err != nil {
				return res, err
			}
			res.Companies = append(res.Companies, c)
		}
		return res, nil
	}
	r = worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, diagnoseOptions)
	require.Error(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", diagnoseHistory)))
}
