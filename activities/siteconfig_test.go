package activities_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"holdco/activities"
	"holdco/models"
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
	_, cong, err := st.CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	co, err := st.CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: "shop"})
	require.NoError(t, err)
	host, err := statichost.New(filepath.Join(t.TempDir(), "sites"), "http://sites.test", nil)
	require.NoError(t, err)
	_, err = host.Ensure(ctx, co.ID, co.Handle)
	require.NoError(t, err)

	k := keys{}
	sc := &activities.SiteConfig{Store: st, Keys: k, Hosting: host, APIURL: "http://api.test"}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(sc)
	write := func() map[string]string {
		_, err := env.ExecuteActivity(sc.WriteSiteConfig, contract.SiteConfigInput{CompanyID: co.ID})
		require.NoError(t, err)
		got, err := host.Env(co.Handle)
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
