package app_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"holdco/activities"
	"holdco/app"
	"holdco/models"
	"holdco/providers/companydb"
	"holdco/providers/devoidc"
	"holdco/providers/gitrepo"
	"holdco/service"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// cliLogin signs email in the way `holdco login` does and returns the
// session key.
func cliLogin(t *testing.T, base, email string) string {
	t.Helper()
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	status, start := getJSON(t, base+"/auth/cli/start?port=40111&code_challenge="+service.PKCEChallenge(verifier))
	require.Equal(t, http.StatusOK, status, start)
	back, err := devoidc.SignIn(context.Background(), start["authorization_url"].(string), email, "correct horse")
	require.NoError(t, err)
	code := location(t, noFollow, back.String()).Query().Get("code")
	var grant map[string]any
	postJSON(t, base+"/auth/cli/token", "", `{"code":"`+code+`","code_verifier":"`+verifier+`"}`, http.StatusOK, &grant)
	return grant["access_token"].(string)
}

func authedJSON(t *testing.T, method, u, bearer, body string, want int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	require.Equal(t, want, resp.StatusCode, "%s %s: %s", method, u, raw)
	_ = jsonUnmarshal(raw, &out)
	return out
}

// TestProvisioningEndToEnd runs the embedded default: a new company is
// provisioned by the workflow, its site is served, and a repository
// deleted behind the service's back is found by the health check and
// healed.
func TestProvisioningEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := runApp(t, embeddedConfig(t, dir, nil), app.AllRoles...)
	base := "http://" + a.APIAddr()
	key := cliLogin(t, base, "ada@example.com")
	me := authedJSON(t, "GET", base+"/auth/me", key, "", 200)

	co := authedJSON(t, "POST", base+"/conglomerates/"+me["conglomerate_id"].(string)+"/companies", key, `{"name":"Ada Shop","idea":"Sell maps"}`, 201)
	id := co["id"].(string)
	resources := func() map[string]any { return authedJSON(t, "GET", base+"/companies/"+id+"/resources", key, "", 200) }
	require.Eventually(t, func() bool { return resources()["ready"] == true }, 60*time.Second, 200*time.Millisecond)
	site := ""
	for _, r := range resources()["resources"].([]any) {
		r := r.(map[string]any)
		assert.Equal(t, "ready", r["status"], r["kind"])
		if r["kind"] == "hosting" {
			site = r["ref"].(string)
		}
	}
	resp, err := http.Get(site)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	assert.Contains(t, string(page), "Ada Shop")

	// Repeated provisioning joins the running workflow or, once it has
	// ended, re-runs it; never two at once.
	first := authedJSON(t, "POST", base+"/companies/"+id+"/provision", key, `{"seed_repo":true}`, 200)
	second := authedJSON(t, "POST", base+"/companies/"+id+"/provision", key, "", 200)
	assert.Equal(t, contract.ProvisionWorkflowID(id), first["workflow_id"])
	if first["run_id"] != second["run_id"] {
		// The first run ended before the second call: the second is a
		// re-run. A workflow id never has two runs open at once.
		ctx := context.Background()
		wf := contract.ProvisionWorkflowID(id)
		done, err := a.Temporal.DescribeWorkflowExecution(ctx, wf, first["run_id"].(string))
		require.NoError(t, err)
		again, err := a.Temporal.DescribeWorkflowExecution(ctx, wf, second["run_id"].(string))
		require.NoError(t, err)
		require.NotNil(t, done.GetWorkflowExecutionInfo().GetCloseTime(), "the first run had ended")
		assert.False(t, again.GetWorkflowExecutionInfo().GetStartTime().AsTime().Before(done.GetWorkflowExecutionInfo().GetCloseTime().AsTime()),
			"the second run started after the first ended")
	}

	admin, err := a.Service.Identity.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		h := authedJSON(t, "GET", base+"/admin/companies/health", admin, "", 200)
		return h["unhealthy"] == 0.0 && h["healthy"] == 1.0
	}, 30*time.Second, 200*time.Millisecond)

	// The run that made it healthy has ended (a heal sent while a run
	// still finishes is answered by that run, which already ensured
	// everything).
	require.NoError(t, a.Temporal.GetWorkflow(context.Background(), contract.ProvisionWorkflowID(id), "").Get(context.Background(), nil))

	// Deleted behind the service's back: the row still says ready, the
	// health check says otherwise, heal recreates it.
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "repos", id+".git")))
	heal := authedJSON(t, "POST", base+"/admin/companies/"+id+"/heal", admin, "", 200)
	assert.Equal(t, false, heal["healthy"])
	assert.Equal(t, true, heal["heal_requested"])
	require.Eventually(t, func() bool {
		h := authedJSON(t, "GET", base+"/admin/companies/health", admin, "", 200)
		return h["healthy"] == 1.0
	}, 60*time.Second, 200*time.Millisecond, "healed")
	heal = authedJSON(t, "POST", base+"/admin/companies/"+id+"/heal", admin, "", 200)
	assert.Equal(t, false, heal["heal_requested"], "nothing to heal")

	// Archived companies cannot be provisioned.
	authedJSON(t, "DELETE", base+"/companies/"+id, key, "", 204)
	authedJSON(t, "POST", base+"/companies/"+id+"/provision", key, "", 404)
}

