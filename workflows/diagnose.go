package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/workflows/contract"
)

// diagnoseInFlight bounds the companies checked at once: checks touch
// disks, databases and sites.
const diagnoseInFlight = 8

var diagnoseActivity = workflow.ActivityOptions{
	// Each check of a company is bounded by activities.CheckTimeout and
	// they run side by side.
	StartToCloseTimeout: 2 * activities.CheckTimeout,
	// One retry covers a worker that died mid-check; the caller waits at
	// most contract.DiagnoseTimeout.
	RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 2},
}

// Diagnose checks the listed resources against reality, company by company
// (a few at a time), and returns the problems found. It runs on the
// worker, where the providers are, for the admin health check and heal.
func Diagnose(ctx workflow.Context, in contract.DiagnoseInput) (contract.DiagnoseResult, error) {
	ctx = workflow.WithActivityOptions(ctx, diagnoseActivity)
	var a *activities.Provisioning
	res := contract.DiagnoseResult{Companies: make([]contract.CompanyCheckResult, len(in.Companies))}
	futures := make([]workflow.Future, len(in.Companies))
	for i, c := range in.Companies {
		if i >= diagnoseInFlight {
			if err := futures[i-diagnoseInFlight].Get(ctx, &res.Companies[i-diagnoseInFlight]); err != nil {
				return res, err
			}
		}
		futures[i] = workflow.ExecuteActivity(ctx, a.CheckCompanyResources, c)
	}
	for i := max(0, len(futures)-diagnoseInFlight); i < len(futures); i++ {
		if err := futures[i].Get(ctx, &res.Companies[i]); err != nil {
			return res, err
		}
	}
	return res, nil
}
