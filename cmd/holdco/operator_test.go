package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/activities"
	"holdco/app"
	"holdco/config"
	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
	"holdco/service/tasks"
	"holdco/service/traces"
	"holdco/testenv"
	"holdco/testenv/apptemporal"
)

// operatorWorld is a database with one company (never provisioned, so
// unhealthy from its rows), a task and a run trace, and a Temporal
// namespace of the test's own without a worker: heal's signal-with-start
// is accepted there.
type operatorWorld struct {
	getenv    func(string) string
	companyID string
	taskID    string
	runID     string
}

func newOperatorWorld(t *testing.T) operatorWorld {
	t.Helper()
	tmp := testenv.NewTemporal(t, nil)
	env := map[string]string{"HOLDCO_DATA_DIR": t.TempDir(), "DATABASE_URL": testenv.DatabaseURL(t),
		"TEMPORAL_ADDRESS": tmp.Server.GetFrontendHostPort(), "TEMPORAL_NAMESPACE": tmp.Namespace}
	getenv := func(k string) string { return env[k] }
	cfg, err := config.Load(getenv)
	require.NoError(t, err)
	ctx := context.Background()
	op, err := app.OpenOperator(ctx, cfg, quiet())
	require.NoError(t, err)
	defer op.Close()
	require.NotNil(t, op.Temporal, "%v", op.TemporalErr)
	u, cong, err := op.Store().Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ops@example.com", Name: "ops", Subject: new("ops")}, "Ops")
	require.NoError(t, err)
	user := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialPersonal, UserID: u.ID, ConglomerateID: cong.ID})
	c, err := op.Service.Companies.CreateCompany(user, cong.ID, companies.CompanyInput{Name: "Ops Maps"})
	require.NoError(t, err)
	admin := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialAdminToken})
	task, err := op.Service.Tasks.AdminCreate(admin, c.ID, tasks.CreateInput{Title: "Check the maps"})
	require.NoError(t, err)
	_, err = (&activities.Provisioning{Store: op.Store()}).EnsureOIDCClient(ctx, c.ID)
	require.NoError(t, err)
	_, err = op.Service.Companies.DisableUserAuth(admin, c.ID, "abuse report")
	require.NoError(t, err)
	runID := uuid.NewString()
	require.NoError(t, op.Service.TraceWriter.Append(ctx, runID, "000001-model", traces.Event{Type: traces.EventModelRequest, Step: 1}))
	require.NoError(t, op.Service.TraceWriter.Finish(ctx, runID))
	return operatorWorld{getenv: getenv, companyID: c.ID, taskID: task.ID, runID: runID}
}

func (w operatorWorld) run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := admin(context.Background(), args, w.getenv, &out, &errOut)
	return out.String(), err
}

func (w operatorWorld) runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out, err := w.run(t, append(args, "--json")...)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal([]byte(out), v), out)
}

