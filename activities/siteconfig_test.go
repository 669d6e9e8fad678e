package activities_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"holdco/activities"
	"holdco/models"
	"holdco/providers/blob/local"
	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
	"holdco/store"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// keys is the live key per company; missing means none minted yet.
type keys map[string]string

func (k keys) LiveCompanyKey(_ context.Context, c store.CompanyScope) (string, error) {
	if v, ok := k[c.ID()]; ok {
		return v, nil
	}
	return "", models.ErrNotFound
}

func TestWriteSiteConfigReplacesTheKey(t *testing.T) {
	ctx := context.Background()
	st := testenv.NewStore(t)
	_, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	co, err := st.Companies().CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: "shop"})
	require.NoError(t, err)
	// The site as one worker published it; another worker, without the
	// repository, writes its configuration: only the database is shared.
	repos, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	_, err = repos.Ensure(ctx, co.ID, "Shop", "x", true)
	require.NoError(t, err)
	blobs := newBlobs(t)
	_, err = newHost(t, st, blobs, repos).Ensure(ctx, co.ID, co.Handle)
	require.NoError(t, err)
	host := newHost(t, st, blobs, nil)

	k := keys{}
	sc := &activities.SiteConfig{Store: st, Keys: k, Hosting: host, APIURL: "http://api.test"}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(sc)
	write := func() map[string]string {
		_, err := env.ExecuteActivity(sc.WriteSiteConfig, contract.SiteConfigInput{CompanyID: co.ID})
		require.NoError(t, err)
		got, err := host.Env(ctx, co.ID)
		require.NoError(t, err)
		return got
	}
	assert.Equal(t, map[string]string{"HOLDCO_API_URL": "http://api.test"}, write(), "no key minted yet")
	k[co.ID] = "svc_c_v1_old"
	assert.Equal(t, "svc_c_v1_old", write()["HOLDCO_API_KEY"])
	k[co.ID] = "svc_c_v1_new"
	assert.Equal(t, map[string]string{"HOLDCO_API_URL": "http://api.test", "HOLDCO_API_KEY": "svc_c_v1_new"}, write())

	_, err = env.ExecuteActivity(sc.WriteSiteConfig, contract.SiteConfigInput{CompanyID: "00000000-0000-4000-8000-000000000000"})
	require.NoError(t, err, "a missing company is not an error")
}

// newBlobs is a local blob store under a temporary directory.
func newBlobs(t *testing.T) *local.Store {
	t.Helper()
	b, err := local.New(t.TempDir(), bytes.Repeat([]byte("k"), 32), "http://sites.test")
	require.NoError(t, err)
	return b
}

// newHost is a hosting adapter on the store and blobs; src nil deploys
// nothing (a process without the repositories).
func newHost(t *testing.T, st *store.Store, blobs statichost.Blobs, src statichost.Source) *statichost.Host {
	t.Helper()
	o := statichost.Options{BaseURL: "http://sites.test", Records: st.Sites(), Blobs: blobs, EnvKey: bytes.Repeat([]byte("e"), 32)}
	if src != nil {
		o.Source = src
	}
	h, err := statichost.New(o)
	require.NoError(t, err)
	return h
}
