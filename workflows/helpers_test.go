package workflows_test

import (
	"go.temporal.io/sdk/workflow"

	"holdco/workflows"
)

var workflowOptions = workflow.RegisterOptions{Name: workflows.ProvisionWorkflowName}
