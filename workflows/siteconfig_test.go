package workflows_test

import (
	"context"
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
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

var sc *activities.SiteConfig

var siteConfigOptions = workflow.RegisterOptions{Name: contract.SiteConfigWorkflowName}

func newSiteConfigEnv() *testsuite.TestWorkflowEnvironment {
	env := newTestEnv()
	env.RegisterWorkflowWithOptions(workflows.SiteConfig, siteConfigOptions)
	env.RegisterActivity(sc)
	return env
}

func TestSiteConfigWritesOnce(t *testing.T) {
	env := newSiteConfigEnv()
	var writes atomic.Int32
	env.OnActivity(sc.WriteSiteConfig, mock.Anything, contract.SiteConfigInput{CompanyID: "c-1"}).Return(
		func(context.Context, contract.SiteConfigInput) error { writes.Add(1); return nil })
	env.ExecuteWorkflow(contract.SiteConfigWorkflowName, contract.SiteConfigInput{CompanyID: "c-1"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, int32(1), writes.Load())
}

// A rotation signalled while the previous key is being written gets a
// write of its own, so the site never keeps a key read before it.
func TestSiteConfigWritesAgainAfterAChangeDuringAWrite(t *testing.T) {
	env := newSiteConfigEnv()
	var writes atomic.Int32
	env.OnActivity(sc.WriteSiteConfig, mock.Anything, mock.Anything).Return(
		func(context.Context, contract.SiteConfigInput) error { writes.Add(1); return nil })
	env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) {
		if writes.Load() == 0 {
			env.SignalWorkflow(contract.SignalSiteConfigChanged, nil)
		}
	})
	env.ExecuteWorkflow(contract.SiteConfigWorkflowName, contract.SiteConfigInput{CompanyID: "c-1"})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, int32(2), writes.Load())
}

const siteConfigHistory = "site_config.json"

// TestReplaySiteConfigHistory replays a recorded run (regenerate with
// UPDATE_HISTORIES=1 after an intended change).
func TestReplaySiteConfigHistory(t *testing.T) {
	if os.Getenv("UPDATE_HISTORIES") != "" {
		env := testenv.NewTemporal(t, func(r worker.Registry) {
			r.RegisterWorkflowWithOptions(workflows.SiteConfig, siteConfigOptions)
			r.RegisterActivityWithOptions(func(context.Context, contract.SiteConfigInput) error { return nil },
				activity.RegisterOptions{Name: "WriteSiteConfig"})
		})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		run, err := env.Client.SignalWithStartWorkflow(ctx, contract.SiteConfigWorkflowID("c-1"), contract.SignalSiteConfigChanged, nil,
			client.StartWorkflowOptions{TaskQueue: env.TaskQueue}, contract.SiteConfigWorkflowName, contract.SiteConfigInput{CompanyID: "c-1"})
		require.NoError(t, err)
		require.NoError(t, run.Get(ctx, nil))
		save(t, ctx, env.Client, run, siteConfigHistory)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.SiteConfig, siteConfigOptions)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", siteConfigHistory)))

	// And a different command sequence does not replay.
	changed := func(ctx workflow.Context, in contract.SiteConfigInput) error {
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return err
		}
		return workflows.SiteConfig(ctx, in)
	}
	r = worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, siteConfigOptions)
	require.Error(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", siteConfigHistory)))
}
