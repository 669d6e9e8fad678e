package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/api"
	"holdco/service"
	"holdco/testenv"
)

// world is a REST API with two users and every credential kind.
type world struct {
	t       testing.TB
	handler http.Handler
	svc     *service.Service
	idp     *testenv.IdP
	creds   map[string]string // credential name → bearer ("" = anonymous)
	adaCong string
	adaPAT  string // id of ada's personal access token
	adaCo   string // ada's company (the company key is its key)
	bobCo   string
}

const (
	anon    = "anonymous"
	userA   = "user A (web)"
	userB   = "user B (web)"
	pat     = "PAT of A"
	session = "CLI session key of A"
	company = "company key"
	admin   = "admin"
)

var credentialNames = []string{anon, userA, userB, pat, session, company, admin}

func newWorld(t testing.TB) *world { return newWorldWith(t, service.Options{}) }

func newWorldWith(t testing.TB, opts service.Options) *world {
	t.Helper()
	ctx := context.Background()
	idp := testenv.NewIdP()
	svc, err := service.New(ctx, service.Config{PublicURL: "http://holdco.test"}, testenv.NewStore(t), idp,
		slog.New(slog.NewTextHandler(io.Discard, nil)), opts)
	require.NoError(t, err)
	r := api.New(api.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Service: svc})
	// An admin-only operation, to prove the middleware's admin rule before
	// the admin endpoints exist.
	huma.Register(r.API, huma.Operation{OperationID: "admin-probe", Method: http.MethodGet, Path: "/admin/probe",
		Security: []map[string][]string{{"bearer": {}}}, Metadata: map[string]any{"admin-only": true}},
		func(context.Context, *struct{}) (*struct{}, error) { return nil, nil })

	w := &world{t: t, handler: r, svc: svc, idp: idp, creds: map[string]string{anon: ""}}
	w.creds[userA] = w.webLogin("ada@example.com", "ada")
	w.creds[userB] = w.webLogin("bob@example.com", "bob")

	var tok map[string]any
	w.call(http.MethodPost, "/auth/tokens", userA, `{"name":"ci"}`, http.StatusCreated, &tok)
	w.creds[pat], w.adaPAT = tok["token"].(string), tok["id"].(string)

	start, err := svc.BeginCLILogin(ctx, 5000, service.PKCEChallenge(testVerifier), "", "")
	require.NoError(t, err)
	state := testenv.StateOf(t, start.AuthorizationURL)
	to, err := svc.CompleteCLILogin(ctx, state, idp.Approve(state, "ada@example.com", "ada"), "")
	require.NoError(t, err)
	lb, _ := url.Parse(to)
	var grant map[string]any
	w.call(http.MethodPost, "/auth/cli/token", anon, `{"code":"`+lb.Query().Get("code")+`","code_verifier":"`+testVerifier+`"}`, http.StatusOK, &grant)
	w.creds[session] = grant["access_token"].(string)

	w.creds[admin], err = svc.CreateAdminToken(ctx, "ops")
	require.NoError(t, err)

	var me map[string]any
	w.call(http.MethodGet, "/auth/me", userA, "", http.StatusOK, &me)
	w.adaCong = me["conglomerate_id"].(string)
	w.call(http.MethodGet, "/auth/me", userB, "", http.StatusOK, &me)
	bobCong := me["conglomerate_id"].(string)

	var co map[string]any
	w.call(http.MethodPost, "/conglomerates/"+w.adaCong+"/companies", userA, `{"name":"Ada Shop"}`, http.StatusCreated, &co)
	w.adaCo = co["id"].(string)
	w.call(http.MethodPost, "/conglomerates/"+bobCong+"/companies", userB, `{"name":"Bob Shop"}`, http.StatusCreated, &co)
	w.bobCo = co["id"].(string)
	var key map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/api-key", userA, "", http.StatusOK, &key)
	w.creds[company] = key["api_key"].(string)
	return w
}

const testVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

