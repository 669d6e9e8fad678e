package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/providers/githubrepo/githubtest"
	"holdco/service"
	"holdco/testenv"
)

// clusterEnv is a cluster's shared settings: one database, one Temporal,
// an S3-protocol blob store and a git host. No process shares a data
// directory with another and none says it does.
func clusterEnv(t *testing.T) (map[string]string, *githubtest.Server) {
	t.Helper()
	temporal := testenv.NewTemporal(t, nil)
	backend := s3mem.New()
	s3 := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(s3.Close)
	require.NoError(t, backend.CreateBucket("holdco"))
	gh := githubtest.New(t, "acme", "ghp_test")
	db := testenv.DatabaseURL(t)
	if db == "" {
		db = filepath.Join(t.TempDir(), "holdco.db") // SQLite: one file all processes open
	}
	sites := "127.0.0.1:" + strconv.Itoa(freePort(t))
	return map[string]string{
		"DATABASE_URL": db, "TEMPORAL_ADDRESS": temporal.Server.GetFrontendHostPort(), "TEMPORAL_NAMESPACE": temporal.Namespace,
		"HOLDCO_BLOB_BACKEND": "s3", "HOLDCO_BLOB_S3_BUCKET": "holdco", "HOLDCO_BLOB_S3_REGION": "us-east-1",
		"HOLDCO_BLOB_S3_ENDPOINT": s3.URL, "HOLDCO_BLOB_S3_PATH_STYLE": "true",
		"HOLDCO_BLOB_S3_ACCESS_KEY_ID": "test", "HOLDCO_BLOB_S3_SECRET_ACCESS_KEY": "test-secret",
		"HOLDCO_REPO_BACKEND": "github", "HOLDCO_GITHUB_OWNER": "acme", "HOLDCO_GITHUB_TOKEN": "ghp_test", "HOLDCO_GITHUB_API_URL": gh.URL,
		"HOLDCO_SHARED_DATA_DIR": "false",
		"HOLDCO_API_ADDR":        "127.0.0.1:" + strconv.Itoa(freePort(t)),
		"HOLDCO_SITES_ADDR":      sites, "HOLDCO_SITES_PUBLIC_URL": "http://" + sites,
	}, gh
}

func with(env map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestTwoSitesProcessesServeOneDeploy runs a cluster's processes, each
// with a data directory of its own: an api, a worker and two sites
// processes. The site the worker deploys is served identically by both
// sites processes, from the blob store; a commit through the repository
// tools switches the deploy and both serve the new one; neither has the
// repository, and a heal creates no second one.
func TestTwoSitesProcessesServeOneDeploy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env, gh := clusterEnv(t)
	apiProc := startRoles(t, embeddedConfig(t, t.TempDir(), with(env, "HOLDCO_DATA_DIR", "")), app.RoleAPI)
	worker := startRoles(t, embeddedConfig(t, t.TempDir(), env), app.RoleWorker)
	sites1 := startRoles(t, embeddedConfig(t, t.TempDir(), env), app.RoleSites)
	sites2 := startRoles(t, embeddedConfig(t, t.TempDir(), with(env, "HOLDCO_SITES_ADDR", "127.0.0.1:0")), app.RoleSites)
	require.NotEqual(t, sites1.SitesAddr(), sites2.SitesAddr())

	base := "http://" + apiProc.APIAddr()
	key := cliLogin(t, base, "ada@example.com")
	me := authedJSON(t, "GET", base+"/auth/me", key, "", 200)
	co := authedJSON(t, "POST", base+"/conglomerates/"+me["conglomerate_id"].(string)+"/companies", key, `{"name":"Ada Shop","idea":"Sell maps"}`, 201)
	id, handle := co["id"].(string), co["handle"].(string)
	require.Eventually(t, func() bool {
		return authedJSON(t, "GET", base+"/companies/"+id+"/resources", key, "", 200)["ready"] == true
	}, 60*time.Second, 200*time.Millisecond, "the worker provisions")

	both := func(path string) (string, string) {
		c1, b1 := get(t, "http://"+sites1.SitesAddr()+path)
		c2, b2 := get(t, "http://"+sites2.SitesAddr()+path)
		require.Equal(t, http.StatusOK, c1, b1)
		require.Equal(t, http.StatusOK, c2, b2)
		return b1, b2
	}
	p1, p2 := both("/" + handle + "/")
	assert.Contains(t, p1, "Ada Shop")
	assert.Equal(t, p1, p2, "served identically")

	// An agent's commit through the repository tools on the worker.
	agent := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialCompanyKey, CredentialID: "test", CompanyID: id, ConglomerateID: me["conglomerate_id"].(string)})
	args, _ := json.Marshal(map[string]any{"message": "new page", "files": []map[string]string{{"path": "index.html", "content": "<h1>Maps, v2</h1>"}, {"path": "about/index.html", "content": "about"}}})
	res, err := worker.Service.Tools.Call(agent, id, "commit_repository_files", args)
	require.NoError(t, err)
	assert.Contains(t, string(res), "commit_id")
	require.Eventually(t, func() bool {
		b1, b2 := both("/" + handle + "/")
		return b1 == "<h1>Maps, v2</h1>" && b2 == b1
	}, testenv.EventualBound, 100*time.Millisecond, "both sites processes see the switch")
	a1, a2 := both("/" + handle + "/about/")
	assert.Equal(t, "about", a1)
	assert.Equal(t, a1, a2)

	// Health: the repository and the site are checked where they live,
	// and a heal from any worker creates nothing.
	admin, err := apiProc.Service.Identity.CreateAdminToken(ctx, "ops")
	require.NoError(t, err)
	healed := authedJSON(t, "POST", base+"/admin/companies/"+id+"/heal", admin, "", 200)
	assert.Equal(t, true, healed["healthy"], "%v", healed)
	assert.Equal(t, false, healed["heal_requested"], "nothing to heal")
	assert.Equal(t, 1, gh.Created(), "one repository on the git host")

	// Probes: sites answer /_health and /_ready; the worker its own.
	for _, s := range []*app.App{sites1, sites2} {
		code, body := get(t, "http://"+s.SitesAddr()+"/_health")
		assert.Equal(t, http.StatusOK, code, body)
		code, body = get(t, "http://"+s.SitesAddr()+"/_ready")
		assert.Equal(t, http.StatusOK, code, body)
		assert.Contains(t, body, `"blobs":"ok"`)
	}
	require.NotEmpty(t, worker.WorkerHealthAddr())
	require.Eventually(t, func() bool {
		code, _ := get(t, "http://"+worker.WorkerHealthAddr()+"/ready")
		return code == http.StatusOK
	}, testenv.EventualBound, 200*time.Millisecond, "the worker polls")
}

