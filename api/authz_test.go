package api_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/api"
	"holdco/models"
	"holdco/providers/ads"
	"holdco/providers/blob/local"
	"holdco/providers/email"
	"holdco/providers/registrar"
	"holdco/service"
	"holdco/service/mail"
	"holdco/service/traces"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
)

// world is a REST API with two users, each with a company, and every
// credential kind.
type world struct {
	t       testing.TB
	router  *api.Router
	handler http.Handler
	logs    *testenv.LogBuffer // the router's log
	api     huma.API
	store   *store.Store
	svc     *usecases.Services
	idp     *testenv.IdP
	creds   map[string]string // credential name → bearer ("" = anonymous)
	sso     map[string]string // credential name → SSO cookie of holdco's pages (web sign-ins)
	adaCong string
	bobCong string
	adaPAT  string           // id of ada's personal access token
	adaCo   string           // ada's company (the company key is its key)
	bobCo   string           // bob's company (companyB is its key)
	blobs   *local.Store     // the files' blob store
	sites   *httptest.Server // serves its signed downloads
}

// Credential kinds; the names are the status columns of the authorization
// matrix (testdata/authz_matrix.txt).
const (
	anon     = "anonymous"
	userA    = "userA"    // ada's web session
	userB    = "userB"    // bob's web session (another conglomerate)
	pat      = "pat"      // ada's personal access token
	session  = "session"  // ada's CLI session key
	company  = "companyA" // the key of ada's company
	companyB = "companyB" // the key of bob's company
	admin    = "admin"    // the admin credential
	revoked  = "revoked"  // a personal access token of ada's, revoked
)

var credentialNames = []string{anon, userA, userB, pat, session, company, companyB, admin, revoked}

func newWorld(t testing.TB) *world { return newWorldWith(t, usecases.Options{}) }

func newWorldWith(t testing.TB, opts usecases.Options) *world {
	t.Helper()
	return newWorldOn(t, testenv.NewStore(t), opts)
}

// newWorldOn builds the world on a given store (one that counts its
// statements, say).
func newWorldOn(t testing.TB, st *store.Store, opts usecases.Options) *world {
	t.Helper()
	ctx := context.Background()
	idp := testenv.NewIdP()
	mux := http.NewServeMux()
	sites := httptest.NewServer(mux)
	t.Cleanup(sites.Close)
	blobs, err := local.New(t.TempDir(), []byte("api-test-blob-signing-key-0123456789abcdef"), sites.URL)
	require.NoError(t, err)
	mux.Handle(local.PathPrefix, blobs.Handler())
	if opts.Blobs == nil {
		opts.Blobs = blobs
	}
	if opts.MailSender == nil {
		// The offline mail provider: sending works and the backfill has
		// a body source.
		box, err := email.NewLocal(t.TempDir())
		require.NoError(t, err)
		opts.MailSender, opts.MailBodies = box, box
	}
	if opts.Mail.Domain == "" {
		opts.Mail = testMailConfig
	}
	if opts.Registrar == nil {
		reg, err := registrar.NewLocal(t.TempDir(), 0, nil)
		require.NoError(t, err)
		sim, err := ads.NewSimulator(t.TempDir(), nil)
		require.NoError(t, err)
		opts.Registrar, opts.Ads = reg, sim
	}
	svc, err := usecases.New(ctx, service.Config{PublicURL: "http://holdco.test"}, st, idp,
		slog.New(slog.NewTextHandler(io.Discard, nil)), opts)
	require.NoError(t, err)
	logs := &testenv.LogBuffer{}
	r := api.New(api.Deps{Logger: slog.New(slog.NewTextHandler(logs, nil)), Service: svc})

	w := &world{t: t, router: r, handler: r, api: r.API, store: st, logs: logs, svc: svc, idp: idp, creds: map[string]string{anon: ""}, sso: map[string]string{}, blobs: blobs, sites: sites}
	w.creds[userA], w.sso[userA] = w.webLogin("ada@example.com", "ada")
	w.creds[userB], w.sso[userB] = w.webLogin("bob@example.com", "bob")

	var tok map[string]any
	w.call(http.MethodPost, "/auth/tokens", userA, `{"name":"ci"}`, http.StatusCreated, &tok)
	w.creds[pat], w.adaPAT = tok["token"].(string), tok["id"].(string)
	w.call(http.MethodPost, "/auth/tokens", userA, `{"name":"gone"}`, http.StatusCreated, &tok)
	w.creds[revoked] = tok["token"].(string)
	w.call(http.MethodDelete, "/auth/tokens/"+tok["id"].(string), userA, "", http.StatusNoContent, nil)

	start, err := svc.Identity.BeginCLILogin(ctx, 5000, service.PKCEChallenge(testVerifier), "", "")
	require.NoError(t, err)
	state := testenv.StateOf(t, start.AuthorizationURL)
	to, err := svc.Identity.CompleteCLILogin(ctx, state, idp.Approve(state, "ada@example.com", "ada"), "")
	require.NoError(t, err)
	lb, _ := url.Parse(to)
	var grant map[string]any
	w.call(http.MethodPost, "/auth/cli/token", anon, `{"code":"`+lb.Query().Get("code")+`","code_verifier":"`+testVerifier+`"}`, http.StatusOK, &grant)
	w.creds[session] = grant["access_token"].(string)

	w.creds[admin], err = svc.Identity.CreateAdminToken(ctx, "ops")
	require.NoError(t, err)

	var me map[string]any
	w.call(http.MethodGet, "/auth/me", userA, "", http.StatusOK, &me)
	w.adaCong = me["conglomerate_id"].(string)
	w.call(http.MethodGet, "/auth/me", userB, "", http.StatusOK, &me)
	w.bobCong = me["conglomerate_id"].(string)

	// The companies are stored as a business start stores them, without its
	// welcome credits: the tests' balances are their own (POST
	// /conglomerates/{id}/companies has its tests in companies_test.go).
	w.adaCo = w.seedCompany(w.adaCong, "Ada Shop", "ada-shop")
	w.bobCo = w.seedCompany(w.bobCong, "Bob Shop", "bob-shop")
	var key map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/api-key", userA, "", http.StatusOK, &key)
	w.creds[company] = key["api_key"].(string)
	w.call(http.MethodGet, "/companies/"+w.bobCo+"/api-key", userB, "", http.StatusOK, &key)
	w.creds[companyB] = key["api_key"].(string)
	return w
}