func (w *world) webLogin(email, subject string) string {
	ctx := context.Background()
	authURL, err := w.svc.BeginWebLogin(ctx, "", "", "")
	require.NoError(w.t, err)
	state := testenv.StateOf(w.t, authURL)
	res, err := w.svc.CompleteWebLogin(ctx, w.idp.Approve(state, email, subject), state)
	require.NoError(w.t, err)
	return res.Token
}

func (w *world) do(method, path, cred, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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

// TestAuthorizationMatrix asserts the status of every authenticated route
// for every credential kind.
func TestAuthorizationMatrix(t *testing.T) {
	w := newWorld(t)
	missing := "00000000-0000-4000-8000-000000000000"
	type row struct {
		method, path, body string
		want               map[string]int
	}
	all := func(code int) map[string]int {
		m := map[string]int{}
		for _, c := range credentialNames {
			m[c] = code
		}
		return m
	}
	with := func(base map[string]int, over map[string]int) map[string]int {
		m := map[string]int{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range over {
			m[k] = v
		}
		return m
	}
	// Users may; anonymous is unauthenticated; company keys and the admin
	// credential are refused on user routes.
	userRoute := func(ok int) map[string]int {
		return map[string]int{anon: 401, userA: ok, userB: ok, pat: ok, session: ok, company: 403, admin: 403}
	}
	// Routes of ada's company: her user credentials and its company key.
	adaCompany := func(ok int) map[string]int {
		return map[string]int{anon: 401, userA: ok, userB: 403, pat: ok, session: ok, company: ok, admin: 403}
	}
	rows := []row{
		{"GET", "/health", "", all(200)},
		{"GET", "/auth/me", "", with(userRoute(200), map[string]int{admin: 200, company: 200})},
		{"GET", "/auth/tokens", "", userRoute(200)},
		{"POST", "/auth/tokens", `{"name":"matrix"}`, userRoute(201)},
		{"GET", "/conglomerates/me", "", userRoute(200)},
		{"GET", "/conglomerates/" + w.adaCong, "", with(userRoute(200), map[string]int{userB: 403})},
		{"PATCH", "/conglomerates/" + w.adaCong, `{"daily_credit_cap":100}`, with(userRoute(200), map[string]int{userB: 403})},
		{"GET", "/conglomerates/" + missing, "", with(userRoute(404), map[string]int{admin: 404, company: 404})}, // missing is 404 for everyone authenticated
		{"GET", "/conglomerates/" + w.adaCong + "/companies", "", with(userRoute(200), map[string]int{userB: 403})},
		{"GET", "/conglomerates/" + w.adaCong + "/companies/archived", "", with(userRoute(200), map[string]int{userB: 403})},
		{"POST", "/conglomerates/" + w.adaCong + "/companies", `{"name":"Matrix Co"}`, with(userRoute(201), map[string]int{userB: 403})},
		{"GET", "/companies/" + w.adaCo, "", adaCompany(200)},
		{"PUT", "/companies/" + w.adaCo, `{"mission":"m"}`, adaCompany(200)},
		{"GET", "/companies/" + w.adaCo + "/api-key", "", adaCompany(200)},
		{"GET", "/companies/" + w.bobCo, "", map[string]int{anon: 401, userA: 403, userB: 200, pat: 403, session: 403, company: 403, admin: 403}},
		{"GET", "/companies/" + missing, "", map[string]int{anon: 401, userA: 404, userB: 404, pat: 404, session: 404, company: 404, admin: 404}},
		{"DELETE", "/auth/tokens/" + missing, "", userRoute(404)},
		{"POST", "/admin/user-auth/" + w.bobCo + "/disable?reason=abuse+report", "", map[string]int{anon: 401, userA: 403, userB: 403, pat: 403, session: 403, company: 403, admin: 200}},
		{"GET", "/admin/companies/health", "", map[string]int{anon: 401, userA: 403, userB: 403, pat: 403, session: 403, company: 403, admin: 200}},
		{"GET", "/companies/" + w.adaCo + "/resources", "", adaCompany(200)},
		{"GET", "/conglomerates/" + w.adaCong + "/credit-ledger?offset=0&limit=5", "", with(userRoute(200), map[string]int{userB: 403})},
		{"GET", "/conglomerates/" + w.adaCong + "/billing", "", with(userRoute(200), map[string]int{userB: 403})},
		{"POST", "/conglomerates/" + w.adaCong + "/billing/checkout-session", `{"kind":"top_up","credits":100}`, with(userRoute(409), map[string]int{userB: 403})},
		{"POST", "/conglomerates/" + w.adaCong + "/billing/portal-session", "", with(userRoute(409), map[string]int{userB: 403})},
		{"PUT", "/conglomerates/" + w.adaCong + "/billing/auto-top-up", `{"enabled":false,"threshold":5,"credits":0}`, with(userRoute(200), map[string]int{userB: 403})},
		{"GET", "/conglomerates/me/connect-status", "", userRoute(200)},
		{"POST", "/conglomerates/me/connect-onboarding", "", userRoute(409)},
		{"GET", "/health/stripe", "", map[string]int{anon: 401, userA: 403, userB: 403, pat: 403, session: 403, company: 403, admin: 409}},
		{"POST", "/webhooks/stripe", `{}`, all(404)}, // payments are not configured in this world
		{"GET", "/billing/go?t=bogus", "", all(404)},
		{"POST", "/auth/session", `{"code":"bogus"}`, all(400)}, // public: only the one-time code counts
		{"GET", "/admin/probe", "", map[string]int{anon: 401, userA: 403, userB: 403, pat: 403, session: 403, company: 403, admin: 204}},
	}
	for _, r := range rows {
		for _, cred := range credentialNames {
			rec := w.do(r.method, r.path, cred, r.body)
			assert.Equal(t, r.want[cred], rec.Code, "%s %s as %s: %s", r.method, r.path, cred, rec.Body.String())
			if rec.Code == http.StatusUnauthorized {
				assert.Equal(t, "Bearer", rec.Header().Get("WWW-Authenticate"), "%s %s as %s", r.method, r.path, cred)
			}
		}
	}
	// Rotation last, since it replaces the company key: the key itself may
	// not rotate, the owner's credentials may.
	rotate := "/companies/" + w.adaCo + "/api-key/rotate"
	for cred, want := range map[string]int{anon: 401, userB: 403, admin: 403, company: 403} {
		w.call("POST", rotate, cred, "", want, nil)
	}
	for _, cred := range []string{userA, pat, session} {
		w.call("POST", rotate, cred, "", 200, nil)
	}
	// Another user's token: 403; the owner's: 204, again 204.
	w.call("DELETE", "/auth/tokens/"+w.adaPAT, userB, "", 403, nil)
	w.call("DELETE", "/auth/tokens/"+w.adaPAT, userA, "", 204, nil)
	w.call("DELETE", "/auth/tokens/"+w.adaPAT, userA, "", 204, nil)
	w.call("GET", "/auth/me", pat, "", 401, nil)
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

	rec = w.do("GET", "/auth/callback?code="+url.QueryEscape(w.idp.Approve(state, "cy@example.com", "cy"))+"&state="+url.QueryEscape(state), anon, "")
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

	var ws map[string]any
	exchange := w.do("POST", "/auth/session", anon, `{"code":"`+code+`"}`)
	require.Equal(t, http.StatusOK, exchange.Code, exchange.Body.String())
	assert.Equal(t, "no-store", exchange.Header().Get("Cache-Control"))
	require.NoError(t, json.Unmarshal(exchange.Body.Bytes(), &ws))
	assert.NotContains(t, rec.Header().Get("Location"), ws["session_token"].(string))
	w.call("POST", "/auth/session", anon, `{"code":"`+code+`"}`, 400, nil)

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
	_, err := w.svc.GrantCredits(ctx, w.adaCong, "TOP_UP", 100, "checkout")
	require.NoError(t, err)
	for _, run := range []string{"r1", "r1", "r2"} {
		_, err := w.svc.Spend(ctx, w.adaCong, w.adaCo, run, "TOKEN_USAGE_PARTIAL", 3)
		require.NoError(t, err)
	}
	_, err = w.svc.Spend(ctx, w.adaCong, w.adaCo, "", "TOOL_USAGE", 1)
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
