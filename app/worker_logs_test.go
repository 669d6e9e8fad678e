package app_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"holdco/app"
	"holdco/models"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// logCapture keeps every record at Debug and above.
type logCapture struct {
	mu      sync.Mutex
	records []slog.Record
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	c.records = append(c.records, r.Clone())
	c.mu.Unlock()
	return nil
}
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

// find returns the records at level or above whose message or attributes
// contain sub.
func (c *logCapture) find(level slog.Level, sub string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.records {
		if r.Level < level {
			continue
		}
		line := r.Message
		r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
		if sub == "" || strings.Contains(line, sub) {
			out = append(out, r.Level.String()+" "+line)
		}
	}
	return out
}

// capturedWorker runs the provisioning worker with an SDK client that logs
// into a capture.
func capturedWorker(t *testing.T, env *testenv.Temporal, register func(worker.Registry)) (*logCapture, worker.Worker) {
	t.Helper()
	logs := &logCapture{}
	c := env.Server.NewClientWithOptions(client.Options{Logger: app.TemporalLogger(slog.New(logs))})
	w := worker.New(c, env.TaskQueue, worker.Options{})
	register(w)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return logs, w
}

// TestWorkerStopNoiseIsAWarning: the SDK's error about an activity's
// result visited after the worker's stop (its context cancelled) is logged
// as a warning by holdco's SDK logger; other errors stay errors.
func TestWorkerStopNoiseIsAWarning(t *testing.T) {
	logs := &logCapture{}
	l := app.TemporalLogger(slog.New(logs))
	l.Error("Activity task postprocess error: context canceled", "ActivityType", "EnsureRepository")
	l.Error("Activity task postprocess error: payload too large")
	l.Error("Activity error.", "Error", "context canceled")
	assert.Equal(t, []string{"WARN Activity task postprocess error: context canceled ActivityType=EnsureRepository"},
		logs.find(slog.LevelWarn, "context canceled")[:1])
	assert.Equal(t, []string{"ERROR Activity task postprocess error: payload too large", "ERROR Activity error. Error=context canceled"},
		logs.find(slog.LevelError, ""))
}

// TestSuccessfulProvisioningLogsNoHeartbeatWarning: provisioning that
// succeeds logs no "RecordActivityHeartbeat with error" warning (a
// heartbeat cut off by the activity's completion).
func TestSuccessfulProvisioningLogsNoHeartbeatWarning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.NewStore(t)
	prov := localProvisioning(t, st, t.TempDir())
	env := testenv.NewTemporal(t, nil)
	logs, _ := capturedWorker(t, env, func(r worker.Registry) { workflows.Register(r, prov) })
	_, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for i := range 3 {
		co, err := st.Companies().CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: "hb-shop-" + string(rune('a'+i))})
		require.NoError(t, err)
		run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: contract.ProvisionWorkflowID(co.ID), TaskQueue: env.TaskQueue},
			contract.ProvisionWorkflowName, contract.ProvisionInput{CompanyID: co.ID, ConglomerateID: cong.ID, SeedRepo: true})
		require.NoError(t, err)
		require.NoError(t, run.Get(waitCtx, nil))
	}
	assert.Empty(t, logs.find(slog.LevelWarn, "Heartbeat"))
	assert.Empty(t, logs.find(slog.LevelError, ""))
}

// TestWorkerShutdownDuringAnActivityLogsNoError: stopping the worker (as
// SIGTERM does) while a provisioning activity runs is expected; it is not
// logged as an error, and the activity is retried elsewhere.
func TestWorkerShutdownDuringAnActivityLogsNoError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st := testenv.NewStore(t)
	prov := localProvisioning(t, st, dir)
	gate := &gatedRepos{entered: make(chan struct{})}
	blocked := *prov
	blocked.Repositories = gate
	env := testenv.NewTemporal(t, nil)
	logs, first := capturedWorker(t, env, func(r worker.Registry) { workflows.Register(r, &blocked) })
	_, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	co, err := st.Companies().CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: "stop-shop"})
	require.NoError(t, err)
	run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: contract.ProvisionWorkflowID(co.ID), TaskQueue: env.TaskQueue},
		contract.ProvisionWorkflowName, contract.ProvisionInput{CompanyID: co.ID, ConglomerateID: cong.ID, SeedRepo: true})
	require.NoError(t, err)
	select {
	case <-gate.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the repository activity never started")
	}
	first.Stop()
	assert.Empty(t, logs.find(slog.LevelError, ""), "an interrupted activity is not an error")

	env.Server.NewWorker(env.TaskQueue, func(r worker.Registry) { workflows.Register(r, prov) })
	// A bound: the repository activity's heartbeat timeout (15 s, scaled
	// for tests) that the server waits out, plus a minute of work.
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute+time.Duration(testenv.TimeoutScale())*15*time.Second)
	defer cancel()
	require.NoError(t, run.Get(waitCtx, nil), "another worker finishes it")
}
