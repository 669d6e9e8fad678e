package activities_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"holdco/activities"
	"holdco/models"
	"holdco/store"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// fakeResources is every provider at once: Ensure returns a ref or the
// error set for the kind; Check returns the error set for the kind.
type fakeResources struct {
	ensureErr map[models.ResourceKind]error
	checkErr  map[models.ResourceKind]error
	// block makes Check wait for its context (a resource that hangs).
	block map[models.ResourceKind]bool
	seeds []bool
	// made: repositories Ensure made; deploys counts PublishHead.
	made    map[string]bool
	deploys int
}

func (f *fakeResources) result(kind models.ResourceKind, ref string) (string, error) {
	if err := f.ensureErr[kind]; err != nil {
		return "", err
	}
	return ref, nil
}

func (f *fakeResources) check(ctx context.Context, kind models.ResourceKind) error {
	if f.block[kind] {
		<-ctx.Done()
		return ctx.Err()
	}
	return f.checkErr[kind]
}

type fakeRepos struct{ *fakeResources }

func (f fakeRepos) Ensure(_ context.Context, companyID, _, _ string, seed bool) (models.RepositoryInfo, error) {
	f.seeds = append(f.seeds, seed)
	ref, err := f.result(models.ResourceRepository, companyID+".git")
	if err != nil {
		return models.RepositoryInfo{}, err
	}
	f.made[companyID] = true
	return models.RepositoryInfo{Home: "fake:" + companyID, Ref: ref, Exists: true, FirstCommit: "c0"}, nil
}
func (f fakeRepos) Status(_ context.Context, companyID string) (models.RepositoryInfo, error) {
	// The fake's home has every repository; Check's error stands for
	// anything wrong with it.
	return models.RepositoryInfo{Home: "fake:" + companyID, Ref: companyID + ".git", Exists: true, FirstCommit: "c0"}, nil
}
func (f fakeRepos) Check(ctx context.Context, _ string) error {
	return f.check(ctx, models.ResourceRepository)
}

type fakeDatabases struct{ *fakeResources }

func (f fakeDatabases) Ensure(_ context.Context, companyID string) (string, error) {
	return f.result(models.ResourceDatabase, "db_"+companyID)
}
func (f fakeDatabases) Check(ctx context.Context, _ string) error {
	return f.check(ctx, models.ResourceDatabase)
}

type fakeHosting struct{ *fakeResources }

func (f fakeHosting) Ensure(_ context.Context, _, handle string) (string, error) {
	return f.result(models.ResourceHosting, "http://sites.test/"+handle+"/")
}
func (f fakeHosting) Check(ctx context.Context, _, _ string) error {
	return f.check(ctx, models.ResourceHosting)
}
func (f fakeHosting) PublishHead(context.Context, string) error {
	f.deploys++
	return nil
}

type provisioningFixture struct {
	store *store.Store
	fake  *fakeResources
	prov  *activities.Provisioning
	env   *testsuite.TestActivityEnvironment
	co    models.Company
}

func newProvisioningFixture(t *testing.T) *provisioningFixture {
	t.Helper()
	ctx := context.Background()
	st := testenv.NewStore(t)
	_, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	co, err := st.Companies().CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: "shop"})
	require.NoError(t, err)
	fake := &fakeResources{ensureErr: map[models.ResourceKind]error{}, checkErr: map[models.ResourceKind]error{}, block: map[models.ResourceKind]bool{}, made: map[string]bool{}}
	prov := &activities.Provisioning{Store: st, Repositories: fakeRepos{fake}, Databases: fakeDatabases{fake}, Hosting: fakeHosting{fake}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(prov)
	return &provisioningFixture{store: st, fake: fake, prov: prov, env: env, co: co}
}

func (f *provisioningFixture) row(t *testing.T, kind models.ResourceKind) models.CompanyResource {
	t.Helper()
	rows, err := f.store.Companies().ListResources(context.Background(), systemScope(t, f.store, f.co.ID))
	require.NoError(t, err)
	for _, r := range rows {
		if r.Kind == kind {
			return r
		}
	}
	t.Fatalf("no %s row", kind)
	return models.CompanyResource{}
}

