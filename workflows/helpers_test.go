package workflows_test

import (
	"holdco/workflows/contract"

	"go.temporal.io/sdk/workflow"
)

var workflowOptions = workflow.RegisterOptions{Name: contract.ProvisionWorkflowName}
