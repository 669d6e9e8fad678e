package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
)

// Names of the site configuration workflow's messages.
const (
	SiteConfigWorkflowName = "SiteConfig"
	// SignalSiteConfigChanged asks for the site's environment to be written
	// again (sent with signal-with-start after a key is minted or rotated).
	SignalSiteConfigChanged = "changed"
)

// SiteConfigWorkflowID is the one configuration workflow per company, so
// changes are written one after the other, never concurrently.
func SiteConfigWorkflowID(companyID string) string { return "site-config:" + companyID }

var siteConfigActivity = workflow.ActivityOptions{
	StartToCloseTimeout:    time.Minute,
	ScheduleToCloseTimeout: 24 * time.Hour,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    5 * time.Minute,
	},
}

// SiteConfigInput names the company whose site is configured.
type SiteConfigInput = activities.SiteConfigInput

// SiteConfig writes a company's site environment (API address and the
// current company key). A change signalled while a write runs causes one
// more write, so the last write always reads the latest key.
func SiteConfig(ctx workflow.Context, in activities.SiteConfigInput) error {
	changed := workflow.GetSignalChannel(ctx, SignalSiteConfigChanged)
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
	r.RegisterWorkflowWithOptions(SiteConfig, workflow.RegisterOptions{Name: SiteConfigWorkflowName})
	r.RegisterActivity(siteConfig)
}
