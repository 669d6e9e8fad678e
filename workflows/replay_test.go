package workflows_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// Recorded histories of real runs. Regenerate them after an intended
// change of the workflow with: UPDATE_HISTORIES=1 go test -run TestReplay ./workflows/
var histories = []string{"provision_ready.json", "provision_heal.json"}

// TestReplayRecordedHistories replays recorded runs against the current
// workflow code: a non-deterministic change fails here, before it can
// break running workflows.
func TestReplayRecordedHistories(t *testing.T) {
	if os.Getenv("UPDATE_HISTORIES") != "" {
		recordHistories(t)
	}
	for _, name := range histories {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(workflows.Provision, workflowOptions)
		require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", name)), name)
	}
}

func recordHistories(t *testing.T) {
	var mu sync.Mutex
	hostingBroken := true
	fake := func(_ context.Context, in contract.ResourceInput) (contract.ResourceResult, error) {
		mu.Lock()
		defer mu.Unlock()
		if in.Kind == models.ResourceHosting && hostingBroken && in.CompanyID == "heal" {
			return contract.ResourceResult{}, temporal.NewNonRetryableApplicationError("site does not answer", "SiteDown", errors.New("503"))
		}
		return contract.ResourceResult{Kind: in.Kind, Ref: "ref-" + string(in.Kind)}, nil
	}
	env := testenv.NewTemporal(t, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(workflows.Provision, workflowOptions)
		r.RegisterActivityWithOptions(fake, activity.RegisterOptions{Name: "ProvisionResource"})
		r.RegisterActivityWithOptions(func(context.Context, string) (string, error) { return "co_test", nil },
			activity.RegisterOptions{Name: "EnsureOIDCClient"})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := func(companyID string) client.WorkflowRun {
		run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: contract.ProvisionWorkflowID(companyID), TaskQueue: env.TaskQueue},
			contract.ProvisionWorkflowName, contract.ProvisionInput{CompanyID: companyID, SeedRepo: true})
		require.NoError(t, err)
		return run
	}
	ready := start("ready")
	require.NoError(t, ready.Get(ctx, nil))
	save(t, ctx, env.Client, ready, "provision_ready.json")

	heal := start("heal")
	require.Eventually(t, func() bool {
		v, err := env.Client.QueryWorkflow(ctx, heal.GetID(), heal.GetRunID(), contract.QueryResources)
		var st map[models.ResourceKind]models.ResourceStatus
		return err == nil && v.Get(&st) == nil && st[models.ResourceHosting] == models.ResourceFailed
	}, 30*time.Second, 100*time.Millisecond)
	mu.Lock()
	hostingBroken = false
	mu.Unlock()
	require.NoError(t, env.Client.SignalWorkflow(ctx, heal.GetID(), heal.GetRunID(), contract.SignalHeal, nil))
	require.NoError(t, heal.Get(ctx, nil))
	save(t, ctx, env.Client, heal, "provision_heal.json")
}

func save(t *testing.T, ctx context.Context, c client.Client, run client.WorkflowRun, name string) {
	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, 0)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		events = append(events, e)
	}
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(&historypb.History{Events: events})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("testdata", name), b, 0o644))
}

// TestReplayCatchesNonDeterminism shows the replay test can fail: a
// workflow that issues its commands differently does not replay.
func TestReplayCatchesNonDeterminism(t *testing.T) {
	changed := func(ctx workflow.Context, in contract.ProvisionInput) (contract.ProvisionResult, error) {
		if err := workflow.Sleep(ctx, time.Second); err != nil { // a timer first: a new command
			return contract.ProvisionResult{}, err
		}
		return workflows.Provision(ctx, in)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(changed, workflowOptions)
	require.Error(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", "provision_ready.json")))
}
