package companies_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/activities"
	"holdco/models"
	"holdco/service/companies"
	"holdco/service/servicetest"
)

func TestDisableUserAuthSurvivesProvisioningAndArchive(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	c, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	prov := &activities.Provisioning{Store: e.Store}
	clientID, err := prov.EnsureOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	again, err := prov.EnsureOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	assert.Equal(t, clientID, again, "one client per company")

	raw, err := e.Svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	admin := e.As(t, raw)
	_, err = e.Svc.DisableUserAuth(ada, c.ID, "abuse report")
	assert.True(t, models.IsCode(err, models.CodeForbidden), "operators only")
	_, err = e.Svc.DisableUserAuth(admin, c.ID, "no")
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.Svc.DisableUserAuth(admin, "00000000-0000-4000-8000-000000000000", "abuse report")
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	got, err := e.Svc.DisableUserAuth(admin, c.ID, "abuse report")
	require.NoError(t, err)
	require.NotNil(t, got.RevokedAt)
	assert.Equal(t, clientID, got.ClientID)
	assert.Equal(t, "abuse report", got.RevokedReason)
	assert.Equal(t, cong, got.RevokedConglomerateID)

	// Provisioning again keeps the revocation; archiving keeps the row.
	_, err = prov.EnsureOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	require.NoError(t, e.Svc.ArchiveCompany(ada, c.ID))
	row, err := e.Store.OAuth().GetCompanyOIDCClient(context.Background(), systemScope(t, e.Store, c.ID))
	require.NoError(t, err)
	require.NotNil(t, row.RevokedAt)
	assert.Equal(t, "abuse report", row.RevokedReason)

	// Only the operator's enable clears it.
	require.NoError(t, e.Store.OAuth().EnableCompanyOIDCClient(context.Background(), e.Store.SystemAdminScope(), c.ID))
	row, _ = e.Store.OAuth().GetCompanyOIDCClient(context.Background(), systemScope(t, e.Store, c.ID))
	assert.Nil(t, row.RevokedAt)
}

func TestDisableBeforeProvisioningLeavesARevokedClient(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	c, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	raw, err := e.Svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	_, err = e.Svc.DisableUserAuth(e.As(t, raw), c.ID, "fraud")
	require.NoError(t, err)
	_, err = (&activities.Provisioning{Store: e.Store}).EnsureOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	row, err := e.Store.OAuth().GetCompanyOIDCClient(context.Background(), systemScope(t, e.Store, c.ID))
	require.NoError(t, err)
	assert.NotNil(t, row.RevokedAt, "provisioning after a disable finds the client revoked")
}
