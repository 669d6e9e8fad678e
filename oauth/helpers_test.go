package oauth_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"holdco/oauth"
	"holdco/service"
	authz "holdco/service/oauth"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
)

const resource = "http://mcp.test"

// preClient is the pre-registered client of the tests.
var preClient = authz.PreregisteredClient{ID: "partner", Name: "Partner Assistant", RedirectURIs: []string{"https://partner.example/cb"}}

type world struct {
	t   *testing.T
	env *servicetest.Env
	srv *httptest.Server
	svc *authz.Service
}

// newWorld serves the authorization server on a test listener; fetcher
// (nil: production) fetches metadata documents.
func newWorld(t *testing.T, fetcher *authz.Fetcher, limits *oauth.Limits) *world {
	t.Helper()
	w := &world{t: t}
	var h http.Handler
	// The issuer is the listener's address, known before the server
	// serves: a connection that arrives early (another process reusing a
	// port it probed) waits for the handler instead of finding none.
	w.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { h.ServeHTTP(rw, r) }))
	t.Cleanup(w.srv.Close)
	issuer := "http://" + w.srv.Listener.Addr().String()
	w.env = servicetest.NewWith(t, usecases.Options{OAuth: authz.Config{Issuer: issuer, Resource: resource,
		Clients: []authz.PreregisteredClient{preClient}, Fetcher: fetcher}})
	w.svc = w.env.Svc.OAuth
	h = oauth.New(oauth.Deps{Service: w.svc, Logger: testLogger(), Limits: limits})
	w.srv.Start()
	return w
}

// browser is a cookie-keeping client that does not follow redirects.
func (w *world) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (w *world) register(body string) (int, map[string]any) {
	w.t.Helper()
	resp, err := http.Post(w.srv.URL+"/oidc/register", "application/json", strings.NewReader(body))
	require.NoError(w.t, err)
	return decode(w.t, resp)
}

func decode(t *testing.T, resp *http.Response) (int, map[string]any) {
	t.Helper()
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// registerNative registers a native client with a loopback redirect.
func (w *world) registerClient(redirects ...string) string {
	w.t.Helper()
	b, _ := json.Marshal(map[string]any{"client_name": "Test Assistant", "redirect_uris": redirects, "application_type": "native"})
	status, m := w.register(string(b))
	require.Equal(w.t, http.StatusCreated, status, m)
	return m["client_id"].(string)
}

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-0123456789"

// authParams are a valid authorization request's parameters.
func authParams(clientID, redirect string) url.Values {
	return url.Values{"client_id": {clientID}, "redirect_uri": {redirect}, "response_type": {"code"}, "state": {"st-123"},
		"code_challenge": {service.PKCEChallenge(verifier)}, "code_challenge_method": {"S256"}, "scope": {"nanocorp"}}
}

func (w *world) get(c *http.Client, path string) *http.Response {
	w.t.Helper()
	resp, err := c.Get(w.srv.URL + path)
	require.NoError(w.t, err)
	return resp
}

func (w *world) authorize(c *http.Client, q url.Values) *http.Response {
	return w.get(c, "/oidc/authorize?"+q.Encode())
}

// signIn follows a redirect to the identity provider, signs email in and
// comes back through the callback; it returns the response of the
// authorization endpoint it returns to.
func (w *world) signIn(c *http.Client, toIdP *http.Response, email string) *http.Response {
	w.t.Helper()
	require.Equal(w.t, http.StatusFound, toIdP.StatusCode)
	loc := toIdP.Header.Get("Location")
	require.True(w.t, strings.HasPrefix(loc, "https://idp.test/"), loc)
	state := testenv.StateOf(w.t, loc)
	code := w.env.IdP.Approve(state, email, strings.Split(email, "@")[0])
	back := w.get(c, "/oidc/callback?"+url.Values{"code": {code}, "state": {state}}.Encode())
	require.Equal(w.t, http.StatusFound, back.StatusCode)
	require.True(w.t, strings.HasPrefix(back.Header.Get("Location"), "/oidc/authorize?"))
	return w.get(c, back.Header.Get("Location"))
}

var hiddenRe = regexp.MustCompile(`name="(request|csrf)" value="([^"]+)"`)

// page reads a page's body.
func page(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// decide submits the consent page's form with decision.
func (w *world) decide(c *http.Client, consentPage, decision string) *http.Response {
	w.t.Helper()
	form := url.Values{"decision": {decision}}
	for _, m := range hiddenRe.FindAllStringSubmatch(consentPage, 2) {
		form.Set(m[1], strings.ReplaceAll(m[2], "&#43;", "+"))
	}
	require.NotEmpty(w.t, form.Get("request"), consentPage)
	resp, err := c.PostForm(w.srv.URL+"/oidc/consent", form)
	require.NoError(w.t, err)
	return resp
}

// codeFrom checks a redirect back to the client and returns its query.
func codeFrom(t *testing.T, resp *http.Response, issuer, redirect string) url.Values {
	t.Helper()
	require.Contains(t, []int{http.StatusFound, http.StatusSeeOther}, resp.StatusCode, page(t, resp))
	loc, err := url.Parse(resp.Header.Get("Location"))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(loc.String(), redirect), loc.String())
	require.Equal(t, issuer, loc.Query().Get("iss"), "every redirect carries iss (RFC 9207)")
	return loc.Query()
}

// approveFlow runs authorize → sign in → Allow and returns the code.
func (w *world) approveFlow(c *http.Client, q url.Values, email string) string {
	w.t.Helper()
	resp := w.authorize(c, q)
	if resp.StatusCode == http.StatusFound && strings.HasPrefix(resp.Header.Get("Location"), "https://idp.test/") {
		resp = w.signIn(c, resp, email)
	}
	if resp.StatusCode == http.StatusOK {
		resp = w.decide(c, page(w.t, resp), "allow")
	}
	got := codeFrom(w.t, resp, w.srv.URL, q.Get("redirect_uri"))
	require.Equal(w.t, q.Get("state"), got.Get("state"))
	require.NotEmpty(w.t, got.Get("code"))
	return got.Get("code")
}

func (w *world) token(form url.Values, basic bool) (int, map[string]any) {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.srv.URL+"/oidc/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(form.Get("client_id"), "secret")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(w.t, err)
	return decode(w.t, resp)
}

func tokenForm(clientID, redirect, code string) url.Values {
	return url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "client_id": {clientID}, "code_verifier": {verifier}}
}

// testLogger discards, unless OAUTH_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("OAUTH_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
