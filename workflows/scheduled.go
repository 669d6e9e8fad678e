package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/workflows/contract"
)

// ScheduledRun is what a company's schedule starts: one activity that
// starts the company's turn (the turn is its own workflow) or skips.
func ScheduledRun(ctx workflow.Context, in contract.ScheduledRunInput) (contract.ScheduledRunResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 5},
	})
	var res contract.ScheduledRunResult
	err := workflow.ExecuteActivity(ctx, (*activities.Turns).StartScheduledRun, in).Get(ctx, &res)
	if res.Skipped != "" {
		workflow.GetLogger(ctx).Info("scheduled run skipped", "reason", res.Skipped)
	}
	return res, err
}
