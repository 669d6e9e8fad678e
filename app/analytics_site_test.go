package app_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/models"
	"holdco/providers/gitrepo"
	"holdco/service"
	"holdco/service/companies"
	"holdco/testenv"
)

// TestLoaderCountsAVisitOnAHoldcoSiteInChromium: the loader on the
// company's own holdco-hosted page (sandboxed by the sites listener into
// an opaque origin, where localStorage and document.cookie throw) records
// the page view and an in-page navigation, with one visitor id kept in
// memory.
func TestLoaderCountsAVisitOnAHoldcoSiteInChromium(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	testenv.NodeScripts(t, "analytics")
	ctx := t.Context()
	dir := t.TempDir()
	a := runApp(t, embeddedConfig(t, dir, nil), app.RoleAPI, app.RoleSites)
	api, sites := "http://"+a.APIAddr(), "http://"+a.SitesAddr()

	user, cong, err := a.Store.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "site@example.com", NormalizedEmail: "site@example.com", Name: "Site"}, "Site")
	require.NoError(t, err)
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialWebSession, CredentialID: "s1", UserID: user.ID, ConglomerateID: cong.ID})
	co, err := a.Service.Companies.CreateCompany(as, cong.ID, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	key, err := a.Service.Analytics.Key(as, co.ID)
	require.NoError(t, err)

	// The company's site, as its agents would publish it: index.html on
	// main with the loader.
	repos, err := gitrepo.New(filepath.Join(dir, "repos"))
	require.NoError(t, err)
	_, err = repos.Ensure(ctx, co.ID, "Shop", "a shop", false)
	require.NoError(t, err)
	page := fmt.Sprintf(`<!doctype html><html><head><title>Shop</title><script async src="%s/analytics/v1.js?c=%s"></script></head><body>hi</body></html>`, api, key)
	_, err = repos.Commit(ctx, co.ID, []gitrepo.Change{{Path: "index.html", Content: []byte(page)}}, "site", "agent")
	require.NoError(t, err)
	siteURL, err := siteHost(t, a.Store, dir, sites, repos).Ensure(ctx, co.ID, co.Handle)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(siteURL, sites+"/"), siteURL)

	out := node(t, "analytics", nil, "site.mjs", browser, siteURL+"?utm_source=ads", api+"/analytics/e/")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var res struct {
		IDs             []string `json:"ids"`
		Statuses        []int    `json:"statuses"`
		Errors          []string `json:"errors"`
		SandboxedOrigin string   `json:"sandboxed_origin"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &res), out)
	assert.Equal(t, "null", res.SandboxedOrigin, "the site page runs sandboxed")
	assert.Empty(t, res.Errors, "the loader throws nothing on a sandboxed page")
	require.Len(t, res.IDs, 2)
	assert.NotEmpty(t, res.IDs[0])
	assert.Equal(t, res.IDs[0], res.IDs[1], "one visitor id, kept in memory")

	require.Eventually(t, func() bool {
		sum, err := a.Service.Analytics.Summary(as, co.ID, "1d")
		require.NoError(t, err)
		return sum.Pageviews.Value >= 2
	}, 30*time.Second, 50*time.Millisecond, "the site's page views in the summary")
	sum, err := a.Service.Analytics.Summary(as, co.ID, "1d")
	require.NoError(t, err)
	assert.Equal(t, float64(1), sum.Visitors.Value)
}
