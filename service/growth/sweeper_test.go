package growth_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// The commit → workflow seams: a request that signals (or starts) clears
// its row's mark; a row a crash left marked is started or signalled by the
// sweeper, once.
func TestWorkflowSeamsSurviveACrash(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil) // no worker: the workflows only need to exist
	crashed := servicetest.New(t)      // a process that committed, then died before Temporal
	ctx := context.Background()
	w, p := withBothOutboxes(t, crashed, "Seam Tea", "seamtea")
	ada, co := w.ada, w.shop

	sw := &growth.Sweeper{Store: crashed.Store, Temporal: tmp.Client, Logger: slog.New(slog.DiscardHandler)}
	n, err := sw.Sweep(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "one domain workflow started, one reconciler signalled")
	n, err = sw.Sweep(ctx, 0)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing twice")
	_, err = tmp.Client.DescribeWorkflowExecution(ctx, contract.DomainWorkflowID(p.ID), "")
	require.NoError(t, err)
	_, err = tmp.Client.DescribeWorkflowExecution(ctx, contract.AdsWorkflowID(co), "")
	require.NoError(t, err)

	// A live process clears the mark itself.
	live := crashed.NewServices(t, usecases.Options{Temporal: tmp.Client})
	_, err = live.Growth.SetDailyCap(ada, co, 4)
	require.NoError(t, err)
	pending, err := crashed.Store.Growth().PendingAdReconciles(ctx, time.Now().Add(time.Hour), 10)
	require.NoError(t, err)
	assert.Empty(t, pending)
}

// deadlineRecorder is a Temporal client that records how long each start
// and signal was given; starts succeed, signals fail.
type deadlineRecorder struct {
	client.Client
	left map[string]time.Duration // call → time left on its context (0: none)
}

func (d *deadlineRecorder) record(ctx context.Context, call string) {
	if dl, ok := ctx.Deadline(); ok {
		d.left[call] = time.Until(dl)
	} else {
		d.left[call] = 0
	}
}

func (d *deadlineRecorder) ExecuteWorkflow(ctx context.Context, _ client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	d.record(ctx, "start")
	return nil, nil
}

func (d *deadlineRecorder) SignalWithStartWorkflow(ctx context.Context, _, _ string, _ any, _ client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	d.record(ctx, "signal")
	return nil, errors.New("injected: the server did not answer")
}

// The sweeper's starts and signals are bounded like a request's: a
// Temporal server that never answers cannot hold the sweep (and the
// sweep's lease) forever.
func TestSweepStartsAndSignalsHaveADeadline(t *testing.T) {
	e := servicetest.New(t)
	withBothOutboxes(t, e, "Bounded Tea", "boundedtea")

	rec := &deadlineRecorder{left: map[string]time.Duration{}}
	sw := &growth.Sweeper{Store: e.Store, Temporal: rec, Logger: slog.New(slog.DiscardHandler)}
	n, err := sw.Sweep(context.Background(), 0) // no deadline of its own
	require.Error(t, err, "the signal failed")
	assert.Equal(t, 1, n, "the domain workflow started")
	for _, call := range []string{"start", "signal"} {
		left, ok := rec.left[call]
		require.True(t, ok, "%s was called", call)
		assert.Positive(t, left, "the sweep's %s has a deadline", call)
		assert.LessOrEqual(t, left, time.Minute, "the sweep's %s is bounded like a request's", call)
	}
}

// withBothOutboxes is a company of a new account whose ad reconcile and
// domain purchase (of a free name starting with label) wait in their
// outboxes, as a process leaves them that committed without Temporal.
func withBothOutboxes(t *testing.T, e *servicetest.Env, name, label string) (*world, models.DomainPurchase) {
	t.Helper()
	ada, cong := e.User(t, "ada@example.com")
	co, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: name})
	require.NoError(t, err)
	_, err = e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 50, "t")
	require.NoError(t, err)
	_, err = e.Svc.Growth.SetDailyCap(ada, co.ID, 3)
	require.NoError(t, err)
	w := &world{e: e, ada: ada, adaCong: cong, shop: co.ID}
	return w, w.buy(t, ada, co.ID, freeName(t, w, co.ID, label))
}
