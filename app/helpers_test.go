package app_test

import (
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"holdco/workflows"
)

func temporalAttrs(conglomerateID string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(workflows.ConglomerateIDKey.ValueSet(conglomerateID))
}

func listRequest(query string) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Query: query}
}