// seedCompany stores a company of cong with its provisioning intent.
func (w *world) seedCompany(cong, name, handle string) string {
	c, _, err := w.store.Companies().CreateCompanyToProvision(context.Background(), w.store.SystemConglomerateScope(cong),
		models.Company{Name: name, Handle: handle, Status: models.CompanyActive}, true, nil)
	require.NoError(w.t, err)
	return c.ID
}

const testVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

// webLogin signs in through the browser flow: the bearer the frontend gets
// for the login code, and the SSO cookie of holdco's own pages.
func (w *world) webLogin(email, subject string) (bearer, sso string) {
	ctx := context.Background()
	start, err := w.svc.Identity.BeginWebLogin(ctx, "", "", "")
	require.NoError(w.t, err)
	res, err := w.svc.Identity.CompleteWebLogin(ctx, w.idp.Approve(start.State, email, subject), start.State, start.Binding)
	require.NoError(w.t, err)
	landing, err := url.Parse(res.RedirectURL)
	require.NoError(w.t, err)
	ws, err := w.svc.Identity.ExchangeLoginCode(ctx, landing.Query().Get("login_code"), res.Cookie)
	require.NoError(w.t, err)
	return ws.Token, res.Cookie
}

func (w *world) do(method, path, cred, body string) *httptest.ResponseRecorder {
	return w.doWith(method, path, cred, body, nil)
}

func (w *world) doWith(method, path, cred, body string, header http.Header) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if bearer := w.creds[cred]; bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	return rec
}

func (w *world) call(method, path, cred, body string, want int, out any) {
	w.t.Helper()
	rec := w.do(method, path, cred, body)
	require.Equal(w.t, want, rec.Code, "%s %s as %s: %s", method, path, cred, rec.Body.String())
	if out != nil {
		require.NoError(w.t, json.Unmarshal(rec.Body.Bytes(), out))
	}
}

var updateMatrix = flag.Bool("update-matrix", false, "rewrite "+matrixFile+" with the observed statuses (and rows for routes that have none)")

// testMailConfig is the inbox settings of the API tests.
var testMailConfig = mail.Config{Domain: "mail.test", InboundSecret: []byte("inbound-secret-of-the-api-tests-32b!")}

const missingID = "00000000-0000-4000-8000-000000000000"

// matrixWorld is a world with the fixtures the matrix's paths name.
// worldScope takes the cleanups of a scratch world (its store, its
// servers) so that the matrix ends the world as soon as a request has
// changed it: on Postgres its schema goes back to testenv's pool for the
// next scratch world, instead of each scratch world migrating a schema of
// its own (most of the matrix's time on Postgres). Everything else goes to
// the test.
type worldScope struct {
	testing.TB
	cleanups []func()
}

