package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/providers/devoidc"
	"holdco/service"
)

// startEmbedded runs the embedded default (API role) for one test.
func startEmbedded(t *testing.T) string {
	t.Helper()
	a := runApp(t, embeddedConfig(t, t.TempDir(), nil), app.RoleAPI)
	return "http://" + a.APIAddr()
}

var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func location(t *testing.T, c *http.Client, u string) *url.URL {
	t.Helper()
	resp, err := c.Get(u)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode, "GET %s", u)
	loc, err := resp.Location()
	require.NoError(t, err)
	return loc
}

func postJSON(t *testing.T, u, bearer, body string, want int, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	require.Equal(t, want, resp.StatusCode, "POST %s: %s", u, raw)
	if out != nil {
		require.NoError(t, json.Unmarshal(raw, out))
	}
}

func whoami(t *testing.T, base, bearer string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/auth/me", nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var me map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&me)
	return resp.StatusCode, me
}

// TestCLILoopbackLoginAgainstEmbeddedProvider runs `holdco login`'s
// protocol against the real embedded OpenID Provider.
func TestCLILoopbackLoginAgainstEmbeddedProvider(t *testing.T) {
	t.Parallel()
	base := startEmbedded(t)
	ctx := context.Background()
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	port := 41234

	begin := func() string {
		var start map[string]any
		status, body := getJSON(t, base+"/auth/cli/start?port="+strconv.Itoa(port)+"&code_challenge="+service.PKCEChallenge(verifier)+"&env=test&screen_hint=sign-up")
		require.Equal(t, http.StatusOK, status, body)
		start = body
		return start["authorization_url"].(string)
	}
	// The browser signs in at the provider, which returns to holdco's CLI
	// callback; holdco sends the browser on to the CLI's loopback port.
	back, err := devoidc.SignIn(ctx, begin(), "ada@example.com", "correct horse")
	require.NoError(t, err)
	require.Equal(t, "/auth/cli/callback", back.Path)
	loopback := location(t, noFollow, back.String())
	assert.Equal(t, "127.0.0.1:"+strconv.Itoa(port), loopback.Host)
	code := loopback.Query().Get("code")
	require.NotEmpty(t, code)

	var grant map[string]any
	postJSON(t, base+"/auth/cli/token", "", `{"code":"`+code+`","code_verifier":"`+verifier+`"}`, http.StatusOK, &grant)
	key := grant["access_token"].(string)
	assert.True(t, strings.HasPrefix(key, "svc_u_v1_"))
	status, me := whoami(t, base, key)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "session_key", me["credential"])
	assert.Equal(t, "ada@example.com", me["user"].(map[string]any)["email"])

	// A replayed code is refused.
	postJSON(t, base+"/auth/cli/token", "", `{"code":"`+code+`","code_verifier":"`+verifier+`"}`, http.StatusBadRequest, nil)

	// A tampered state goes back to the loopback with an error, no code.
	back, err = devoidc.SignIn(ctx, begin(), "ada@example.com", "correct horse")
	require.NoError(t, err)
	q := back.Query()
	state := q.Get("state")
	q.Set("state", state[:len(state)-3]+"AAA")
	back.RawQuery = q.Encode()
	loopback = location(t, noFollow, back.String())
	assert.Equal(t, "invalid_state", loopback.Query().Get("error"))
	assert.Empty(t, loopback.Query().Get("code"))

	// Logout revokes the key.
	postJSON(t, base+"/auth/cli/logout", key, "", http.StatusNoContent, nil)
	status, _ = whoami(t, base, key)
	assert.Equal(t, http.StatusUnauthorized, status)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// TestDeviceLoginAgainstEmbeddedProvider approves a device login in a
// browser session made by the real sign-in.
func TestDeviceLoginAgainstEmbeddedProvider(t *testing.T) {
	t.Parallel()
	base := startEmbedded(t)
	ctx := context.Background()
	var start map[string]any
	postJSON(t, base+"/auth/cli/device/start", "", "", http.StatusOK, &start)
	device := start["device_code"].(string)
	var poll map[string]any

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: noFollow.CheckRedirect}
	// Not signed in: the approval page sends the browser to sign in.
	login := location(t, browser, start["verification_uri_complete"].(string))
	require.Equal(t, "/auth/login", login.Path)
	authURL := location(t, browser, base+login.RequestURI())
	back, err := devoidc.SignIn(ctx, authURL.String(), "bea@example.com", "correct horse")
	require.NoError(t, err)
	page := location(t, browser, back.String()) // sets the SSO cookie
	require.Equal(t, "/auth/cli/device", page.Path)

	resp, err := browser.Get(base + page.RequestURI())
	require.NoError(t, err)
	html, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(html))
	assert.Contains(t, string(html), start["user_code"].(string))
	csrf := csrfField.FindStringSubmatch(string(html))
	require.Len(t, csrf, 2)

	form := url.Values{"user_code": {start["user_code"].(string)}, "csrf": {csrf[1]}, "decision": {"approve"}}
	bad := url.Values{"user_code": {start["user_code"].(string)}, "csrf": {"forged"}, "decision": {"approve"}}
	resp, err = browser.PostForm(base+"/auth/cli/device", bad)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "a forged form is refused")
	resp, err = browser.PostForm(base+"/auth/cli/device", form)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// (Pending and slow_down are covered with a test clock in service/.)
	postJSON(t, base+"/auth/cli/device/token", "", `{"device_code":"`+device+`"}`, http.StatusOK, &poll)
	require.Equal(t, "complete", poll["status"])
	status, me := whoami(t, base, poll["access_token"].(string))
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "bea@example.com", me["user"].(map[string]any)["email"])
	// The device code is spent.
	postJSON(t, base+"/auth/cli/device/token", "", `{"device_code":"`+device+`"}`, http.StatusBadRequest, nil)
}
