package app_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/config"
	"holdco/service/usecases"
	"holdco/testenv"
)

// startRoles starts one process of the given roles and stops it when the
// test ends.
func startRoles(t *testing.T, cfg config.Config, roles ...app.Role) *app.App {
	t.Helper()
	a := runApp(t, cfg, roles...)
	return a
}

// TestRolesInSeparateProcesses runs a scaled-out deployment's processes
// against one database and one Temporal: a company created through the
// api process is provisioned by the worker process and its site is served
// by the sites process, and the api process keeps nothing on its disk.
func TestRolesInSeparateProcesses(t *testing.T) {
	t.Parallel()
	temporal := testenv.NewTemporal(t, nil)
	shared, apiDir := t.TempDir(), t.TempDir()
	env := map[string]string{
		// One database for every process; the api's data dir is its own.
		"DATABASE_URL":       filepath.Join(shared, "holdco.db"),
		"TEMPORAL_ADDRESS":   temporal.Server.GetFrontendHostPort(),
		"TEMPORAL_NAMESPACE": temporal.Namespace,
		// Fixed ports: the worker tells sites the API's and their own address.
		"HOLDCO_API_ADDR":   "127.0.0.1:" + strconv.Itoa(freePort(t)),
		"HOLDCO_SITES_ADDR": "127.0.0.1:" + strconv.Itoa(freePort(t)),
	}
	// The api's data dir is not shared: it opens no repositories or
	// company databases of its own (the worker's are elsewhere).
	apiEnv := map[string]string{"HOLDCO_DATA_DIR": apiDir, "HOLDCO_SHARED_DATA_DIR": "false"}
	for k, v := range env {
		apiEnv[k] = v
	}

	apiProc := startRoles(t, embeddedConfig(t, apiDir, apiEnv), app.RoleAPI)
	assert.Empty(t, apiProc.SitesAddr()+apiProc.MCPAddr()+apiProc.OAuthAddr(), "only the api listener")
	worker := startRoles(t, embeddedConfig(t, shared, env), app.RoleWorker)
	assert.Empty(t, worker.APIAddr()+worker.SitesAddr()+worker.MCPAddr()+worker.OAuthAddr(), "a worker serves nothing")
	sites := startRoles(t, embeddedConfig(t, shared, env), app.RoleSites)
	assert.Nil(t, sites.Temporal, "the sites role does not use Temporal")
	assert.Empty(t, sites.APIAddr())

	base := "http://" + apiProc.APIAddr()
	key := cliLogin(t, base, "ada@example.com")
	me := authedJSON(t, "GET", base+"/auth/me", key, "", 200)
	co := authedJSON(t, "POST", base+"/conglomerates/"+me["conglomerate_id"].(string)+"/companies", key, `{"name":"Ada Shop","idea":"Sell maps"}`, 201)
	resources := func() map[string]any {
		return authedJSON(t, "GET", base+"/companies/"+co["id"].(string)+"/resources", key, "", 200)
	}
	require.Eventually(t, func() bool { return resources()["ready"] == true }, 60*time.Second, 200*time.Millisecond, "the worker process provisions")

	site := ""
	for _, r := range resources()["resources"].([]any) {
		if r := r.(map[string]any); r["kind"] == "hosting" {
			site = r["ref"].(string)
		}
	}
	require.Equal(t, "http://"+sites.SitesAddr()+"/"+co["handle"].(string)+"/", site)
	resp, err := http.Get(site)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), "Ada Shop", "the sites process serves the site the worker published")

	entries, err := os.ReadDir(apiDir)
	require.NoError(t, err)
	assert.Empty(t, entries, "an api process writes nothing to its data dir (no repositories, sites or company databases)")
}