func (s *worldScope) Cleanup(f func()) { s.cleanups = append(s.cleanups, f) }

// end runs the cleanups, the last registered first, as the test would.
func (s *worldScope) end() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
	s.cleanups = nil
}

type matrixWorld struct {
	*world
	fixtures map[string]map[string]string // path parameter → fixture name → value
}

func newMatrixWorld(t testing.TB) *matrixWorld {
	w := newWorld(t)
	var tok map[string]any
	w.call(http.MethodPost, "/auth/tokens", userA, `{"name":"matrix target"}`, http.StatusCreated, &tok)
	adaTok := tok["id"].(string)
	w.call(http.MethodPost, "/auth/tokens", userB, `{"name":"bob's"}`, http.StatusCreated, &tok)
	bobTok := tok["id"].(string)
	adaFile, bobFile := w.uploadAs(userA, w.adaCo, "matrix/ada.txt"), w.uploadAs(userB, w.bobCo, "matrix/bob.txt")
	// A sent message costs a credit: each account can pay for its
	// fixtures' and the matrix's messages.
	for _, cong := range []string{w.adaCong, w.bobCong} {
		_, err := w.svc.Billing.GrantCredits(context.Background(), w.store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 10, "matrix fixtures")
		require.NoError(t, err)
	}
	var msg map[string]any
	w.call(http.MethodPost, "/companies/"+w.adaCo+"/emails", userA, `{"to":"jane@example.com","subject":"Hi","text":"Hello"}`, http.StatusCreated, &msg)
	adaEmail := msg["id"].(string)
	w.call(http.MethodPost, "/companies/"+w.bobCo+"/emails", userB, `{"to":"jane@example.com","subject":"Hi","text":"Hello"}`, http.StatusCreated, &msg)
	bobEmail := msg["id"].(string)
	var task map[string]any
	w.call(http.MethodPost, "/companies/"+w.adaCo+"/tasks", userA, `{"title":"ada's task"}`, http.StatusCreated, &task)
	adaTask := task["id"].(string)
	w.call(http.MethodPost, "/companies/"+w.bobCo+"/tasks", userB, `{"title":"bob's task"}`, http.StatusCreated, &task)
	bobTask := task["id"].(string)
	adaTurn, bobTurn := w.endedTurn(w.adaCo), w.endedTurn(w.bobCo)
	var lead map[string]any
	w.call(http.MethodPost, "/companies/"+w.adaCo+"/prospects", userA, `{"name":"ada's lead"}`, http.StatusCreated, &lead)
	adaLead := lead["id"].(string)
	adaRun := uuid.NewString()
	require.NoError(t, w.svc.TraceWriter.Append(context.Background(), adaRun, "000000-start", traces.Event{Type: traces.EventTurnStarted}))
	return &matrixWorld{world: w, fixtures: map[string]map[string]string{
		"turn_id":         {"ada": adaTurn, "bob": bobTurn, "missing": missingID},
		"prospect_id":     {"ada": adaLead, "missing": missingID},
		"email_id":        {"ada": adaEmail, "bob": bobEmail, "missing": missingID},
		"conglomerate_id": {"ada": w.adaCong, "bob": w.bobCong, "missing": missingID},
		"company_id":      {"ada": w.adaCo, "bob": w.bobCo, "missing": missingID},
		"token_id":        {"ada": adaTok, "bob": bobTok, "missing": missingID},
		"file_id":         {"ada": adaFile, "bob": bobFile, "missing": missingID},
		"task_id":         {"ada": adaTask, "bob": bobTask, "missing": missingID},
		"run_id":          {"ada": adaRun, "missing": missingID, "bad": "not-a-uuid"},
	}}
}

// endedTurn stores a completed turn of the company (the matrix world runs
// no workflows).
func (w *world) endedTurn(companyID string) string {
	ctx := context.Background()
	scope, err := w.store.SystemCompanyScope(ctx, companyID)
	require.NoError(w.t, err)
	turn, err := w.store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: uuid.NewString(), Trigger: models.TriggerMessage, Message: "hello"},
		[]models.ContentBlock{{Type: models.ContentText, Text: "hello"}})
	require.NoError(w.t, err)
	_, _, err = w.store.Turns().FinishTurn(ctx, scope, turn.ID, "Hi", models.TurnResult{Status: models.TurnCompleted, Answer: "Hi", EndedAt: time.Now().UTC()},
		models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: models.ActorAgent, Summary: "done"})
	require.NoError(w.t, err)
	return turn.ID
}

