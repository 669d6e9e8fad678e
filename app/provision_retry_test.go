package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"holdco/activities"
	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// flakyRepos fails every Ensure while down, like a git host that is out.
type flakyRepos struct {
	activities.Repositories
	down  atomic.Bool
	seeds atomic.Int32 // Ensure calls asked to seed
}

func (f *flakyRepos) Ensure(ctx context.Context, companyID, name, idea string, seed bool) (models.RepositoryInfo, error) {
	if f.down.Load() {
		return models.RepositoryInfo{}, errors.New("git host unavailable")
	}
	if seed {
		f.seeds.Add(1)
	}
	return f.Repositories.Ensure(ctx, companyID, name, idea, seed)
}

// waitParked waits until the company's provisioning run has given up on
// its repository and waits for heal.
func waitParked(t *testing.T, env *testenv.Temporal, companyID string) {
	t.Helper()
	require.Eventually(t, func() bool {
		v, err := env.Client.QueryWorkflow(context.Background(), contract.ProvisionWorkflowID(companyID), "", contract.QueryResources)
		if err != nil {
			return false
		}
		var status map[models.ResourceKind]models.ResourceStatus
		return v.Get(&status) == nil && status[models.ResourceRepository] == models.ResourceFailed
	}, 2*time.Minute, 200*time.Millisecond, "the run parks with the repository failed")
}

// TestUserProvisionRetriesFailedResources: a run whose repository failed
// waits for heal; the user's POST /companies/{id}/provision after the git
// host recovered retries the failed resource in that run, which then
// finishes with every resource ready.
func TestUserProvisionRetriesFailedResources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st := testenv.NewStore(t)
	prov := localProvisioning(t, st, dir)
	repos := &flakyRepos{Repositories: prov.Repositories}
	repos.down.Store(true)
	prov.Repositories = repos
	env := testenv.NewTemporal(t, nil)
	env.Server.NewWorker(env.TaskQueue, func(r worker.Registry) { workflows.Register(r, prov) })
	svc := newTestService(t, st, env.Client)
	user, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialWebSession, CredentialID: "s1", UserID: user.ID, ConglomerateID: cong.ID})

	c, err := svc.CreateCompany(as, cong.ID, companies.CompanyInput{Name: "Map Shop"})
	require.NoError(t, err)
	waitParked(t, env, c.ID)
	parked, err := env.Client.DescribeWorkflowExecution(ctx, contract.ProvisionWorkflowID(c.ID), "")
	require.NoError(t, err)

	repos.down.Store(false)
	trig, err := svc.ProvisionCompany(as, c.ID, true)
	require.NoError(t, err)
	assert.Equal(t, parked.WorkflowExecutionInfo.Execution.RunId, trig.RunID, "the parked run was asked to retry")

	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	require.NoError(t, env.Client.GetWorkflow(waitCtx, trig.WorkflowID, trig.RunID).Get(waitCtx, nil), "the run finishes after the retry")
	rows, err := st.Companies().ListResources(ctx, systemScope(t, st, c.ID))
	require.NoError(t, err)
	require.Len(t, rows, 3)
	for _, r := range rows {
		assert.Equal(t, models.ResourceReady, r.Status, r.Kind)
	}
}

// TestHealSeedsOnlyCompaniesCreatedWithSeeding: once a company's
// provisioning was resumed as an import (seed_repo false), a heal that
// recreates its lost repository does not seed it with a README.
func TestHealSeedsOnlyCompaniesCreatedWithSeeding(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st := testenv.NewStore(t)
	prov := localProvisioning(t, st, dir)
	repos := &flakyRepos{Repositories: prov.Repositories}
	prov.Repositories = repos
	env := testenv.NewTemporal(t, nil)
	env.Server.NewWorker(env.TaskQueue, func(r worker.Registry) { workflows.Register(r, prov) })
	svc := newTestService(t, st, env.Client)
	user, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialWebSession, CredentialID: "s1", UserID: user.ID, ConglomerateID: cong.ID})
	admin := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialAdminToken, CredentialID: "a1"})
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	finish := func(id string) {
		t.Helper()
		require.NoError(t, env.Client.GetWorkflow(waitCtx, contract.ProvisionWorkflowID(id), "").Get(waitCtx, nil))
	}

	c, err := svc.CreateCompany(as, cong.ID, companies.CompanyInput{Name: "Imported"})
	require.NoError(t, err)
	finish(c.ID)
	require.Equal(t, int32(1), repos.seeds.Load(), "created with seeding")

	_, err = svc.ProvisionCompany(as, c.ID, false) // an import resume
	require.NoError(t, err)
	finish(c.ID)

	require.NoError(t, os.RemoveAll(filepath.Join(dir, "repos", c.ID+".git")))
	res, err := svc.HealCompany(admin, c.ID)
	require.NoError(t, err)
	require.True(t, res.HealRequested)
	finish(c.ID)
	require.NoError(t, prov.Repositories.Check(ctx, c.ID), "the repository was recreated")
	assert.Equal(t, int32(1), repos.seeds.Load(), "never seeded again after the import resume")
}