// TestReservedListenersAnswerHealth: the mcp and oauth listeners exist
// before their adapters; they answer /health like the API and a JSON
// not_found otherwise.
func TestReservedListenersAnswerHealth(t *testing.T) {
	t.Parallel()
	temporal := testenv.NewTemporal(t, nil)
	cfg := embeddedConfig(t, t.TempDir(), map[string]string{
		"TEMPORAL_ADDRESS": temporal.Server.GetFrontendHostPort(), "TEMPORAL_NAMESPACE": temporal.Namespace})
	a := startRoles(t, cfg, app.RoleMCP, app.RoleOAuth)
	require.NotEmpty(t, a.MCPAddr())
	require.NotEmpty(t, a.OAuthAddr())
	assert.Empty(t, a.APIAddr())

	status, health := getJSON(t, "http://"+a.MCPAddr()+"/health")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, map[string]any{"status": "ok", "version": health["version"], "database": "ok", "temporal": "ok"}, health)
	assert.NotEmpty(t, health["version"])
	status, health = getJSON(t, "http://"+a.OAuthAddr()+"/health")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok", health["database"])

	// The authorization server serves its metadata on its own listener.
	status, meta := getJSON(t, "http://"+a.OAuthAddr()+"/.well-known/oauth-authorization-server")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "http://"+a.OAuthAddr(), meta["issuer"])

	for _, u := range []string{"http://" + a.MCPAddr() + "/mcp", "http://" + a.OAuthAddr() + "/nowhere"} {
		status, body := getJSON(t, u)
		assert.Equal(t, http.StatusNotFound, status, u)
		assert.Equal(t, "not_found", body["error"], u)
		assert.NotEmpty(t, body["detail"], u)
	}
}

// TestEachRoleBuildsOnlyItsUseCases: a process builds the use cases its
// roles serve and the clients those call, no others. An authorization
// server signs users in and issues tokens with no domain built (no agent
// turns, growth, billing or tools) and no Temporal client; a sites
// process builds no use case.
func TestEachRoleBuildsOnlyItsUseCases(t *testing.T) {
	t.Parallel()
	cfg := embeddedConfig(t, t.TempDir(), nil)

	auth := startRoles(t, cfg, app.RoleOAuth)
	svc := auth.Service
	require.NotNil(t, svc)
	assert.Equal(t, usecases.SignIn, svc.Parts)
	assert.NotNil(t, svc.Identity)
	assert.NotNil(t, svc.OAuth)
	assert.Nil(t, svc.Turns, "no agent turns")
	assert.Nil(t, svc.Growth, "no domains or ads")
	assert.Nil(t, svc.Billing, "no billing, so no payment client")
	assert.Nil(t, svc.Tools, "no agent tools")
	assert.Nil(t, svc.Files, "no files, so no blob store")
	assert.Nil(t, auth.Temporal, "no Temporal client")
	status, meta := getJSON(t, "http://"+auth.OAuthAddr()+"/.well-known/oauth-authorization-server")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "http://"+auth.OAuthAddr(), meta["issuer"], "it serves with sign-in alone")

	sites := startRoles(t, cfg, app.RoleSites)
	assert.Nil(t, sites.Service, "a sites process builds no use case")
	assert.Nil(t, sites.Temporal)
}

func TestParseRoles(t *testing.T) {
	t.Parallel()
	_, err := app.ParseRoles("api,bogus")
	require.ErrorContains(t, err, `unknown role "bogus" (valid: api, mcp, oauth, sites, worker)`)
	_, err = app.ParseRoles(" , ")
	require.ErrorContains(t, err, "name at least one of api, mcp, oauth, sites, worker")
	roles, err := app.ParseRoles(" worker , api,api")
	require.NoError(t, err)
	assert.Equal(t, []app.Role{app.RoleWorker, app.RoleAPI}, roles)
	roles, err = app.ParseRoles("api,mcp,oauth,sites")
	require.NoError(t, err)
	assert.Equal(t, []app.Role{app.RoleAPI, app.RoleMCP, app.RoleOAuth, app.RoleSites}, roles)
}