func TestProvisionResourceRecordsReady(t *testing.T) {
	f := newProvisioningFixture(t)
	for _, kind := range models.ResourceKinds {
		v, err := f.env.ExecuteActivity(f.prov.ProvisionResource, contract.ResourceInput{CompanyID: f.co.ID, Kind: kind, SeedRepo: true})
		require.NoError(t, err, kind)
		var res contract.ResourceResult
		require.NoError(t, v.Get(&res))
		row := f.row(t, kind)
		assert.Equal(t, models.ResourceReady, row.Status, kind)
		assert.Equal(t, res.Ref, row.Ref, kind)
		assert.Empty(t, row.LastError, kind)
		assert.Equal(t, 1, row.Attempts, kind)
	}
	assert.Equal(t, "http://sites.test/shop/", f.row(t, models.ResourceHosting).Ref)
	assert.Equal(t, []bool{true}, f.fake.seeds)
	assert.Equal(t, 1, f.fake.deploys, "the repository step deploys main to the site (when published)")
}

// A provider failure is recorded on the row with its text and returned, so
// the workflow's retry policy retries it; the next attempt counts.
func TestProvisionResourceRecordsFailure(t *testing.T) {
	f := newProvisioningFixture(t)
	f.fake.ensureErr[models.ResourceDatabase] = errors.New("connection refused")
	_, err := f.env.ExecuteActivity(f.prov.ProvisionResource, contract.ResourceInput{CompanyID: f.co.ID, Kind: models.ResourceDatabase})
	require.ErrorContains(t, err, "provision database: connection refused")
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.False(t, appErr.NonRetryable(), "a provider failure is retried")
	row := f.row(t, models.ResourceDatabase)
	assert.Equal(t, models.ResourceFailed, row.Status)
	assert.Equal(t, "connection refused", row.LastError)

	delete(f.fake.ensureErr, models.ResourceDatabase)
	_, err = f.env.ExecuteActivity(f.prov.ProvisionResource, contract.ResourceInput{CompanyID: f.co.ID, Kind: models.ResourceDatabase})
	require.NoError(t, err)
	row = f.row(t, models.ResourceDatabase)
	assert.Equal(t, models.ResourceReady, row.Status)
	assert.Empty(t, row.LastError, "a success clears the error")
	assert.Equal(t, 2, row.Attempts)
}

// A missing or archived company stops provisioning: the error is not
// retried and no row is written.
func TestProvisionResourceOfAGoneCompany(t *testing.T) {
	f := newProvisioningFixture(t)
	_, err := f.store.Companies().ArchiveCompany(context.Background(), systemScope(t, f.store, f.co.ID), time.Now())
	require.NoError(t, err)
	for _, id := range []string{f.co.ID, "00000000-0000-4000-8000-000000000000"} {
		_, err := f.env.ExecuteActivity(f.prov.ProvisionResource, contract.ResourceInput{CompanyID: id, Kind: models.ResourceRepository})
		var appErr *temporal.ApplicationError
		require.ErrorAs(t, err, &appErr, id)
		assert.Equal(t, contract.ErrCompanyGone, appErr.Type(), id)
		assert.True(t, appErr.NonRetryable(), id)
	}
	rows, err := f.store.Companies().ListResources(context.Background(), systemScope(t, f.store, f.co.ID))
	require.NoError(t, err)
	assert.Empty(t, rows)
}

// EnsureOIDCClient creates the company's client once and keeps it.
func TestEnsureOIDCClientKeepsTheClient(t *testing.T) {
	f := newProvisioningFixture(t)
	var ids []string
	for range 2 {
		v, err := f.env.ExecuteActivity(f.prov.EnsureOIDCClient, f.co.ID)
		require.NoError(t, err)
		var id string
		require.NoError(t, v.Get(&id))
		ids = append(ids, id)
	}
	assert.Regexp(t, `^co_[0-9a-f]{24}$`, ids[0])
	assert.Equal(t, ids[0], ids[1])
}

