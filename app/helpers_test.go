package app_test

import (
	"encoding/json"
	"holdco/workflows/contract"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"
)

func temporalAttrs(conglomerateID string) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(contract.ConglomerateIDKey.ValueSet(conglomerateID))
}

func listRequest(query string) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Query: query}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func httptestServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}
