package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"holdco/app"
	"holdco/config"
	"holdco/models"
	"holdco/testenv"
)

// freePort is testenv.FreePort: outside the ephemeral range, where an
// outgoing connection could take the port before the program binds it.
func freePort(t testing.TB) int { return testenv.FreePort(t) }

// embeddedConfig is the embedded default on free ports under dir, with
// the test binary's Temporal server and the test's database (see
// testConfigBase in helpers_test.go).
func embeddedConfig(t testing.TB, dir string, env map[string]string) config.Config {
	t.Helper()
	base := testConfigBase(t, dir, env)
	for k, v := range env {
		base[k] = v
	}
	cfg, err := config.Load(func(k string) string { return base[k] })
	require.NoError(t, err)
	return cfg
}

// quietLogger is the apps' logger: nothing printed, every line (debug
// included) scanned for secrets (testenv.LogCapture; the package fails
// when one is logged).
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(testenv.LogCapture(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

// TestEmbeddedDefaultKeepsRowsAndWorkflowsAcrossRestart runs the embedded
// default twice on one data dir, as `make run` would after Ctrl-C.
func TestEmbeddedDefaultKeepsRowsAndWorkflowsAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := embeddedConfig(t, dir, map[string]string{"HOLDCO_TEMPORAL_UI_PORT": strconv.Itoa(freePort(t))})
	ctx := context.Background()

	runCtx, stop := context.WithCancel(ctx)
	a, err := app.Start(runCtx, cfg, app.AllRoles, quietLogger())
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()

	status, health := getJSON(t, "http://"+a.APIAddr()+"/health")
	require.Equal(t, http.StatusOK, status, health)
	assert.Equal(t, "ok", health["database"])
	assert.Equal(t, "ok", health["temporal"])

	status, doc := getJSON(t, "http://"+a.APIAddr()+"/openapi.json")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "3.1.0", doc["openapi"])

	resp, err := http.Get("http://" + a.TemporalUIAddr() + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "Temporal UI answers")

	user, cong, err := a.Store.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	// A workflow with search attributes; no worker runs its type, so it
	// stays open and must still be there after the restart.
	run, err := a.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    "restart-probe:" + cong.ID,
		TaskQueue:             "restart-probe",
		TypedSearchAttributes: temporalAttrs(cong.ID),
	}, "RestartProbe")
	require.NoError(t, err)

	stop()
	require.NoError(t, <-done)

	// Ports are released and everything comes back from disk.
	cfg2 := cfg
	a2, err := app.Start(ctx, cfg2, app.AllRoles, quietLogger())
	require.NoError(t, err)
	t.Cleanup(func() {
		c, cancel := context.WithCancel(ctx)
		cancel()
		_ = a2.Run(c)
	})
	got, err := a2.Store.Identity().GetUser(ctx, user.ID)
	require.NoError(t, err)
	assert.Equal(t, "ada@example.com", got.Email)

	desc, err := a2.Temporal.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())

	// Operators can filter by the search attribute in the UI (visibility).
	require.Eventually(t, func() bool {
		list, err := a2.Temporal.ListWorkflow(ctx, listRequest(`ConglomerateId = "`+cong.ID+`"`))
		return err == nil && len(list.GetExecutions()) == 1
	}, testenv.EventualBound, 100*time.Millisecond)
}

// TestStartFailuresNameTheSetting covers the one-line errors `holdco serve`
// exits with.
func TestStartFailuresNameTheSetting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	busyPort := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	apiPort := strconv.Itoa(freePort(t))

	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"api port in use", map[string]string{"HOLDCO_API_ADDR": "127.0.0.1:" + busyPort}, "HOLDCO_API_ADDR: port " + busyPort + " is in use"},
		{"sites port in use", map[string]string{"HOLDCO_SITES_ADDR": "127.0.0.1:" + busyPort}, "HOLDCO_SITES_ADDR: port " + busyPort + " is in use"},
		{"mcp port in use", map[string]string{"HOLDCO_MCP_ADDR": "127.0.0.1:" + busyPort}, "HOLDCO_MCP_ADDR: port " + busyPort + " is in use"},
		{"oauth port in use", map[string]string{"HOLDCO_OAUTH_ADDR": "127.0.0.1:" + busyPort}, "HOLDCO_OAUTH_ADDR: port " + busyPort + " is in use"},
		{"sites on the API's origin", map[string]string{"HOLDCO_API_ADDR": "127.0.0.1:" + apiPort, "HOLDCO_SITES_PUBLIC_URL": "http://127.0.0.1:" + apiPort}, "HOLDCO_SITES_PUBLIC_URL: "},
		{"temporal port in use", map[string]string{"HOLDCO_TEMPORAL_PORT": busyPort}, "HOLDCO_TEMPORAL_PORT: port " + busyPort + " is in use"},
		{"ui port in use", map[string]string{"HOLDCO_TEMPORAL_UI_PORT": busyPort}, "HOLDCO_TEMPORAL_UI_PORT: port " + busyPort + " is in use"},
		{"postgres unreachable", map[string]string{"DATABASE_URL": "postgres://holdco:s3cret@127.0.0.1:1/holdco"}, "DATABASE_URL: "},
		{"temporal unreachable", map[string]string{"TEMPORAL_ADDRESS": "127.0.0.1:1"}, "TEMPORAL_ADDRESS: cannot reach Temporal at 127.0.0.1:1"},
		// The embedded server not answering in time is a slow start, not a
		// port mistake: the error names the setting that gives it longer.
		{"embedded temporal slower than its start timeout", map[string]string{"HOLDCO_TEMPORAL_START_TIMEOUT": "1ns"},
			"HOLDCO_TEMPORAL_START_TIMEOUT: the embedded Temporal server on 127.0.0.1:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := embeddedConfig(t, t.TempDir(), tc.env)
			_, err := app.Start(ctx, cfg, app.AllRoles, quietLogger())
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got %q, want prefix %q", err, tc.want)
			assert.NotContains(t, err.Error(), "s3cret", "passwords never appear")
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}
