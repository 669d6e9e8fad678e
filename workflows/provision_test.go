package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"holdco/activities"
	"holdco/models"
	"holdco/workflows"
	"holdco/workflows/contract"
)

var a *activities.Provisioning

func newEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	env := newTestEnv()
	env.RegisterWorkflowWithOptions(workflows.Provision, workflowOptions)
	env.RegisterActivity(a)
	env.OnActivity(a.EnsureOIDCClient, mock.Anything, mock.Anything).Return("co_test", nil)
	return env
}

var input = contract.ProvisionInput{CompanyID: "c-1", ConglomerateID: "g-1", SeedRepo: true}

func ok(kind models.ResourceKind) contract.ResourceResult {
	return contract.ResourceResult{Kind: kind, Ref: "ref-" + string(kind)}
}

func TestProvisionAllResources(t *testing.T) {
	env := newEnv(t)
	var mu sync.Mutex
	seen := map[models.ResourceKind]bool{}
	env.OnActivity(a.ProvisionResource, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResourceInput) (contract.ResourceResult, error) {
			mu.Lock()
			seen[in.Kind] = true
			mu.Unlock()
			assert.True(t, in.SeedRepo)
			return ok(in.Kind), nil
		})
	env.ExecuteWorkflow(contract.ProvisionWorkflowName, input)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res contract.ProvisionResult
	require.NoError(t, env.GetWorkflowResult(&res))
	assert.Len(t, res.Refs, 3)
	assert.Equal(t, "ref-hosting", res.Refs[models.ResourceHosting])
	assert.Len(t, seen, 3)
}

func TestProvisionRetriesTransientFailures(t *testing.T) {
	env := newEnv(t)
	var mu sync.Mutex
	calls := map[models.ResourceKind]int{}
	env.OnActivity(a.ProvisionResource, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResourceInput) (contract.ResourceResult, error) {
			mu.Lock()
			defer mu.Unlock()
			calls[in.Kind]++
			if in.Kind == models.ResourceDatabase && calls[in.Kind] < 3 {
				return contract.ResourceResult{}, errors.New("connection refused")
			}
			return ok(in.Kind), nil
		})
	env.ExecuteWorkflow(contract.ProvisionWorkflowName, input)
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, 3, calls[models.ResourceDatabase], "retried by the activity retry policy")
	assert.Equal(t, 1, calls[models.ResourceRepository])
}

func TestProvisionWaitsForHealThenRetriesOnlyFailed(t *testing.T) {
	env := newEnv(t)
	var mu sync.Mutex
	calls := map[models.ResourceKind]int{}
	broken := true
	env.OnActivity(a.ProvisionResource, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResourceInput) (contract.ResourceResult, error) {
			mu.Lock()
			defer mu.Unlock()
			calls[in.Kind]++
			if in.Kind == models.ResourceHosting && broken {
				return contract.ResourceResult{}, errors.New("site does not answer")
			}
			return ok(in.Kind), nil
		})
	env.RegisterDelayedCallback(func() {
		var st map[models.ResourceKind]models.ResourceStatus
		v, err := env.QueryWorkflow(contract.QueryResources)
		require.NoError(t, err)
		require.NoError(t, v.Get(&st))
		assert.Equal(t, models.ResourceFailed, st[models.ResourceHosting])
		assert.Equal(t, models.ResourceReady, st[models.ResourceRepository])
		mu.Lock()
		broken = false
		mu.Unlock()
		env.SignalWorkflow(contract.SignalHeal, nil)
	}, time.Hour)
	env.ExecuteWorkflow(contract.ProvisionWorkflowName, input)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, 5+1, calls[models.ResourceHosting], "5 attempts, then one more after heal")
	assert.Equal(t, 1, calls[models.ResourceRepository], "ready resources are not redone")
}

func TestProvisionStopsForAGoneCompany(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(a.ProvisionResource, mock.Anything, mock.Anything).Return(contract.ResourceResult{},
		temporal.NewNonRetryableApplicationError("company is missing or archived", contract.ErrCompanyGone, nil))
	env.ExecuteWorkflow(contract.ProvisionWorkflowName, input)
	require.Error(t, env.GetWorkflowError())
}

func TestProvisionGivesUpWithoutHeal(t *testing.T) {
	env := newEnv(t)
	env.OnActivity(a.ProvisionResource, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in contract.ResourceInput) (contract.ResourceResult, error) {
			if in.Kind == models.ResourceRepository {
				return contract.ResourceResult{}, errors.New("disk full")
			}
			return ok(in.Kind), nil
		})
	env.ExecuteWorkflow(contract.ProvisionWorkflowName, input)
	require.True(t, env.IsWorkflowCompleted())
	require.ErrorContains(t, env.GetWorkflowError(), "still failed")
}