// fixture resolves {param} (the "ada" fixture) or {param=name}. A parameter
// without fixtures takes name literally.
func (m *matrixWorld) fixture(param, name string) (string, error) {
	set, ok := m.fixtures[param]
	if !ok {
		if name == "" {
			return "", fmt.Errorf("{%s} has no fixtures: write {%s=value}", param, param)
		}
		return name, nil
	}
	if name == "" {
		name = "ada"
	}
	v, ok := set[name]
	if !ok {
		names := make([]string, 0, len(set))
		for n := range set {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", fmt.Errorf("{%s=%s}: no such fixture (have %s)", param, name, strings.Join(names, ", "))
	}
	return v, nil
}

// route is something the router serves: an OpenAPI operation (key is its
// id) or a route registered on the engine only (key is its method).
type route struct{ key, method, path string }

// servedRoutes lists every OpenAPI operation of the router and every
// engine route that is not one (pages, the OpenAPI document and docs).
func servedRoutes(t *testing.T, r *api.Router) []route {
	var out []route
	documented := map[string]bool{}
	for path, item := range r.API.OpenAPI().Paths {
		for method, op := range map[string]*huma.Operation{
			http.MethodGet: item.Get, http.MethodPut: item.Put, http.MethodPost: item.Post, http.MethodDelete: item.Delete,
			http.MethodOptions: item.Options, http.MethodHead: item.Head, http.MethodPatch: item.Patch, http.MethodTrace: item.Trace,
		} {
			if op == nil {
				continue
			}
			require.NotEmpty(t, op.OperationID, "%s %s has no operation id", method, path)
			out = append(out, route{op.OperationID, method, path})
			documented[method+" "+path] = true
		}
	}
	engine, ok := r.Handler.(*gin.Engine)
	require.True(t, ok, "the router's handler is the gin engine")
	for _, ri := range engine.Routes() {
		segs := strings.Split(ri.Path, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
				segs[i] = "{" + s[1:] + "}"
			}
		}
		path := strings.Join(segs, "/")
		if !documented[ri.Method+" "+path] {
			out = append(out, route{ri.Method, ri.Method, path})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path+out[i].method < out[j].path+out[j].method })
	return out
}

