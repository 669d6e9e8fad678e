package companies

import (
	"context"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"holdco/internal/bounds"
	"holdco/models"
	"holdco/service/background"
	"holdco/store"
	"holdco/workflows/contract"
)

// ProvisioningOutbox starts the provisioning that a company's creation
// recorded (the intent row written with the company). The API starts it
// right after the commit; the worker's sweeper starts whatever a crash or
// an unreachable Temporal left behind. Starting twice is harmless: the
// workflow id is the company's.
type ProvisioningOutbox struct {
	Store    *store.Store
	Temporal client.Client
	Logger   *slog.Logger
}

// Timeouts of the outbox's calls.
const (
	// startTimeout bounds a start attempt, which runs detached from the
	// request that created the company (a client that hangs up must not
	// cancel it).
	startTimeout = 5 * time.Second
	// SweepGrace leaves a fresh intent to the request that wrote it, so the
	// sweeper rarely races a start that is about to succeed.
	SweepGrace = 10 * time.Second
	// SweepInterval is how often the worker's sweeper looks.
	SweepInterval = 5 * time.Second
)

// Start starts the company's first provisioning and marks the intent
// started. A finished successful run under the workflow id counts as
// started (nothing runs again); a failed or terminated one is run again.
func (o *ProvisioningOutbox) Start(ctx context.Context, scope store.CompanyScope, c models.Company, seedRepo bool) (ProvisionTrigger, error) {
	return o.start(context.WithoutCancel(ctx), scope, c, seedRepo)
}

// start is Start bounded by startTimeout under ctx: the sweeper's starts
// end with its context (shutdown), a request's do not.
func (o *ProvisioningOutbox) start(ctx context.Context, scope store.CompanyScope, c models.Company, seedRepo bool) (ProvisionTrigger, error) {
	ctx, cancel := context.WithTimeout(ctx, bounds.Of(startTimeout))
	defer cancel()
	opts := provisionOptions(c)
	opts.WorkflowIDReusePolicy = enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY
	run, err := o.Temporal.ExecuteWorkflow(ctx, opts, contract.ProvisionWorkflowName,
		contract.ProvisionInput{CompanyID: c.ID, ConglomerateID: c.ConglomerateID, SeedRepo: seedRepo})
	if err != nil {
		return ProvisionTrigger{}, models.Errorf(models.CodeUpstreamUnavailable, "Provisioning could not be started; retry shortly.").Wrap(err)
	}
	if err := o.Store.Companies().MarkProvisioningStarted(ctx, scope, time.Now().UTC()); err != nil {
		// The run exists; the sweeper will find it again and only join it.
		return ProvisionTrigger{}, err
	}
	return ProvisionTrigger{WorkflowID: run.GetID(), RunID: run.GetRunID()}, nil
}

// Sweep starts provisioning for every intent older than grace that is not
// marked started, and forgets expired Idempotency-Keys. It returns how
// many it started; a failed start is logged and stays pending for the next
// sweep, and the sweep ends at the first failure (background.Drain).
func (o *ProvisioningOutbox) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	now := time.Now().UTC()
	if _, err := o.Store.Companies().DeleteExpiredCompanyCreateKeys(ctx, now); err != nil {
		return 0, err
	}
	startFailed := false
	started, err := background.Outbox[store.PendingCompany]{Key: func(p store.PendingCompany) string { return p.Company.ID },
		Pending: o.Store.Companies().PendingProvisioning,
		Start: func(ctx context.Context, p store.PendingCompany) error {
			_, err := o.start(ctx, p.Scope, p.Company, p.SeedRepo)
			if err != nil {
				startFailed = true
				if ctx.Err() == nil {
					o.Logger.WarnContext(ctx, "provisioning sweep: start failed; retried next sweep", "company", p.Company.ID, "error", err)
				}
			}
			return err
		}}.Sweep(ctx, grace)
	if startFailed {
		return started, ctx.Err() // logged above
	}
	return started, err
}