// TestSplitRolesOnLocalDirectoriesAreRefused: a worker process of a
// cluster (Postgres, an external Temporal) on the local blob store stops
// at start with one line naming the variable, before it connects to
// anything.
func TestSplitRolesOnLocalDirectoriesAreRefused(t *testing.T) {
	t.Parallel()
	cfg := embeddedConfig(t, t.TempDir(), map[string]string{
		"DATABASE_URL": "postgres://holdco:secret@127.0.0.1:1/holdco", "TEMPORAL_ADDRESS": "127.0.0.1:1", "HOLDCO_SHARED_DATA_DIR": "false"})
	for _, roles := range [][]app.Role{{app.RoleWorker}, {app.RoleSites}, {app.RoleAPI, app.RoleSites}} {
		_, err := app.Start(context.Background(), cfg, roles, quietLogger())
		require.Error(t, err, "%v", roles)
		assert.Regexp(t, `^HOLDCO_BLOB_BACKEND: local blobs under .* HOLDCO_SHARED_DATA_DIR=true`, err.Error(), "%v", roles)
		assert.NotContains(t, err.Error(), "\n")
		assert.NotContains(t, err.Error(), "secret")
	}
	s3 := with(map[string]string{"DATABASE_URL": "postgres://holdco:secret@127.0.0.1:1/holdco", "TEMPORAL_ADDRESS": "127.0.0.1:1", "HOLDCO_SHARED_DATA_DIR": "false",
		"HOLDCO_BLOB_BACKEND": "s3", "HOLDCO_BLOB_S3_BUCKET": "b", "HOLDCO_BLOB_S3_REGION": "us-east-1"})
	_, err := app.Start(context.Background(), embeddedConfig(t, t.TempDir(), s3), []app.Role{app.RoleWorker}, quietLogger())
	require.Error(t, err)
	assert.Regexp(t, `^HOLDCO_REPO_BACKEND: local repositories under `, err.Error())
	_, err = app.Start(context.Background(), embeddedConfig(t, t.TempDir(), s3), []app.Role{app.RoleSites}, quietLogger())
	require.Error(t, err)
	assert.Regexp(t, `^DATABASE_URL: `, err.Error(), "a sites process on S3 needs no repository: it goes on to the database")
}
