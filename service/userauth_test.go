package service_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/activities"
	"holdco/models"
	"holdco/service"
)

func TestDisableUserAuthSurvivesProvisioningAndArchive(t *testing.T) {
	e := newEnv(t)
	ada, cong := e.user(t, "ada@example.com")
	c, err := e.svc.CreateCompany(ada, cong, service.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	prov := &activities.Provisioning{Store: e.store}
	clientID, err := prov.EnsureOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	again, err := prov.EnsureOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	assert.Equal(t, clientID, again, "one client per company")

	raw, err := e.svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	admin := e.as(t, raw)
	_, err = e.svc.DisableUserAuth(ada, c.ID, "abuse report")
	assert.True(t, models.IsCode(err, models.CodeForbidden), "operators only")
	_, err = e.svc.DisableUserAuth(admin, c.ID, "no")
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.svc.DisableUserAuth(admin, "00000000-0000-4000-8000-000000000000", "abuse report")
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	got, err := e.svc.DisableUserAuth(admin, c.ID, "abuse report")
	require.NoError(t, err)
	require.NotNil(t, got.RevokedAt)
	assert.Equal(t, clientID, got.ClientID)
	assert.Equal(t, "abuse report", got.RevokedReason)
	assert.Equal(t, cong, got.RevokedConglomerateID)

	// Provisioning again keeps the revocation; archiving keeps the row.
	_, err = prov.EnsureOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	require.NoError(t, e.svc.ArchiveCompany(ada, c.ID))
	row, err := e.store.GetCompanyOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	require.NotNil(t, row.RevokedAt)
	assert.Equal(t, "abuse report", row.RevokedReason)

	// Only the operator's enable clears it.
	require.NoError(t, e.store.EnableCompanyOIDCClient(context.Background(), c.ID))
	row, _ = e.store.GetCompanyOIDCClient(context.Background(), c.ID)
	assert.Nil(t, row.RevokedAt)
}

func TestDisableBeforeProvisioningLeavesARevokedClient(t *testing.T) {
	e := newEnv(t)
	ada, cong := e.user(t, "ada@example.com")
	c, err := e.svc.CreateCompany(ada, cong, service.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	raw, err := e.svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	_, err = e.svc.DisableUserAuth(e.as(t, raw), c.ID, "fraud")
	require.NoError(t, err)
	_, err = (&activities.Provisioning{Store: e.store}).EnsureOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	row, err := e.store.GetCompanyOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	assert.NotNil(t, row.RevokedAt, "provisioning after a disable finds the client revoked")
}
