package workflows

import (
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/workflows/contract"
)

// Register adds holdco's workflows and the activities they call to a
// worker.
func Register(r worker.Registry, provisioning *activities.Provisioning) {
	r.RegisterWorkflowWithOptions(Provision, workflow.RegisterOptions{Name: contract.ProvisionWorkflowName})
	r.RegisterActivity(provisioning)
}
