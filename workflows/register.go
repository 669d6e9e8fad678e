package workflows

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/workflows/contract"
)

// Register adds the provisioning and diagnosis workflows and the
// activities they call to a worker.
func Register(r worker.Registry, provisioning *activities.Provisioning) {
	r.RegisterWorkflowWithOptions(Provision, workflow.RegisterOptions{Name: contract.ProvisionWorkflowName})
	r.RegisterWorkflowWithOptions(Diagnose, workflow.RegisterOptions{Name: contract.DiagnoseWorkflowName})
	r.RegisterActivity(provisioning)
}

// RegisterTurns adds the agent turn workflow and its activities.
func RegisterTurns(r worker.Registry, turns *activities.Turns) {
	r.RegisterWorkflowWithOptions(Turn, workflow.RegisterOptions{Name: contract.TurnWorkflowName})
	r.RegisterWorkflowWithOptions(ScheduledRun, workflow.RegisterOptions{Name: contract.ScheduledRunWorkflowName})
	r.RegisterActivity(turns)
}

// RegisterAutoTopUp adds the auto top-up workflow and its activity.
func RegisterAutoTopUp(r worker.Registry, a *activities.AutoTopUps) {
	r.RegisterWorkflowWithOptions(AutoTopUp, workflow.RegisterOptions{Name: contract.AutoTopUpWorkflowName})
	r.RegisterActivity(a)
}

// RegisterFounding adds the founding interview workflow and its
// activities.
func RegisterFounding(r worker.Registry, founding *activities.Founding) {
	r.RegisterWorkflowWithOptions(Founding, workflow.RegisterOptions{Name: contract.FoundingWorkflowName})
	r.RegisterActivity(founding)
}

// RegisterGrowth adds the domain purchase workflow, the ad reconciler and
// their activities.
func RegisterGrowth(r worker.Registry, domains *activities.Domains, ads *activities.AdReconciler) {
	r.RegisterWorkflowWithOptions(DomainPurchase, workflow.RegisterOptions{Name: contract.DomainWorkflowName})
	r.RegisterWorkflowWithOptions(AdReconciler, workflow.RegisterOptions{Name: contract.AdsWorkflowName})
	r.RegisterActivity(domains)
	r.RegisterActivity(ads)
}
