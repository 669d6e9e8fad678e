package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/models"
	"holdco/workflows/contract"
)

// healWait is how long a run with failed resources waits for an operator's
// heal before it ends (the rows keep saying failed; heal starts a new run).
const healWait = 7 * 24 * time.Hour

var provisionActivity = workflow.ActivityOptions{
	StartToCloseTimeout: 5 * time.Minute,
	// A worker that dies mid-activity is noticed within this and the
	// activity is retried elsewhere.
	HeartbeatTimeout: 15 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:        time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        30 * time.Second,
		MaximumAttempts:        5,
		NonRetryableErrorTypes: []string{contract.ErrCompanyGone},
	},
}

// Provision makes a company's repository, database and hosting project
// exist, in parallel. Resources that still fail after the activity's
// retries are reported failed and wait for a heal signal.
func Provision(ctx workflow.Context, in contract.ProvisionInput) (contract.ProvisionResult, error) {
	status := map[models.ResourceKind]models.ResourceStatus{}
	result := contract.ProvisionResult{Refs: map[models.ResourceKind]string{}}
	if err := workflow.SetQueryHandler(ctx, contract.QueryResources, func() (map[models.ResourceKind]models.ResourceStatus, error) {
		return status, nil
	}); err != nil {
		return result, err
	}
	heal := workflow.GetSignalChannel(ctx, contract.SignalHeal)
	ctx = workflow.WithActivityOptions(ctx, provisionActivity)
	var a *activities.Provisioning

	// The client for the company's own app sign-in; kept when it exists.
	if err := workflow.ExecuteActivity(ctx, a.EnsureOIDCClient, in.CompanyID).Get(ctx, nil); err != nil {
		setState(ctx, contract.ProvisioningStateFailed)
		return result, err
	}

	pending := models.ResourceKinds
	for {
		setState(ctx, contract.ProvisioningStateProvisioning)
		futures := make([]workflow.Future, len(pending))
		for i, kind := range pending {
			status[kind] = models.ResourceProvisioning
			futures[i] = workflow.ExecuteActivity(ctx, a.ProvisionResource, contract.ResourceInput{CompanyID: in.CompanyID, Kind: kind, SeedRepo: in.SeedRepo})
		}
		var failed []models.ResourceKind
		for i, kind := range pending {
			var res contract.ResourceResult
			err := futures[i].Get(ctx, &res)
			var appErr *temporal.ApplicationError
			if errors.As(err, &appErr) && appErr.Type() == contract.ErrCompanyGone {
				setState(ctx, contract.ProvisioningStateFailed)
				return result, err
			}
			if err != nil {
				status[kind] = models.ResourceFailed
				failed = append(failed, kind)
				continue
			}
			status[kind] = models.ResourceReady
			result.Refs[kind] = res.Ref
		}
		if len(failed) == 0 {
			setState(ctx, contract.ProvisioningStateReady)
			// Histories recorded before schedules existed replay without it.
			if workflow.GetVersion(ctx, "agent-schedule", workflow.DefaultVersion, 1) == 1 {
				if err := workflow.ExecuteActivity(ctx, a.EnsureSchedule, in.CompanyID).Get(ctx, nil); err != nil {
					workflow.GetLogger(ctx).Warn("agent schedule not made; scheduled runs wait for a heal", "error", err)
				}
			}
			// A company founded by an interview starts its first pass now.
			if workflow.GetVersion(ctx, "first-pass", workflow.DefaultVersion, 1) == 1 {
				if err := workflow.ExecuteActivity(ctx, a.StartPendingFirstPass, in.CompanyID).Get(ctx, nil); err != nil {
					workflow.GetLogger(ctx).Warn("first pass not started; the founder can send a message", "error", err)
				}
			}
			// Heals asked for while this run worked are answered by it.
			for heal.ReceiveAsync(nil) {
			}
			return result, nil
		}
		setState(ctx, contract.ProvisioningStateFailed)
		workflow.GetLogger(ctx).Warn("provisioning failed; waiting for heal", "failed", failed)
		healed := false
		timerCtx, cancel := workflow.WithCancel(ctx)
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(heal, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); healed = true })
		sel.AddFuture(workflow.NewTimer(timerCtx, healWait), func(workflow.Future) {})
		sel.Select(ctx)
		cancel()
		if !healed {
			return result, temporal.NewApplicationError("resources still failed after waiting for heal", "ProvisioningFailed", failed)
		}
		pending = failed
	}
}

func setState(ctx workflow.Context, state string) {
	// Only visibility depends on it; a failure must not fail provisioning.
	_ = workflow.UpsertTypedSearchAttributes(ctx, contract.ProvisioningStateKey.ValueSet(state))
}
