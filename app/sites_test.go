package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/providers/devoidc"
	"holdco/testenv"
)

type started struct {
	api, sites, dir string
	app             *app.App
}

func startSites(t *testing.T, roles []app.Role) started {
	t.Helper()
	dir := t.TempDir()
	a := runApp(t, embeddedConfig(t, dir, nil), roles...)
	require.NotEmpty(t, a.SitesAddr(), "the sites role serves sites on a listener of their own")
	require.NotEqual(t, a.APIAddr(), a.SitesAddr())
	return started{api: "http://" + a.APIAddr(), sites: "http://" + a.SitesAddr(), dir: dir, app: a}
}

func send(t *testing.T, c *http.Client, method, u string, header map[string]string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestSignInCannotHandASessionToATenantSite replays attack (a): sign-in
// asked to return to a tenant's page. It is refused, and a normal sign-in
// never puts a session token in a URL.
func TestSignInCannotHandASessionToATenantSite(t *testing.T) {
	t.Parallel()
	s := startSites(t, []app.Role{app.RoleAPI, app.RoleSites})
	for _, target := range []string{s.api + "/sites/attacker/", "/sites/attacker/", s.sites + "/attacker/"} {
		resp, body := send(t, noFollow, "GET", s.api+"/auth/login?redirect_url="+url.QueryEscape(target), nil, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode, "%s: %s", target, body)
		assert.Contains(t, body, `"redirect_url"`, target)
		assert.Empty(t, resp.Header.Get("Location"), target)
	}
	resp, _ := send(t, noFollow, "GET", s.api+"/sites/attacker/", nil, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the API's origin serves no tenant pages")

	// A sign-in that is allowed lands with a one-time code, not a token.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: noFollow.CheckRedirect}
	authURL := location(t, browser, s.api+"/auth/login?redirect_url=%2F")
	back, err := devoidc.SignIn(context.Background(), authURL.String(), "ada@example.com", "correct horse")
	require.NoError(t, err)
	resp, _ = send(t, browser, "GET", back.String(), nil, nil)
	require.Equal(t, http.StatusFound, resp.StatusCode)
	landing, err := resp.Location()
	require.NoError(t, err)
	var sso string
	for _, c := range resp.Cookies() {
		if c.Name == "holdco_sso" {
			sso = c.Value
		}
	}
	require.NotEmpty(t, sso)
	assert.NotContains(t, landing.String(), sso, "the session token is never in a URL")
	assert.NotContains(t, landing.String(), "session_token")
	assert.Empty(t, landing.Fragment)
	code := landing.Query().Get("login_code")
	require.NotEmpty(t, code)

	// The code is spent only with the SSO cookie of the browser that
	// signed in (login CSRF): without it, it is refused.
	exchange := func(cookie string, want int, out any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.api+"/auth/session", strings.NewReader(`{"code":"`+code+`"}`))
		req.Header.Set("Content-Type", "application/json")
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "holdco_sso", Value: cookie})
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		require.Equal(t, want, resp.StatusCode, "%s", raw)
		if out != nil {
			require.NoError(t, json.Unmarshal(raw, out))
		}
	}
	exchange("", http.StatusBadRequest, nil)
	var ws map[string]any
	exchange(sso, http.StatusOK, &ws)
	status, me := whoami(t, s.api, ws["session_token"].(string))
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ada@example.com", me["user"].(map[string]any)["email"])
	exchange(sso, http.StatusBadRequest, nil)

	// holdco's own landing page exchanges the code itself.
	authURL = location(t, browser, s.api+"/auth/login?redirect_url=%2F")
	back, err = devoidc.SignIn(context.Background(), authURL.String(), "ada@example.com", "correct horse")
	require.NoError(t, err)
	landing = location(t, browser, back.String())
	resp, page := send(t, browser, "GET", landing.String(), nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, "You are signed in.")
	assert.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
}

