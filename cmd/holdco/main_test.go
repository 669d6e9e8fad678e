package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/identity"
	"holdco/store"
)

func TestAdminCreateToken(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOLDCO_DATA_DIR": dir}
	getenv := func(k string) string { return env[k] }
	var out, errOut bytes.Buffer
	require.NoError(t, admin(context.Background(), []string{"create-token", "--name", "ops"}, getenv, &out, &errOut))
	raw := strings.TrimSpace(out.String())
	assert.True(t, strings.HasPrefix(raw, "svc_a_v1_"))

	s, err := store.Open(context.Background(), filepath.Join(dir, "holdco.db"), nil)
	require.NoError(t, err)
	defer s.Close()
	core, err := service.NewCore(context.Background(), service.Config{PublicURL: "http://localhost:8080"}, s, nil, nil)
	require.NoError(t, err)
	svc := identity.New(core, nil, nil, nil)
	p, err := svc.Authenticate(context.Background(), raw)
	require.NoError(t, err)
	assert.True(t, p.IsAdmin())

	err = admin(context.Background(), []string{"create-token"}, getenv, &out, &errOut)
	assert.ErrorContains(t, err, "name")
}

func TestBadConfigurationNamesTheSetting(t *testing.T) {
	var errOut bytes.Buffer
	env := map[string]string{"DATABASE_URL": "postgres://u:secret@[::1/db"}
	err := run(context.Background(), []string{"serve"}, func(k string) string { return env[k] }, &errOut)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "DATABASE_URL: "), err.Error())
	assert.NotContains(t, err.Error(), "secret")

	err = run(context.Background(), []string{"serve", "--roles", "web"}, func(string) string { return "" }, &errOut)
	assert.ErrorContains(t, err, `unknown role "web"`)
	assert.ErrorContains(t, err, "valid: api, mcp, oauth, sites, worker")
	err = run(context.Background(), []string{"bogus"}, func(string) string { return "" }, &errOut)
	assert.ErrorContains(t, err, "unknown command")
}

func TestAdminUserAuthEnable(t *testing.T) {
	env := map[string]string{"HOLDCO_DATA_DIR": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	var out, errOut bytes.Buffer
	err := admin(context.Background(), []string{"user-auth", "enable", "00000000-0000-4000-8000-000000000000"}, getenv, &out, &errOut)
	assert.ErrorContains(t, err, "not_found", "no client to enable")
	err = admin(context.Background(), []string{"user-auth", "disable"}, getenv, &out, &errOut)
	assert.ErrorContains(t, err, "usage")
}

func TestAdminGrantCredits(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOLDCO_DATA_DIR": dir}
	getenv := func(k string) string { return env[k] }
	var out, errOut bytes.Buffer
	err := admin(context.Background(), []string{"grant-credits", "--conglomerate", "nope", "--credits", "5"}, getenv, &out, &errOut)
	assert.ErrorContains(t, err, "conglomerate id")
	err = admin(context.Background(), []string{"grant-credits", "--conglomerate", "00000000-0000-4000-8000-000000000000", "--credits", "5"}, getenv, &out, &errOut)
	assert.ErrorContains(t, err, "conglomerate 00000000-0000-4000-8000-000000000000")

	s, err := store.Open(context.Background(), filepath.Join(dir, "holdco.db"), nil)
	require.NoError(t, err)
	_, c, err := s.Identity().CreateUserWithConglomerate(context.Background(), models.User{Email: "ops@example.com", Name: "ops", Subject: new("ops")}, "Ops")
	require.NoError(t, err)
	s.Close()
	require.NoError(t, admin(context.Background(), []string{"grant-credits", "--conglomerate", c.ID, "--credits", "25"}, getenv, &out, &errOut))
	assert.Equal(t, "balance 25\n", out.String())
}

// An operator's grant wakes the account's ad campaigns waiting for credits:
// they are marked for the worker's growth sweeper, which signals their
// reconcilers (before, they waited for the next UTC midnight).
func TestAdminGrantCreditsWakesStalledAds(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"HOLDCO_DATA_DIR": dir}
	getenv := func(k string) string { return env[k] }
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(dir, "holdco.db"), nil)
	require.NoError(t, err)
	require.NoError(t, s.Migrate(ctx))
	_, c, err := s.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ads@example.com", Name: "ads", Subject: new("ads")}, "Ads")
	require.NoError(t, err)
	co, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Ad Shop", Handle: "ad-shop-cli"})
	require.NoError(t, err)
	scope, err := s.SystemCompanyScope(ctx, co.ID)
	require.NoError(t, err)
	_, err = s.Growth().UpdateAdCampaign(ctx, scope, func(a *models.AdCampaign) ([]models.ActivityInput, error) {
		a.DailyCap, a.State = 5, models.AdInsufficientCredits
		return nil, nil
	})
	require.NoError(t, err)
	s.Close()

	var out, errOut bytes.Buffer
	require.NoError(t, admin(ctx, []string{"grant-credits", "--conglomerate", c.ID, "--credits", "25"}, getenv, &out, &errOut))
	s, err = store.Open(ctx, filepath.Join(dir, "holdco.db"), nil)
	require.NoError(t, err)
	defer s.Close()
	pending, err := s.Growth().PendingAdReconciles(ctx, time.Now().Add(time.Hour), 10)
	require.NoError(t, err)
	require.Len(t, pending, 1, "marked for the sweeper")
	assert.Equal(t, co.ID, pending[0].Campaign.CompanyID)
}
