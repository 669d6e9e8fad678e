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

func TestEnableUserAuthUndoesTheRevocation(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	c, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	raw, err := e.Svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	admin := e.As(t, raw)

	_, err = e.Svc.EnableUserAuth(admin, c.ID)
	assert.True(t, models.IsCode(err, models.CodeNotFound), "no client yet: %v", err)
	clientID, err := (&activities.Provisioning{Store: e.Store}).EnsureOIDCClient(context.Background(), c.ID)
	require.NoError(t, err)
	_, err = e.Svc.DisableUserAuth(admin, c.ID, "abuse report")
	require.NoError(t, err)

	_, err = e.Svc.EnableUserAuth(ada, c.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden), "operators only")
	got, err := e.Svc.EnableUserAuth(admin, c.ID)
	require.NoError(t, err)
	assert.Equal(t, clientID, got.ClientID)
	assert.Nil(t, got.RevokedAt)
	assert.Empty(t, got.RevokedReason)
}

func TestDiagnoseCompanyIsOneCompanysHealth(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	c, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	raw, err := e.Svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	admin := e.As(t, raw)

	_, err = e.Svc.DiagnoseCompany(ada, c.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.DiagnoseCompany(admin, "00000000-0000-4000-8000-000000000000")
	assert.True(t, models.IsCode(err, models.CodeNotFound))
	d, err := e.Svc.DiagnoseCompany(admin, c.ID)
	require.NoError(t, err)
	assert.Equal(t, c.ID, d.CompanyID)
	assert.Equal(t, c.Handle, d.Handle)
	all, err := e.Svc.DiagnoseCompanies(admin)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, all[0], d, "the same diagnosis as the list's")
}