// TestSiteScriptCannotApproveADeviceLogin replays attack (b): a tenant's
// page, with the victim's browser and cookie, tries to read the device
// approval page and post "approve" for the attacker's device code.
func TestSiteScriptCannotApproveADeviceLogin(t *testing.T) {
	t.Parallel()
	s := startSites(t, []app.Role{app.RoleAPI, app.RoleSites})
	var start map[string]any
	postJSON(t, s.api+"/auth/cli/device/start", "", "", http.StatusOK, &start) // the attacker's device flow
	userCode, device := start["user_code"].(string), start["device_code"].(string)

	// The victim is signed in at holdco (SSO cookie of the API's origin).
	jar, _ := cookiejar.New(nil)
	victim := &http.Client{Jar: jar, CheckRedirect: noFollow.CheckRedirect}
	login := location(t, victim, start["verification_uri_complete"].(string))
	authURL := location(t, victim, s.api+login.RequestURI())
	back, err := devoidc.SignIn(context.Background(), authURL.String(), "victim@example.com", "correct horse")
	require.NoError(t, err)
	location(t, victim, back.String())

	// The tenant's page lives on the sites origin: that listener has no
	// holdco page to read.
	resp, body := send(t, victim, "GET", s.sites+"/auth/cli/device?user_code="+url.QueryEscape(userCode), nil, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.NotContains(t, body, `name="csrf"`)

	// Reading the API's page from there is a cross-origin read: the
	// browser sends the cookie but gives the script nothing, since holdco
	// grants no CORS access.
	resp, body = send(t, victim, "GET", s.api+"/auth/cli/device?user_code="+url.QueryEscape(userCode),
		map[string]string{"Origin": s.sites, "Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"}, nil)
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"))
	// Even with the CSRF value in hand (the worst case), a post from the
	// site is refused: by Origin (the sandboxed page's is "null") and by
	// Sec-Fetch-Site.
	csrf := csrfField.FindStringSubmatch(body)
	require.Len(t, csrf, 2, body)
	form := url.Values{"user_code": {userCode}, "csrf": {csrf[1]}, "decision": {"approve"}}
	for _, h := range []map[string]string{
		{"Origin": s.sites},
		{"Origin": "null"},
		{"Sec-Fetch-Site": "same-site"},
		{"Sec-Fetch-Site": "cross-site", "Origin": s.api},
	} {
		resp, _ := send(t, victim, "POST", s.api+"/auth/cli/device", h, form)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%v", h)
	}
	var poll map[string]any
	postJSON(t, s.api+"/auth/cli/device/token", "", `{"device_code":"`+device+`"}`, http.StatusOK, &poll)
	assert.Equal(t, "authorization_pending", poll["status"], "the attacker's device was not approved")
	assert.Nil(t, poll["access_token"])

	// The victim's own approval from holdco's page still works.
	resp, _ = send(t, victim, "POST", s.api+"/auth/cli/device", map[string]string{"Origin": s.api, "Sec-Fetch-Site": "same-origin"}, form)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestSitesGoOfflineOnArchiveAndReceiveRotatedKeys runs the embedded
// default: the site is served on the sites origin, sandboxed; its
// environment receives the company key when minted and when rotated; an
// archived company's site, and the site of a deleted account's company,
// answer 410.
func TestSitesGoOfflineOnArchiveAndReceiveRotatedKeys(t *testing.T) {
	t.Parallel()
	s := startSites(t, app.AllRoles)
	envKey, err := s.app.Store.Identity().InstanceSecret(context.Background(), "site-env-key", func() []byte { return make([]byte, 32) }) // made at start; this one is not used
	require.NoError(t, err)
	// Any worker reads the environment: it is in the database, sealed.
	host := siteHostWithKey(t, s.app.Store, t.TempDir(), s.sites, nil, envKey)

	newCompany := func(email, name string) (key, id, site, handle string) {
		key = cliLogin(t, s.api, email)
		me := authedJSON(t, "GET", s.api+"/auth/me", key, "", 200)
		co := authedJSON(t, "POST", s.api+"/conglomerates/"+me["conglomerate_id"].(string)+"/companies", key, `{"name":"`+name+`"}`, 201)
		id, handle = co["id"].(string), co["handle"].(string)
		require.Eventually(t, func() bool {
			return authedJSON(t, "GET", s.api+"/companies/"+id+"/resources", key, "", 200)["ready"] == true
		}, 60*time.Second, 200*time.Millisecond)
		for _, r := range authedJSON(t, "GET", s.api+"/companies/"+id+"/resources", key, "", 200)["resources"].([]any) {
			if r := r.(map[string]any); r["kind"] == "hosting" {
				site = r["ref"].(string)
			}
		}
		return key, id, site, handle
	}
	key, id, site, handle := newCompany("ada@example.com", "Ada Shop")
	assert.Equal(t, s.sites+"/"+handle+"/", site, "sites are reported on their own origin")
	resp, page := send(t, http.DefaultClient, "GET", site, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, page, "Ada Shop")
	assert.Equal(t, "sandbox allow-scripts allow-forms allow-popups", resp.Header.Get("Content-Security-Policy"))
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))

	envHas := func(want string) func() bool {
		return func() bool {
			env, err := host.Env(context.Background(), id)
			return err == nil && env["HOLDCO_API_KEY"] == want && env["HOLDCO_API_URL"] == s.api
		}
	}
	first := authedJSON(t, "GET", s.api+"/companies/"+id+"/api-key", key, "", 200)["api_key"].(string)
	require.Eventually(t, envHas(first), 30*time.Second, 100*time.Millisecond, "the minted key reaches the site")
	rotated := authedJSON(t, "POST", s.api+"/companies/"+id+"/api-key/rotate", key, "", 200)["api_key"].(string)
	require.NotEqual(t, first, rotated)
	require.Eventually(t, envHas(rotated), 30*time.Second, 100*time.Millisecond, "the rotated key reaches the site")
	env, err := host.Env(context.Background(), id)
	require.NoError(t, err)
	for k, v := range env {
		assert.NotContains(t, v, first, "the old key is gone (%s)", k)
	}
	resp, body := send(t, http.DefaultClient, "GET", s.sites+"/"+handle+".env", nil, nil)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.NotContains(t, body, rotated, "the environment is never served")

	offline := func(u string) func() bool {
		return func() bool {
			resp, body := send(t, http.DefaultClient, "GET", u, nil, nil)
			return resp.StatusCode == http.StatusGone && strings.Contains(resp.Header.Get("Content-Type"), "text/html") &&
				resp.Header.Get("Content-Security-Policy") != "" && !strings.Contains(body, "Ada Shop")
		}
	}
	authedJSON(t, "DELETE", s.api+"/companies/"+id, key, "", 204)
	require.Eventually(t, offline(site), testenv.EventualBound, 100*time.Millisecond, "an archived company's site goes offline")

	bobKey, _, bobSite, _ := newCompany("bob@example.com", "Bob Shop")
	resp, _ = send(t, http.DefaultClient, "GET", bobSite, nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	authedJSON(t, "DELETE", s.api+"/auth/me", bobKey, "", 204)
	require.Eventually(t, offline(bobSite), testenv.EventualBound, 100*time.Millisecond, "a deleted account's site goes offline")
}
