package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"holdco/activities"
	"holdco/models"
	"holdco/providers/githubrepo"
	"holdco/providers/githubrepo/githubtest"
	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
	"holdco/store"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// homeWorker is one worker's provisioning activities: its own disk for
// everything, the repositories in their one home.
type homeWorker struct {
	prov *activities.Provisioning
	env  *testsuite.TestActivityEnvironment
}

// repoBackend is a repository adapter: provisioning's side and the
// deploys' read side.
type repoBackend interface {
	activities.Repositories
	statichost.Source
}

func newWorker(t *testing.T, st *store.Store, repos repoBackend) homeWorker {
	t.Helper()
	fake := &fakeResources{ensureErr: map[models.ResourceKind]error{}, checkErr: map[models.ResourceKind]error{}, block: map[models.ResourceKind]bool{}, made: map[string]bool{}}
	prov := &activities.Provisioning{Store: st, Repositories: repos, Databases: fakeDatabases{fake}, Hosting: newHost(t, st, newBlobs(t), repos)}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(prov)
	return homeWorker{prov: prov, env: env}
}

func (w homeWorker) provisionRepo(t *testing.T, companyID string) error {
	t.Helper()
	_, err := w.env.ExecuteActivity(w.prov.ProvisionResource, contract.ResourceInput{CompanyID: companyID, Kind: models.ResourceRepository, SeedRepo: true})
	return err
}

func newCompany(t *testing.T, st *store.Store) models.Company {
	t.Helper()
	ctx := context.Background()
	_, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	co, err := st.Companies().CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: "shop"})
	require.NoError(t, err)
	return co
}

// TestHealOnAnotherWorkerKeepsTheHostedRepository: worker A provisions a
// company's repository on the git host; heal runs on worker B, whose disk
// never held it. B asks the home, finds the repository and its recorded
// first commit, and creates nothing. Only when the host says the
// repository is gone is it made again, and the feed says so.
func TestHealOnAnotherWorkerKeepsTheHostedRepository(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewStore(t)
	co := newCompany(t, st)
	gh := githubtest.New(t, "acme", "ghp_test")
	hosted := func() *githubrepo.Store {
		s, err := githubrepo.New(githubrepo.Config{Token: "ghp_test", Owner: "acme", BaseURL: gh.URL})
		require.NoError(t, err)
		return s
	}
	a, b := hosted(), hosted()
	workerA, workerB := newWorker(t, st, a), newWorker(t, st, b)

	require.NoError(t, workerA.provisionRepo(t, co.ID))
	rec, err := st.Sites().CompanyRepositoryOf(ctx, co.ID)
	require.NoError(t, err)
	require.Equal(t, "github:acme/holdco-"+co.ID, rec.Home)
	require.NotEmpty(t, rec.FirstCommit)
	require.Equal(t, 1, gh.Created())

	require.NoError(t, workerB.prov.CheckResource(ctx, co, models.ResourceRepository), "worker B checks the home, not its disk")
	require.NoError(t, workerB.provisionRepo(t, co.ID), "heal on worker B")
	assert.Equal(t, 1, gh.Created(), "no second repository")
	again, err := st.Sites().CompanyRepositoryOf(ctx, co.ID)
	require.NoError(t, err)
	assert.Equal(t, rec.FirstCommit, again.FirstCommit)
	assert.Empty(t, activityOf(t, st, co.ID, models.ActivityRepositoryRecreated))

	// Gone from its home: heal recreates it, once, and says so.
	require.NoError(t, a.Delete(ctx, co.ID))
	assert.ErrorContains(t, workerB.prov.CheckResource(ctx, co, models.ResourceRepository), "gone from github:acme/holdco-"+co.ID)
	require.NoError(t, workerB.provisionRepo(t, co.ID))
	assert.Equal(t, 2, gh.Created())
	made, err := st.Sites().CompanyRepositoryOf(ctx, co.ID)
	require.NoError(t, err)
	assert.NotEqual(t, rec.FirstCommit, made.FirstCommit)
	events := activityOf(t, st, co.ID, models.ActivityRepositoryRecreated)
	require.Len(t, events, 1)
	assert.Equal(t, models.ActorSystem, events[0].Actor)
	assert.Contains(t, events[0].Summary, "github:acme/holdco-"+co.ID)
	require.NoError(t, workerA.provisionRepo(t, co.ID))
	assert.Equal(t, 2, gh.Created(), "a heal after the recreation creates nothing")
}

// TestHealNeverTakesAnotherRepository: the home holds a repository whose
// first commit is not the recorded one (a second repository made behind
// holdco's back). Heal refuses it, for good, and changes nothing.
func TestHealNeverTakesAnotherRepository(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewStore(t)
	co := newCompany(t, st)
	repos, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	w := newWorker(t, st, repos)
	require.NoError(t, w.provisionRepo(t, co.ID))
	rec, err := st.Sites().CompanyRepositoryOf(ctx, co.ID)
	require.NoError(t, err)

	require.NoError(t, repos.Delete(ctx, co.ID))
	_, err = repos.Ensure(ctx, co.ID, "Impostor", "x", true) // not through provisioning
	require.NoError(t, err)
	err = w.provisionRepo(t, co.ID)
	require.ErrorContains(t, err, "not the recorded")
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.True(t, appErr.NonRetryable())
	assert.Equal(t, activities.ErrRepositoryMismatch, appErr.Type())
	assert.ErrorContains(t, w.prov.CheckResource(ctx, co, models.ResourceRepository), "not the recorded")
	after, err := st.Sites().CompanyRepositoryOf(ctx, co.ID)
	require.NoError(t, err)
	assert.Equal(t, rec, after, "the record is kept")
	readme, err := repos.ReadFile(ctx, co.ID, "README.md")
	require.NoError(t, err)
	assert.Contains(t, string(readme), "Impostor", "the repository in place is left alone")
}

func activityOf(t *testing.T, st *store.Store, companyID string, kind models.ActivityKind) []models.ActivityEvent {
	t.Helper()
	events, err := st.Companies().ListActivity(context.Background(), systemScope(t, st, companyID), models.ActivityCursor{}, 100)
	require.NoError(t, err)
	var out []models.ActivityEvent
	for _, e := range events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}