// CheckCompanyResources reports each failed check by kind; healthy
// resources have no entry, and a hanging check is cut off by its bound.
func TestCheckCompanyResourcesReportsProblems(t *testing.T) {
	f := newProvisioningFixture(t)
	f.fake.checkErr[models.ResourceRepository] = errors.New("repository not found")
	in := contract.CompanyCheck{CompanyID: f.co.ID, Handle: f.co.Handle, Kinds: models.ResourceKinds}
	v, err := f.env.ExecuteActivity(f.prov.CheckCompanyResources, in)
	require.NoError(t, err)
	var res contract.CompanyCheckResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, f.co.ID, res.CompanyID)
	assert.Equal(t, map[models.ResourceKind]string{models.ResourceRepository: "repository not found"}, res.Problems)

	delete(f.fake.checkErr, models.ResourceRepository)
	v, err = f.env.ExecuteActivity(f.prov.CheckCompanyResources, in)
	require.NoError(t, err)
	var healthy contract.CompanyCheckResult
	require.NoError(t, v.Get(&healthy))
	assert.Empty(t, healthy.Problems, "all healthy")
}

func TestCheckCompanyResourcesBoundsEachCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the check timeout")
	}
	f := newProvisioningFixture(t)
	f.fake.block[models.ResourceHosting] = true
	// The hosting check blocks forever: that the activity returns at all,
	// naming the deadline, is the bound.
	v, err := f.env.ExecuteActivity(f.prov.CheckCompanyResources, contract.CompanyCheck{CompanyID: f.co.ID, Handle: f.co.Handle, Kinds: models.ResourceKinds})
	require.NoError(t, err)
	var res contract.CompanyCheckResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, map[models.ResourceKind]string{models.ResourceHosting: context.DeadlineExceeded.Error()}, res.Problems)
}

// systemScope is the worker's scope of a company, for tests that read or
// write its rows directly.
func systemScope(t testing.TB, s *store.Store, companyID string) store.CompanyScope {
	t.Helper()
	sc, err := s.SystemCompanyScope(context.Background(), companyID)
	require.NoError(t, err)
	return sc
}

// A run started with seeding that retries the repository after the company
// was resumed as an import (POST /provision {"seed_repo": false} signalling
// the parked run) does not seed: the company's record wins.
func TestProvisionResourceNeverSeedsAnImport(t *testing.T) {
	f := newProvisioningFixture(t)
	require.NoError(t, f.store.Companies().RecordImportResume(context.Background(), systemScope(t, f.store, f.co.ID), time.Now()))
	_, err := f.env.ExecuteActivity(f.prov.ProvisionResource, contract.ResourceInput{CompanyID: f.co.ID, Kind: models.ResourceRepository, SeedRepo: true})
	require.NoError(t, err)
	assert.Equal(t, []bool{false}, f.fake.seeds)
}

// recordedSchedules records the schedules EnsureSchedule asks for.
type recordedSchedules struct{ made []string }

func (r *recordedSchedules) Ensure(_ context.Context, companyID, _ string, paused bool) error {
	r.made = append(r.made, fmt.Sprintf("%s paused=%v", companyID, paused))
	return nil
}

// A company provisioned while paused gets no schedule (activating it makes
// one); an active one gets a running schedule.
func TestEnsureScheduleSkipsAPausedCompany(t *testing.T) {
	f := newProvisioningFixture(t)
	rec := &recordedSchedules{}
	f.prov.Schedules = rec
	ctx := context.Background()
	scope := systemScope(t, f.store, f.co.ID)

	c := f.co
	c.Status = models.CompanyPaused
	require.NoError(t, f.store.Companies().UpdateCompanyFields(ctx, scope, c))
	_, err := f.env.ExecuteActivity(f.prov.EnsureSchedule, f.co.ID)
	require.NoError(t, err)
	assert.Empty(t, rec.made, "no schedule for a paused company")

	c.Status = models.CompanyActive
	require.NoError(t, f.store.Companies().UpdateCompanyFields(ctx, scope, c))
	_, err = f.env.ExecuteActivity(f.prov.EnsureSchedule, f.co.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{f.co.ID + " paused=false"}, rec.made)
}
