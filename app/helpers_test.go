package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"holdco/app"
	"holdco/config"
	"holdco/store"
	"holdco/testenv"
	"holdco/testenv/apptemporal"
	"holdco/workflows/contract"
)

// TestMain applies the test settings (testenv.Main: the activities'
// timeouts scaled for a loaded machine). An app under test that runs the
// embedded default gets holdco's embedded Temporal server in a process of
// its own (testenv/apptemporal), so this binary does not link it.
func TestMain(m *testing.M) {
	app.UseEmbeddedTemporal(apptemporal.Start)
	testenv.Main(m)
}

// testConfigBase is the environment of an app under test, before the
// test's own settings (env) override it:
//
//   - the listeners on free ports, the data under dir;
//   - HOLDCO_SHARED_DATA_DIR=true: every process of a test runs on this
//     machine, so a test of split roles on Postgres and the test's
//     Temporal may keep local blobs and repositories (config.SplitState);
//   - Temporal: the test binary's server (testenv.NewTemporal) with a
//     namespace of the test's own, instead of an embedded server per app
//     (each costs seconds of CPU to start). A test that is about the
//     embedded server names one of its settings in env
//     (HOLDCO_TEMPORAL_PORT, HOLDCO_TEMPORAL_UI_PORT,
//     HOLDCO_TEMPORAL_START_TIMEOUT) or its own
//     TEMPORAL_ADDRESS, and gets it;
//   - the database: with TEST_DATABASE_URL a fresh Postgres schema
//     (testenv.DatabaseURL), so the Postgres pass runs the end-to-end
//     paths on Postgres; otherwise the app's SQLite file under dir,
//     seeded with the binary's migrated database when it is not there yet
//     (testenv.SeedMigratedSQLite).
func testConfigBase(t testing.TB, dir string, env map[string]string) map[string]string {
	t.Helper()
	base := map[string]string{
		"HOLDCO_DATA_DIR":           dir,
		"HOLDCO_API_ADDR":           "127.0.0.1:0",
		"HOLDCO_SITES_ADDR":         "127.0.0.1:0",
		"HOLDCO_MCP_ADDR":           "127.0.0.1:0",
		"HOLDCO_OAUTH_ADDR":         "127.0.0.1:0",
		"HOLDCO_WORKER_HEALTH_ADDR": "127.0.0.1:0",
		"HOLDCO_SHARED_DATA_DIR":    "true",
		"HOLDCO_TEMPORAL_UI_PORT":   "0",
		"HOLDCO_SHUTDOWN_TIMEOUT":   "10s",
	}
	if _, ok := env["DATABASE_URL"]; !ok {
		base["DATABASE_URL"] = testenv.DatabaseURL(t)
		if base["DATABASE_URL"] == "" {
			// The embedded default's file, migrated already (the
			// migrations from an empty file are store's tests).
			testenv.SeedMigratedSQLite(t, filepath.Join(dir, "holdco.db"))
		}
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

// runApp starts an app with roles on cfg and runs it until the test ends;
// its shutdown must be clean. Every test that runs a whole app starts it
// here (or through startApp for a logger or an early stop of its own).
func runApp(t testing.TB, cfg config.Config, roles ...app.Role) *app.App {
	t.Helper()
	a, _ := startApp(t, cfg, quietLogger(), roles...)
	return a
}

// startApp is runApp with the app's logger and a stop function that shuts
// the app down before the test ends (the cleanup then does nothing).
func startApp(t testing.TB, cfg config.Config, logger *slog.Logger, roles ...app.Role) (*app.App, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Start(ctx, cfg, roles, logger)
	if err != nil {
		cancel()
		require.NoError(t, err, "start %v", roles)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			assert.NoError(t, <-done, "the app (%v) stops cleanly", roles)
		})
	}
	t.Cleanup(stop)
	return a, stop
}

// node runs node with args in scripts/e2e/<dir> (its pinned packages
// installed by `make e2e-deps`) and returns what it printed; a missing
// Node or package fails under CI=true and skips otherwise
// (testenv.NodeScripts), a failing script fails the test (testenv.RunNode).
func node(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	return string(testenv.RunNode(t, testenv.NodeScripts(t, dir), env, args...))
}
