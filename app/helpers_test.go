package app_test

import (
	"context"
	"encoding/json"
	"holdco/store"
	"holdco/workflows/contract"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
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

// systemScope is the worker's scope of a company, for tests that read or
// write its rows directly.
func systemScope(t testing.TB, s *store.Store, companyID string) store.CompanyScope {
	t.Helper()
	sc, err := s.SystemCompanyScope(context.Background(), companyID)
	require.NoError(t, err)
	return sc
}