// TestAuthorizationMatrix checks testdata/authz_matrix.txt: every route
// the router serves has a row, every row names a route it serves, and each
// row answers each credential kind with the status written there.
//
//	go test ./api -run TestAuthorizationMatrix -args -update-matrix
//
// rewrites the file with the observed statuses (adding a row for each
// route that has none) so that the change can be reviewed as a diff.
func TestAuthorizationMatrix(t *testing.T) {
	lines, err := readMatrix(matrixFile)
	require.NoError(t, err)
	shared := newMatrixWorld(t)
	routes := servedRoutes(t, shared.router)

	// Match rows to routes.
	byKey := map[string][]route{}
	for _, rt := range routes {
		byKey[rt.key] = append(byKey[rt.key], rt)
	}
	covered := map[route]bool{}
	methodOf := map[*matrixRow]string{}
	kept := lines[:0:0]
	for _, l := range lines {
		if r := l.row; r != nil {
			var match *route
			for _, rt := range byKey[r.op] {
				if rt.path == r.templatePath() {
					match = &rt
				}
			}
			if match == nil {
				msg := fmt.Sprintf("%s:%d: %s %s: the router serves no such route", matrixFile, r.line, r.op, r.templatePath())
				if rts := byKey[r.op]; len(rts) == 1 && rts[0].key != rts[0].method {
					msg += fmt.Sprintf(" (operation %s is %s %s)", r.op, rts[0].method, rts[0].path)
				}
				if *updateMatrix {
					t.Log(msg + "; row removed")
					continue
				}
				t.Error(msg)
				continue
			}
			covered[*match] = true
			methodOf[r] = match.method
		}
		kept = append(kept, l)
	}
	lines = kept
	for _, rt := range routes {
		if covered[rt] {
			continue
		}
		if *updateMatrix {
			r := &matrixRow{op: rt.key, path: rt.path}
			lines = append(lines, matrixLine{row: r})
			methodOf[r] = rt.method
			t.Logf("%s %s %s: row added; review its path, body and statuses", rt.key, rt.method, rt.path)
			continue
		}
		t.Errorf("%s %s (%s) has no row in %s: add one (see the top of the file)", rt.method, rt.path, rt.key, matrixFile)
	}

	// Run every row as every credential, in file order. A fresh row runs on
	// a scratch world, rebuilt after each request that succeeded.
	for _, l := range lines {
		r := l.row
		if r == nil {
			continue
		}
		method := methodOf[r]
		r.got, r.gotBody = make([]int, len(credentialNames)), make([]string, len(credentialNames))
		var scratch *matrixWorld
		var scope *worldScope
		endScratch := func() {
			if scope != nil {
				scope.end()
				scope, scratch = nil, nil
			}
		}
		for i, cred := range credentialNames {
			w := shared
			if r.fresh {
				if scratch == nil {
					scope = &worldScope{TB: t}
					scratch = newMatrixWorld(scope)
				}
				w = scratch
			}
			path, err := r.concretePath(w.fixture)
			if err != nil {
				t.Errorf("%s:%d: %v", matrixFile, r.line, err)
				break
			}
			rec := w.do(method, path, cred, r.body)
			r.got[i], r.gotBody[i] = rec.Code, rec.Body.String()
			if rec.Code == http.StatusUnauthorized {
				assert.Equal(t, "Bearer", rec.Header().Get("WWW-Authenticate"), "%s %s as %s", method, path, cred)
			}
			if r.fresh && rec.Code < 400 {
				endScratch()
			}
		}
		endScratch()
		if *updateMatrix || slices.Equal(r.got, r.want) {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s:%d: %s %s %s\n", matrixFile, r.line, r.op, method, r.path)
		fmt.Fprintf(&b, "\t      %s\n\twant  %s\n\tgot   %s", statusColumns(credentialNames), statusColumns(r.want), statusColumns(r.got))
		for i, cred := range credentialNames {
			if i < len(r.want) && r.got[i] != r.want[i] {
				body := strings.TrimSpace(r.gotBody[i])
				if len(body) > 300 {
					body = body[:300] + "…"
				}
				fmt.Fprintf(&b, "\n\t%s: %d %s", cred, r.got[i], body)
			}
		}
		t.Error(b.String())
	}
	if *updateMatrix {
		require.NoError(t, writeMatrix(matrixFile, lines))
		t.Logf("rewrote %s with the observed statuses", matrixFile)
	}
}

// TestRevokedTokenSequence: another user may not revoke a token; its owner
// may, twice; the token then authenticates nothing.
func TestRevokedTokenSequence(t *testing.T) {
	w := newWorld(t)
	w.call("DELETE", "/auth/tokens/"+w.adaPAT, userB, "", 403, nil)
	w.call("GET", "/auth/me", pat, "", 200, nil)
	w.call("DELETE", "/auth/tokens/"+w.adaPAT, userA, "", 204, nil)
	w.call("DELETE", "/auth/tokens/"+w.adaPAT, userA, "", 204, nil)
	w.call("GET", "/auth/me", pat, "", 401, nil)
}

// TestCompanyKeyRotationSequence: the key may not rotate itself; after the
// owner rotates, the old key is refused and the new one works.
func TestCompanyKeyRotationSequence(t *testing.T) {
	w := newWorld(t)
	rotate := "/companies/" + w.adaCo + "/api-key/rotate"
	w.call("POST", rotate, company, "", 403, nil)
	w.call("POST", rotate, companyB, "", 403, nil)
	var key map[string]any
	w.call("POST", rotate, userA, "", 200, &key)
	w.call("GET", "/companies/"+w.adaCo, company, "", 401, nil)
	w.creds[company] = key["api_key"].(string)
	w.call("GET", "/companies/"+w.adaCo, company, "", 200, nil)
}

func TestMeDescribesEveryCredential(t *testing.T) {
	w := newWorld(t)
	cases := map[string][3]string{
		userA:   {"user", "web_session", "conglomerate"},
		pat:     {"user", "personal_access_token", "conglomerate"},
		session: {"user", "session_key", "conglomerate"},
		admin:   {"admin", "admin_token", "admin"},
		company: {"company", "company_key", "company"},
	}
	for cred, want := range cases {
		var me map[string]any
		w.call("GET", "/auth/me", cred, "", 200, &me)
		assert.Equal(t, want[0], me["kind"], cred)
		assert.Equal(t, want[1], me["credential"], cred)
		assert.Equal(t, want[2], me["scope"], cred)
		if want[0] == "user" {
			assert.Equal(t, "ada@example.com", me["user"].(map[string]any)["email"], cred)
			assert.Equal(t, w.adaCong, me["conglomerate_id"], cred)
		} else if want[0] == "company" {
			assert.Nil(t, me["user"])
			assert.Equal(t, w.adaCo, me["company_id"])
			assert.Equal(t, w.adaCong, me["conglomerate_id"])
		} else {
			assert.Nil(t, me["user"])
		}
	}
}

func TestTokenListShowsNoSecretsAndExcludesSessions(t *testing.T) {
	w := newWorld(t)
	var list []map[string]any
	w.call("GET", "/auth/tokens", userA, "", 200, &list)
	require.Len(t, list, 1, "only the PAT; the CLI session and web session are not listed")
	assert.Equal(t, "ci", list[0]["name"])
	assert.NotContains(t, list[0], "token")
	rec := w.do("POST", "/auth/tokens", userA, `{"name":"x"}`)
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
}

func TestArchiveCompany(t *testing.T) {
	w := newWorld(t)
	w.call("DELETE", "/companies/"+w.adaCo, company, "", 403, nil)
	w.call("DELETE", "/companies/"+w.adaCo, userB, "", 403, nil)
	w.call("DELETE", "/companies/"+w.adaCo, userA, `{"reason":"done"}`, 204, nil)
	w.call("DELETE", "/companies/"+w.adaCo, userA, "", 204, nil)
	w.call("GET", "/companies/"+w.adaCo, userA, "", 404, nil)
	w.call("GET", "/auth/me", company, "", 401, nil)
	var arch map[string]any
	w.call("GET", "/conglomerates/"+w.adaCong+"/companies/archived", userA, "", 200, &arch)
	list := arch["companies"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, "ada-shop", list[0].(map[string]any)["handle"])

	rec := w.do("POST", "/conglomerates/"+w.adaCong+"/companies", userA, `{"name":"Again","handle":"ada-shop"}`)
	assert.Equal(t, http.StatusConflict, rec.Code, "archived handles stay taken")
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.Equal(t, "handle_taken", body["error"])
	assert.Equal(t, "ada-shop-2", body["suggested_handle"])
	rec = w.do("POST", "/conglomerates/"+w.adaCong+"/companies", userA, `{"name":"Bad","handle":"Not A Slug"}`)
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code)
}

