package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/testenv"
)

func TestSaveResourceCountsAttempts(t *testing.T) {
	ctx := context.Background()
	s := testenv.NewStore(t)
	_, cong := signUp(t, s, "ada")
	c, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: handle("shop")})
	require.NoError(t, err)
	save := func(st models.ResourceStatus, ref, msg string) {
		require.NoError(t, s.Companies().SaveResource(ctx, systemScope(t, s, c.ID), models.CompanyResource{Kind: models.ResourceDatabase, Status: st, Ref: ref, LastError: msg}))
	}
	save(models.ResourceProvisioning, "", "")
	save(models.ResourceFailed, "", "connection refused")
	save(models.ResourceProvisioning, "", "")
	save(models.ResourceReady, "db-1", "")
	rs, err := s.Companies().ListResources(ctx, systemScope(t, s, c.ID))
	require.NoError(t, err)
	require.Len(t, rs, 1)
	assert.Equal(t, models.ResourceReady, rs[0].Status)
	assert.Equal(t, "db-1", rs[0].Ref)
	assert.Empty(t, rs[0].LastError)
	assert.Equal(t, 2, rs[0].Attempts)

	live, err := s.Companies().ListLiveCompanies(ctx, s.SystemAdminScope())
	require.NoError(t, err)
	assert.NotEmpty(t, live)
}
