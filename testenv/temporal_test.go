package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/testenv"
	"holdco/workflows/contract"
)

func echo(ctx workflow.Context, s string) (string, error) {
	return "echo " + s, workflow.UpsertTypedSearchAttributes(ctx, contract.ProvisioningStateKey.ValueSet("ready"))
}

// TestTemporalHarness runs a workflow on the harness's worker with
// holdco's search attributes, as later workflow tests will.
func TestTemporalHarness(t *testing.T) {
	env := testenv.NewTemporal(t, func(r worker.Registry) { r.RegisterWorkflow(echo) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: "echo:1", TaskQueue: env.TaskQueue,
		TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDKey.ValueSet("c-1")),
	}, echo, "hi")
	require.NoError(t, err)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	assert.Equal(t, "echo hi", out)
	require.Eventually(t, func() bool {
		resp, err := env.Client.ListWorkflow(ctx, listQuery(`CompanyId = "c-1" AND ProvisioningState = "ready"`))
		return err == nil && len(resp.GetExecutions()) == 1
	}, testenv.EventualBound, 100*time.Millisecond)
}

func listQuery(q string) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Query: q}
}

// TestNamespacesIsolateTests: two environments of the binary's one server
// run a workflow with the same id each, and each lists only its own.
func TestNamespacesIsolateTests(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.EventualBound)
	defer cancel()
	var envs []*testenv.Temporal
	for _, company := range []string{"c-a", "c-b"} {
		env := testenv.NewTemporal(t, func(r worker.Registry) { r.RegisterWorkflow(echo) })
		envs = append(envs, env)
		run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: "echo:same-id", TaskQueue: env.TaskQueue,
			TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDKey.ValueSet(company)),
		}, echo, company)
		require.NoError(t, err, "the same workflow id in another namespace")
		var out string
		require.NoError(t, run.Get(ctx, &out))
		assert.Equal(t, "echo "+company, out, "the namespace's own worker ran it")
	}
	assert.Equal(t, envs[0].Server.GetFrontendHostPort(), envs[1].Server.GetFrontendHostPort(), "one server")
	assert.NotEqual(t, envs[0].Namespace, envs[1].Namespace)
	for i, company := range []string{"c-a", "c-b"} {
		require.Eventually(t, func() bool {
			resp, err := envs[i].Client.ListWorkflow(ctx, listQuery(`CompanyId = "`+company+`"`))
			return err == nil && len(resp.GetExecutions()) == 1
		}, testenv.EventualBound, 100*time.Millisecond)
		resp, err := envs[i].Client.ListWorkflow(ctx, listQuery(`CompanyId = "`+[]string{"c-b", "c-a"}[i]+`"`))
		require.NoError(t, err)
		assert.Empty(t, resp.GetExecutions(), "the other namespace's workflow is not listed")
	}
}