func TestCLILogoutIsIdempotent(t *testing.T) {
	w := newWorld(t)
	w.call("POST", "/auth/cli/logout", session, "", 204, nil)
	w.call("POST", "/auth/cli/logout", session, "", 204, nil)
	w.call("GET", "/auth/me", session, "", 401, nil)
	w.call("POST", "/auth/cli/logout", userA, "", 204, nil)
	w.call("GET", "/auth/me", userA, "", 200, nil)
	w.call("POST", "/auth/cli/logout", anon, "", 401, nil)
}

// TestCLILogoutRefusesCompanyKeyAndAdmin: neither is a session; logout
// answers 403 and leaves them working.
func TestCLILogoutRefusesCompanyKeyAndAdmin(t *testing.T) {
	w := newWorld(t)
	for _, cred := range []string{company, admin} {
		var body map[string]any
		w.call("POST", "/auth/cli/logout", cred, "", 403, &body)
		assert.Equal(t, "forbidden", body["error"])
		w.call("GET", "/auth/me", cred, "", 200, nil)
	}
	w.creds["wrong company key"] = "svc_c_v1_nope"
	w.call("POST", "/auth/cli/logout", "wrong company key", "", 401, nil)
	w.call("POST", "/auth/cli/logout", pat, "", 204, nil)
	w.call("GET", "/auth/me", pat, "", 401, nil)
}

func TestDeleteMe(t *testing.T) {
	w := newWorld(t)
	w.call("DELETE", "/auth/me", admin, "", 403, nil)
	w.call("DELETE", "/auth/me", userA, "", 204, nil)
	for _, cred := range []string{userA, pat, session} {
		w.call("GET", "/auth/me", cred, "", 401, nil)
	}
	w.call("GET", "/auth/me", userB, "", 200, nil)
}