// gatedRepos blocks the first Ensure until the test lets it go (or the
// activity is cancelled), to stop a worker mid-provisioning.
type gatedRepos struct {
	*gitrepo.Store
	entered chan struct{}
	once    sync.Once
}

func (g *gatedRepos) Ensure(ctx context.Context, companyID, name, idea string, seed bool) (models.RepositoryInfo, error) {
	g.once.Do(func() { close(g.entered) })
	<-ctx.Done() // this worker dies before it finishes
	return models.RepositoryInfo{}, ctx.Err()
}

// TestProvisioningSurvivesWorkerDeath stops the worker in the middle of
// provisioning; a new worker finishes it, with exactly one repository,
// database and site.
func TestProvisioningSurvivesWorkerDeath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st := testenv.NewStore(t)
	env := testenv.NewTemporal(t, nil)
	repos, err := gitrepo.New(filepath.Join(dir, "repos"))
	require.NoError(t, err)
	dbs, err := companydb.NewSQLite(filepath.Join(dir, "dbs"))
	require.NoError(t, err)
	mux := http.NewServeMux()
	srv := httptestServer(t, mux)
	host := siteHost(t, st, dir, srv+"/sites", repos)
	mux.Handle("/sites/", http.StripPrefix("/sites", host.Handler()))

	_, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	co, err := st.Companies().CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: "shop-" + strconv.FormatInt(time.Now().UnixNano()%100000, 10)})
	require.NoError(t, err)

	gate := &gatedRepos{Store: repos, entered: make(chan struct{})}
	first := env.Server.NewWorker(env.TaskQueue, func(r worker.Registry) {
		workflows.Register(r, &activities.Provisioning{Store: st, Repositories: gate, Databases: dbs, Hosting: host})
	})
	run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: contract.ProvisionWorkflowID(co.ID), TaskQueue: env.TaskQueue},
		contract.ProvisionWorkflowName, contract.ProvisionInput{CompanyID: co.ID, ConglomerateID: cong.ID, SeedRepo: true})
	require.NoError(t, err)
	select {
	case <-gate.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the repository activity never started")
	}
	first.Stop() // the worker dies with the repository activity in flight

	env.Server.NewWorker(env.TaskQueue, func(r worker.Registry) {
		workflows.Register(r, &activities.Provisioning{Store: st, Repositories: repos, Databases: dbs, Hosting: host})
	})
	// The server retries the activity after its heartbeat timeout (15 s,
	// scaled for tests): a bound of that plus a minute of work.
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute+time.Duration(testenv.TimeoutScale())*15*time.Second)
	defer cancel()
	var res contract.ProvisionResult
	require.NoError(t, run.Get(waitCtx, &res))
	assert.Len(t, res.Refs, 3)

	rows, err := st.Companies().ListResources(ctx, systemScope(t, st, co.ID))
	require.NoError(t, err)
	require.Len(t, rows, 3)
	for _, r := range rows {
		assert.Equal(t, models.ResourceReady, r.Status, r.Kind)
	}
	count := func(sub string) int {
		entries, err := os.ReadDir(filepath.Join(dir, sub))
		require.NoError(t, err)
		n := 0
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				n++
			}
		}
		return n
	}
	assert.Equal(t, 1, count("repos"), "one repository")
	assert.Equal(t, 1, count("dbs"), "one database")
	site, err := st.Sites().SiteOfCompany(ctx, co.ID)
	require.NoError(t, err, "one site")
	assert.NotEmpty(t, site.DeployID)
	require.NoError(t, host.Check(ctx, co.ID, co.Handle))
}
