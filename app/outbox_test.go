package app_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"holdco/activities"
	"holdco/models"
	"holdco/providers/companydb"
	"holdco/providers/gitrepo"
	"holdco/service"
	"holdco/service/companies"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// localProvisioning is the activity set on the local adapters under dir.
func localProvisioning(t *testing.T, st *store.Store, dir string) *activities.Provisioning {
	t.Helper()
	repos, err := gitrepo.New(filepath.Join(dir, "repos"))
	require.NoError(t, err)
	dbs, err := companydb.NewSQLite(filepath.Join(dir, "dbs"))
	require.NoError(t, err)
	mux := http.NewServeMux()
	srv := httptestServer(t, mux)
	host := siteHost(t, st, dir, srv+"/sites", repos)
	mux.Handle("/sites/", http.StripPrefix("/sites", host.Handler()))
	return &activities.Provisioning{Store: st, Repositories: repos, Databases: dbs, Hosting: host}
}

// countEntries counts what a local adapter made under dir/sub.
func countEntries(t *testing.T, dir, sub string) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, sub))
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

func newTestService(t *testing.T, st *store.Store, tc client.Client) *companies.Service {
	t.Helper()
	svc, err := usecases.New(context.Background(), service.Config{PublicURL: "http://holdco.test"}, st, testenv.NewIdP(), quietLogger(),
		usecases.Options{Temporal: tc})
	require.NoError(t, err)
	return svc.Companies
}

// TestCompaniesCreatedBeforeACrashAreProvisioned creates companies while
// every workflow start fails (the process "dies" between the commit and
// the start), then restarts on the same database: the worker's sweeper
// provisions every one of them, with exactly one repository, database and
// site each, and a company whose workflow did start before the crash is
// not provisioned twice.
func TestCompaniesCreatedBeforeACrashAreProvisioned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st := testenv.NewStore(t)
	env := testenv.NewTemporal(t, nil)
	user, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialWebSession, CredentialID: "s1", UserID: user.ID, ConglomerateID: cong.ID})

	// Before the crash: every create answers with its company although no
	// workflow starts.
	crashing := newTestService(t, st, testenv.UnreachableTemporal{Client: env.Client})
	const n = 6
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := crashing.CreateCompany(as, cong.ID, companies.CompanyInput{Name: fmt.Sprintf("Shop %d", i), Idea: "Sell maps"})
			assert.NoError(t, err)
			ids[i] = c.ID
		})
	}
	wg.Wait()
	for _, id := range ids {
		require.NotEmpty(t, id)
		rows, err := st.Companies().ListResources(ctx, systemScope(t, st, id))
		require.NoError(t, err)
		assert.Empty(t, rows, "nothing was provisioned before the crash")
	}

	// The last company's workflow did start before the crash, but the
	// process died before it recorded that.
	prov := localProvisioning(t, st, dir)
	env.Server.NewWorker(env.TaskQueue, func(r worker.Registry) { workflows.Register(r, prov) })
	last, err := st.Companies().GetCompany(ctx, systemScope(t, st, ids[n-1]))
	require.NoError(t, err)
	early, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: contract.ProvisionWorkflowID(last.ID), TaskQueue: env.TaskQueue},
		contract.ProvisionWorkflowName, contract.ProvisionInput{CompanyID: last.ID, ConglomerateID: cong.ID, SeedRepo: true})
	require.NoError(t, err)
	require.NoError(t, early.Get(ctx, nil))

	// After the restart: the worker's sweeper starts what is pending.
	outbox := &companies.ProvisioningOutbox{Store: st, Temporal: env.Client, Logger: quietLogger()}
	// A start that fails (a loaded machine's Temporal answering late) ends
	// a sweep and stays pending for the next, as the runner would sweep
	// again: sweep until every intent is started, within a bound.
	started := 0
	require.Eventually(t, func() bool {
		k, err := outbox.Sweep(ctx, 0)
		require.NoError(t, err)
		started += k
		return started >= n
	}, 2*time.Minute, 100*time.Millisecond)
	assert.Equal(t, n, started)
	again, err := outbox.Sweep(ctx, 0)
	require.NoError(t, err)
	assert.Zero(t, again, "every intent is marked started")

	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, id := range ids {
		var res contract.ProvisionResult
		require.NoError(t, env.Client.GetWorkflow(waitCtx, contract.ProvisionWorkflowID(id), "").Get(waitCtx, &res), id)
		rows, err := st.Companies().ListResources(ctx, systemScope(t, st, id))
		require.NoError(t, err)
		require.Len(t, rows, 3, id)
		for _, r := range rows {
			assert.Equal(t, models.ResourceReady, r.Status, "%s %s", id, r.Kind)
		}
	}
	assert.Equal(t, n, countEntries(t, dir, "repos"), "one repository each")
	assert.Equal(t, n, countEntries(t, dir, "dbs"), "one database each")
	for _, id := range ids {
		site, err := st.Sites().SiteOfCompany(ctx, id)
		require.NoError(t, err, "published")
		assert.NotEmpty(t, site.DeployID, "main deployed")
	}

	// The workflow that ran before the crash was not run again.
	latest, err := env.Client.DescribeWorkflowExecution(ctx, contract.ProvisionWorkflowID(last.ID), "")
	require.NoError(t, err)
	assert.Equal(t, early.GetRunID(), latest.WorkflowExecutionInfo.Execution.RunId)
}

// hangingTemporal blocks every workflow start until its context ends, as a
// Temporal frontend that accepts connections but never answers would.
type hangingTemporal struct {
	client.Client
	starts atomic.Int32
}

func (h *hangingTemporal) ExecuteWorkflow(ctx context.Context, _ client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	h.starts.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestSweepWhileTemporalHangsEndsAtTheFirstFailureAndWithItsContext: with
// Temporal unreachable a sweep tries one start, not one per pending
// company (each would wait its timeout and hold shutdown for minutes), and
// a cancelled sweep (shutdown) ends its start at once.
func TestSweepWhileTemporalHangsEndsAtTheFirstFailureAndWithItsContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.NewStore(t)
	user, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialWebSession, CredentialID: "s1", UserID: user.ID, ConglomerateID: cong.ID})
	crashing := newTestService(t, st, testenv.UnreachableTemporal{})
	for i := range 3 {
		_, err := crashing.CreateCompany(as, cong.ID, companies.CompanyInput{Name: fmt.Sprintf("Shop %d", i)})
		require.NoError(t, err)
	}

	hanging := &hangingTemporal{}
	outbox := &companies.ProvisioningOutbox{Store: st, Temporal: hanging, Logger: quietLogger()}
	sweepCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		started, err := outbox.Sweep(sweepCtx, 0)
		assert.Zero(t, started)
		assert.ErrorIs(t, err, context.Canceled)
	}()
	require.Eventually(t, func() bool { return hanging.starts.Load() == 1 }, testenv.EventualBound, 5*time.Millisecond)
	cancel()
	<-done
	assert.EqualValues(t, 1, hanging.starts.Load(), "the sweep stops at the first failure")
}