func TestAuthValidation(t *testing.T) {
	w := newWorld(t)
	challenge := service.PKCEChallenge(testVerifier)
	cases := []struct {
		method, path, cred, body string
		loc                      []any
	}{
		{"GET", "/auth/cli/start?port=80&code_challenge=" + challenge, anon, "", []any{"query", "port"}},
		{"GET", "/auth/cli/start?port=5000&code_challenge=abc", anon, "", []any{"query", "code_challenge"}},
		{"GET", "/auth/cli/start?code_challenge=" + challenge, anon, "", []any{"query", "port"}},
		{"GET", "/auth/cli/callback", anon, "", []any{"query", "state"}},
		{"GET", "/auth/callback", anon, "", []any{"query", "code"}},
		{"GET", "/auth/logout", anon, "", []any{"query", "token"}},
		{"POST", "/auth/cli/token", anon, `{"code":"x"}`, []any{"body", "code_verifier"}},
		{"POST", "/auth/cli/device/token", anon, `{}`, []any{"body", "device_code"}},
		{"POST", "/auth/tokens", userA, `{}`, []any{"body", "name"}},
		{"POST", "/auth/tokens", userA, `{"name":"x","expires_in_days":0}`, []any{"body", "expires_in_days"}},
		{"DELETE", "/auth/tokens/not-a-uuid", userA, "", []any{"path", "token_id"}},
		{"PATCH", "/conglomerates/" + w.adaCong, userA, `{"daily_credit_cap":-5}`, []any{"body", "daily_credit_cap"}},
		{"PATCH", "/conglomerates/" + w.adaCong, userA, `{"name":""}`, []any{"body", "name"}},
		{"POST", "/admin/user-auth/" + w.adaCo + "/disable?reason=no", admin, "", []any{"query", "reason"}},
		{"GET", "/conglomerates/" + w.adaCong + "/credit-ledger?offset=-1", userA, "", []any{"query", "offset"}},
		{"GET", "/conglomerates/" + w.adaCong + "/credit-ledger?limit=0", userA, "", []any{"query", "limit"}},
		{"GET", "/conglomerates/" + w.adaCong + "/credit-ledger?limit=101", userA, "", []any{"query", "limit"}},
		{"POST", "/admin/user-auth/" + w.adaCo + "/disable", admin, "", []any{"query", "reason"}},
	}
	for _, c := range cases {
		rec := w.do(c.method, c.path, c.cred, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s %s: %s", c.method, c.path, rec.Body.String())
		var body struct {
			Detail []struct {
				Loc []any `json:"loc"`
			} `json:"detail"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.Equal(t, c.loc, body.Detail[0].Loc, "%s %s", c.method, c.path)
	}
	// The logout clears the SSO cookie even when it refuses the request.
	rec := w.do("GET", "/auth/logout", anon, "")
	assert.Contains(t, rec.Header().Get("Set-Cookie"), "holdco_sso=;")
	assert.Contains(t, rec.Header().Get("Set-Cookie"), "Max-Age=0")

	// null clears the cap, an omitted field leaves it.
	var c map[string]any
	w.call("PATCH", "/conglomerates/"+w.adaCong, userA, `{"daily_credit_cap":25}`, 200, &c)
	w.call("PATCH", "/conglomerates/"+w.adaCong, userA, `{"name":"Renamed"}`, 200, &c)
	assert.Equal(t, 25.0, c["daily_credit_cap"])
	w.call("PATCH", "/conglomerates/"+w.adaCong, userA, `{"daily_credit_cap":null}`, 200, &c)
	assert.Nil(t, c["daily_credit_cap"])
}

func TestBrowserRedirects(t *testing.T) {
	w := newWorld(t)
	rec := w.do("GET", "/auth/login?redirect_url=%2Fcompanies&screen_hint=sign-up", anon, "")
	require.Equal(t, http.StatusFound, rec.Code)
	loc, _ := url.Parse(rec.Header().Get("Location"))
	assert.Equal(t, "idp.test", loc.Host)
	state := loc.Query().Get("state")
	binding := rec.Header().Get("Set-Cookie") // the sign-in's browser binding
	name, value, _ := strings.Cut(strings.Split(binding, ";")[0], "=")

	rec = w.doWith("GET", "/auth/callback?code="+url.QueryEscape(w.idp.Approve(state, "cy@example.com", "cy"))+"&state="+url.QueryEscape(state), anon, "",
		http.Header{"Cookie": {name + "=" + value}})
	require.Equal(t, http.StatusFound, rec.Code)
	landing, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, "http://holdco.test/companies", landing.Scheme+"://"+landing.Host+landing.Path)
	assert.Empty(t, landing.Fragment, "no token in a fragment")
	code := landing.Query().Get("login_code")
	require.NotEmpty(t, code)
	cookie := rec.Header().Get("Set-Cookie")
	assert.Contains(t, cookie, "holdco_sso=")
	assert.Contains(t, cookie, "HttpOnly")

	sso := strings.TrimPrefix(strings.Split(cookie, ";")[0], "holdco_sso=")
	// Login CSRF: the code is spent only with the SSO cookie of the
	// browser that signed in; without it, or with another browser's, it
	// is refused and stays spendable.
	for _, other := range []http.Header{nil, {"Cookie": {"holdco_sso=holdco_page_other"}}} {
		rec := w.doWith("POST", "/auth/session", anon, `{"code":"`+code+`"}`, other)
		require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
		assert.Contains(t, rec.Body.String(), "another browser")
	}
	withSSO := http.Header{"Cookie": {"holdco_sso=" + sso}}
	var ws map[string]any
	exchange := w.doWith("POST", "/auth/session", anon, `{"code":"`+code+`"}`, withSSO)
	require.Equal(t, http.StatusOK, exchange.Code, exchange.Body.String())
	assert.Equal(t, "no-store", exchange.Header().Get("Cache-Control"))
	require.NoError(t, json.Unmarshal(exchange.Body.Bytes(), &ws))
	assert.NotContains(t, rec.Header().Get("Location"), ws["session_token"].(string))
	rec = w.doWith("POST", "/auth/session", anon, `{"code":"`+code+`"}`, withSSO)
	assert.Equal(t, http.StatusBadRequest, rec.Code, "single use")

	// Attack (a): a tenant site as the landing page is refused.
	for _, target := range []string{"/sites/attacker/", "http://holdco.test/sites/attacker/"} {
		rec = w.do("GET", "/auth/login?redirect_url="+url.QueryEscape(target), anon, "")
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, target)
		assert.Contains(t, rec.Body.String(), `"redirect_url"`)
	}

	rec = w.do("GET", "/auth/callback?code=bogus&state=bogus", anon, "")
	require.Equal(t, http.StatusFound, rec.Code)
	assert.Equal(t, "http://holdco.test/login?error=sign_in_failed", rec.Header().Get("Location"))

	rec = w.do("GET", "/auth/logout?token="+url.QueryEscape(w.creds[userA]), anon, "")
	require.Equal(t, http.StatusFound, rec.Code)
	assert.Equal(t, "http://holdco.test/login", rec.Header().Get("Location"))
	w.call("GET", "/auth/me", userA, "", 401, nil)
}

func TestCreditLedgerEndpoint(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	_, err := w.svc.Billing.GrantCredits(ctx, w.store.SystemConglomerateScope(w.adaCong), "TOP_UP", 100, "checkout")
	require.NoError(t, err)
	for _, run := range []string{"r1", "r1", "r2"} {
		_, err := w.svc.Billing.Spend(ctx, w.store.SystemConglomerateScope(w.adaCong), w.adaCo, run, "TOKEN_USAGE_PARTIAL", 3)
		require.NoError(t, err)
	}
	_, err = w.svc.Billing.Spend(ctx, w.store.SystemConglomerateScope(w.adaCong), w.adaCo, "", "TOOL_USAGE", 1)
	require.NoError(t, err)

	var page map[string]any
	w.call("GET", "/conglomerates/"+w.adaCong+"/credit-ledger", userA, "", 200, &page)
	assert.Equal(t, 0.0, page["offset"])
	assert.Equal(t, 20.0, page["limit"], "default limit")
	assert.Equal(t, 4.0, page["total"], "top-up, run r1, run r2, the run-less tool use")
	assert.Equal(t, 90.0, page["balance"])
	lines := page["lines"].([]any)
	require.Len(t, lines, 4)
	sum := map[string]float64{}
	for _, l := range lines {
		l := l.(map[string]any)
		key := l["type"].(string)
		if r, ok := l["run_id"].(string); ok {
			key += ":" + r
		}
		sum[key] += l["credits"].(float64)
	}
	assert.Equal(t, map[string]float64{"TOP_UP": 100, "TOKEN_USAGE_PARTIAL:r1": -6, "TOKEN_USAGE_PARTIAL:r2": -3, "TOOL_USAGE": -1}, sum)
	w.call("GET", "/conglomerates/"+w.adaCong+"/credit-ledger?offset=3&limit=2", userA, "", 200, &page)
	assert.Len(t, page["lines"], 1)
}

// An answer for a credential is that principal's: every authenticated
// route says no-store (a route with its own Cache-Control keeps it), and
// public ones do not.
func TestAuthenticatedAnswersAreNotCached(t *testing.T) {
	w := newWorld(t)
	for _, path := range []string{"/auth/me", "/auth/tokens", "/companies/" + w.adaCo, "/conglomerates/" + w.adaCong + "/billing"} {
		rec := w.do(http.MethodGet, path, userA, "")
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", path, rec.Body.String())
		assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"), path)
	}
	rec := w.do(http.MethodGet, "/companies/"+w.adaCo, anon, "")
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	rec = w.do(http.MethodGet, "/openapi.json", anon, "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.NotEqual(t, "no-store", rec.Header().Get("Cache-Control"), "a public document may be cached")
}