// TestAdminOperatorCommands runs health, heal, user-auth enable, tasks and
// runs … trace: the admin endpoints' use cases, as text and as --json.
func TestAdminOperatorCommands(t *testing.T) {
	t.Parallel()
	w := newOperatorWorld(t)

	t.Run("health", func(t *testing.T) {
		out, err := w.run(t, "health")
		require.NoError(t, err)
		assert.Contains(t, out, w.companyID)
		assert.Contains(t, out, "UNHEALTHY")
		assert.Contains(t, out, "never provisioned")
		assert.Contains(t, out, "1 companies: 0 healthy, 1 unhealthy")
		var all healthListView
		w.runJSON(t, &all, "health")
		require.Len(t, all.Companies, 1)
		assert.Equal(t, 1, all.Unhealthy)
		assert.Equal(t, w.companyID, all.Companies[0].CompanyID)
		assert.NotEmpty(t, all.Companies[0].Resources)
		var one companyHealthView
		w.runJSON(t, &one, "health", w.companyID)
		assert.Equal(t, all.Companies[0], one)
		_, err = w.run(t, "health", uuid.NewString())
		assert.ErrorContains(t, err, "not_found")
	})
	t.Run("heal", func(t *testing.T) {
		var healed healView
		w.runJSON(t, &healed, "heal", w.companyID)
		assert.True(t, healed.HealRequested)
		assert.Equal(t, "provision:"+w.companyID, healed.WorkflowID)
		assert.False(t, healed.Healthy)
		out, err := w.run(t, "heal", w.companyID)
		require.NoError(t, err)
		assert.Contains(t, out, "heal requested")
		_, err = w.run(t, "heal")
		assert.ErrorContains(t, err, "usage")
	})
	t.Run("tasks", func(t *testing.T) {
		var list taskListView
		w.runJSON(t, &list, "tasks", w.companyID)
		require.Len(t, list.Tasks, 1)
		assert.Equal(t, w.taskID, list.Tasks[0].ID)
		assert.Equal(t, "pending", list.Tasks[0].Status)
		w.runJSON(t, &list, "tasks", w.companyID, "--status", "done,failed")
		assert.Empty(t, list.Tasks)
		out, err := w.run(t, "tasks", w.companyID)
		require.NoError(t, err)
		assert.Contains(t, out, "Check the maps")
		assert.Contains(t, out, "1 of 1 tasks")
		_, err = w.run(t, "tasks", w.companyID, "--status", "sleeping")
		assert.Error(t, err, "an unknown status is refused")
	})
	t.Run("runs trace", func(t *testing.T) {
		out, err := w.run(t, "runs", w.runID, "trace")
		require.NoError(t, err)
		assert.Contains(t, out, `"type":"model_request"`)
		var tr traceView
		w.runJSON(t, &tr, "runs", w.runID, "trace")
		assert.Equal(t, w.runID, tr.RunID)
		require.Len(t, tr.Events, 1)
		assert.Contains(t, string(tr.Events[0]), "model_request")
		require.NotEmpty(t, tr.Files)
		_, err = w.run(t, "runs", uuid.NewString(), "trace")
		assert.ErrorContains(t, err, "not_found")
		_, err = w.run(t, "runs", w.runID)
		assert.ErrorContains(t, err, "usage")
	})
	t.Run("user-auth enable", func(t *testing.T) {
		var enabled userAuthView
		w.runJSON(t, &enabled, "user-auth", "enable", w.companyID)
		assert.Equal(t, w.companyID, enabled.CompanyID)
		assert.True(t, enabled.Enabled)
		assert.NotEmpty(t, enabled.ClientID)
		_, err := w.run(t, "user-auth", "enable", uuid.NewString())
		assert.ErrorContains(t, err, "not_found", "no client")
		_, err = w.run(t, "user-auth", "enable")
		assert.ErrorContains(t, err, "usage")
	})
}

// TestAdminHealthWithoutTemporal: with no Temporal answering, health still
// answers from the rows and says why resources were not checked.
func TestAdminHealthWithoutTemporal(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOLDCO_DATA_DIR": t.TempDir(), "TEMPORAL_ADDRESS": "127.0.0.1:1"}
	var out, errOut bytes.Buffer
	require.NoError(t, admin(context.Background(), []string{"health", "--json"}, func(k string) string { return env[k] }, &out, &errOut))
	assert.Contains(t, errOut.String(), "does not answer")
	var all healthListView
	require.NoError(t, json.Unmarshal(out.Bytes(), &all))
	assert.Empty(t, all.Companies)
	assert.True(t, strings.HasPrefix(strings.TrimSpace(out.String()), "{"))
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestMain: the embedded default and `holdco temporal` get the tests'
// Temporal server in a process of its own (testenv/apptemporal), as app's
// tests do; make test builds this command with -race, which leaves the
// in-process server out (embedded.go).
func TestMain(m *testing.M) {
	app.UseEmbeddedTemporal(apptemporal.Start)
	testenv.Main(m)
}
