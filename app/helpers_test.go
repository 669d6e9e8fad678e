package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"holdco/store"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// TestMain applies the test settings (testenv.Main: the activities'
// timeouts scaled for a loaded machine).
func TestMain(m *testing.M) { testenv.Main(m) }

// testConfigBase is the environment of an app under test, before the
// test's own settings (env) override it:
//
//   - the listeners on free ports, the data under dir;
//   - Temporal: the test binary's server (testenv.NewTemporal) with a
//     namespace of the test's own, instead of an embedded server per app
//     (each costs seconds of CPU to start). A test that is about the
//     embedded server names one of its settings in env
//     (HOLDCO_TEMPORAL_PORT, HOLDCO_TEMPORAL_UI_PORT,
//     HOLDCO_TEMPORAL_START_TIMEOUT) or its own
//     TEMPORAL_ADDRESS, and gets it;
//   - the database: with TEST_DATABASE_URL a fresh Postgres schema
//     (testenv.DatabaseURL), so the Postgres pass runs the end-to-end
//     paths on Postgres; otherwise the app's SQLite file under dir.
func testConfigBase(t testing.TB, dir string, env map[string]string) map[string]string {
	t.Helper()
	base := map[string]string{
		"HOLDCO_DATA_DIR":         dir,
		"HOLDCO_API_ADDR":         "127.0.0.1:0",
		"HOLDCO_SITES_ADDR":       "127.0.0.1:0",
		"HOLDCO_MCP_ADDR":         "127.0.0.1:0",
		"HOLDCO_OAUTH_ADDR":       "127.0.0.1:0",
		"HOLDCO_TEMPORAL_UI_PORT": "0",
		"HOLDCO_SHUTDOWN_TIMEOUT": "10s",
	}
	if _, ok := env["DATABASE_URL"]; !ok {
		base["DATABASE_URL"] = testenv.DatabaseURL(t)
	}
	_, port := env["HOLDCO_TEMPORAL_PORT"]
	_, ui := env["HOLDCO_TEMPORAL_UI_PORT"]
	_, addr := env["TEMPORAL_ADDRESS"]
	_, start := env["HOLDCO_TEMPORAL_START_TIMEOUT"]
	if port || ui || addr || start {
		base["HOLDCO_TEMPORAL_PORT"] = strconv.Itoa(freePort(t))
		return base
	}
	tmp := testenv.NewTemporal(t, nil)
	base["TEMPORAL_ADDRESS"] = tmp.Server.GetFrontendHostPort()
	base["TEMPORAL_NAMESPACE"] = tmp.Namespace
	return base
}

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
