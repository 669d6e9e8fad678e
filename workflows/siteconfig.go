package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/workflows/contract"
)

var siteConfigActivity = workflow.ActivityOptions{
	StartToCloseTimeout:    time.Minute,
	ScheduleToCloseTimeout: 24 * time.Hour,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    5 * time.Minute,
	},
}

// SiteConfig writes a company's site environment (API address and the
// current company key). A change signalled while a write runs causes one
// more write, so the last write always reads the latest key.
func SiteConfig(ctx workflow.Context, in contract.SiteConfigInput) error {
	changed := workflow.GetSignalChannel(ctx, contract.SignalSiteConfigChanged)
	ctx = workflow.WithActivityOptions(ctx, siteConfigActivity)
	var a *activities.SiteConfig
	for {
		for changed.ReceiveAsync(nil) {
		}
		if err := workflow.ExecuteActivity(ctx, a.WriteSiteConfig, in).Get(ctx, nil); err != nil {
			return err
		}
		if changed.Len() == 0 {
			return nil
		}
	}
}

// RegisterSiteConfig adds the site configuration workflow and its activity
// to a worker.
func RegisterSiteConfig(r worker.Registry, siteConfig *activities.SiteConfig) {
	r.RegisterWorkflowWithOptions(SiteConfig, workflow.RegisterOptions{Name: contract.SiteConfigWorkflowName})
	r.RegisterActivity(siteConfig)
}
