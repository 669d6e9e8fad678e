package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/service/identity"
)

func (w *world) page(method, path, sso string, form url.Values) *httptest.ResponseRecorder {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	req.AddCookie(&http.Cookie{Name: "holdco_sso", Value: sso})
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	return rec
}

// TestDevicePageDatabaseFailureIs500: with the database gone, the approval
// page answers 500 and logs the failure (not 404 "no such code" or 409
// "already answered"); the user's code is not in the log.
func TestDevicePageDatabaseFailureIs500(t *testing.T) {
	w := newWorld(t)
	sso := w.sso[userA]
	start, err := w.svc.Identity.StartDevice(context.Background(), "192.0.2.1")
	require.NoError(t, err)
	rec := w.page(http.MethodGet, "/auth/cli/device?user_code="+start.UserCode, sso, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	principal, err := w.svc.Identity.SessionFromCookie(context.Background(), sso)
	require.NoError(t, err)
	csrf := w.svc.Identity.DeviceCSRFToken(principal, start.UserCode)

	// A refusal of the service keeps its own status.
	rec = w.page(http.MethodGet, "/auth/cli/device?user_code=BCDF-GHJK", sso, nil)
	assert.Equal(t, http.StatusNotFound, rec.Code)

	require.NoError(t, w.store.Close())
	rec = w.page(http.MethodGet, "/auth/cli/device?user_code="+start.UserCode, sso, nil)
	assert.Equal(t, http.StatusInternalServerError, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "Something went wrong")
	assert.NotContains(t, rec.Body.String(), "closed")

	rec = w.page(http.MethodPost, "/auth/cli/device", sso, url.Values{"user_code": {start.UserCode}, "csrf": {csrf}, "decision": {"approve"}})
	assert.Equal(t, http.StatusInternalServerError, rec.Code, rec.Body.String())

	logs := w.logs.String()
	assert.Contains(t, logs, "page failed")
	assert.NotContains(t, logs, start.UserCode)
}

// TestOwnFormPostsAreAcceptedBySecFetchSite: holdco's pages send
// Referrer-Policy same-origin, and a browser posting one of their forms
// says Sec-Fetch-Site: same-origin, whatever its Origin (a no-referrer
// page makes Chromium send Origin: null). A sandboxed tenant page posts
// cross-site (also with Origin: null) and is refused, as is a browser
// without Sec-Fetch-Site whose Origin is null.
func TestOwnFormPostsAreAcceptedBySecFetchSite(t *testing.T) {
	w := newWorld(t)
	sso := w.sso[userA]
	principal, err := w.svc.Identity.SessionFromCookie(context.Background(), sso)
	require.NoError(t, err)
	post := func(headers map[string]string) *httptest.ResponseRecorder {
		start, err := w.svc.Identity.StartDevice(context.Background(), "192.0.2.9")
		require.NoError(t, err)
		form := url.Values{"user_code": {start.UserCode}, "csrf": {w.svc.Identity.DeviceCSRFToken(principal, start.UserCode)}, "decision": {"approve"}}
		req := httptest.NewRequest(http.MethodPost, "/auth/cli/device", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		req.AddCookie(&http.Cookie{Name: "holdco_sso", Value: sso})
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, req)
		return rec
	}
	rec := post(map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "null"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "Approved")
	assert.Equal(t, "same-origin", rec.Header().Get("Referrer-Policy"))
	assert.Contains(t, rec.Body.String(), `<meta name="referrer" content="same-origin">`)
	require.Equal(t, http.StatusOK, post(map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://holdco.test"}).Code)
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "null"}, // a sandboxed tenant page
		{"Sec-Fetch-Site": "same-site", "Origin": "http://sites.holdco.test"},
		{"Sec-Fetch-Site": "cross-site", "Origin": "http://holdco.test"},
		{"Origin": "null"},
		{"Origin": "http://evil.example"},
	} {
		rec := post(h)
		assert.Equal(t, http.StatusForbidden, rec.Code, "%v", h)
		assert.Contains(t, rec.Body.String(), "not sent from holdco&#39;s page", "%v", h)
	}

	// The domain checkout's confirmation follows the same rule.
	form := url.Values{"t": {"unknown"}}.Encode()
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Sec-Fetch-Site": {"same-origin"}, "Origin": {"null"}}
	rec = w.doWith(http.MethodPost, "/domains/checkout/confirm", anon, form, h)
	assert.NotEqual(t, http.StatusForbidden, rec.Code, rec.Body.String())
	h.Set("Sec-Fetch-Site", "cross-site")
	rec = w.doWith(http.MethodPost, "/domains/checkout/confirm", anon, form, h)
	assert.Equal(t, http.StatusForbidden, rec.Code)
}

// TestLogoutByGetFromAnotherSiteKeepsTheCookie: any page can send a
// browser to GET /auth/logout; from another site, it clears the SSO
// cookie only with a token of the cookie's own user.
func TestLogoutByGetFromAnotherSiteKeepsTheCookie(t *testing.T) {
	w := newWorld(t)
	logout := func(token, sso, site string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/auth/logout?token="+url.QueryEscape(token), nil)
		if sso != "" {
			req.AddCookie(&http.Cookie{Name: "holdco_sso", Value: sso})
		}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, req)
		require.Equal(t, http.StatusFound, rec.Code, rec.Body.String())
		return rec
	}
	clears := func(rec *httptest.ResponseRecorder) bool {
		for _, c := range rec.Result().Cookies() {
			if c.Name == "holdco_sso" && c.MaxAge < 0 {
				return true
			}
		}
		return false
	}
	ada, adaToken := w.sso[userA], w.creds[userA]
	for _, site := range []string{"cross-site", "same-site"} {
		assert.False(t, clears(logout("garbage", ada, site)), "a tenant page's navigation, no token: %s", site)
		assert.False(t, clears(logout(w.creds[userB], ada, site)), "another user's token: %s", site)
	}
	w.call("GET", "/auth/me", userA, "", http.StatusOK, nil)
	assert.True(t, clears(logout("garbage", ada, "same-origin")), "holdco's own page")
	assert.True(t, clears(logout("garbage", ada, "none")), "typed in the address bar")
	assert.True(t, clears(logout("garbage", ada, "")), "not a browser")
	assert.True(t, clears(logout("garbage", "", "cross-site")), "no session in the cookie: nothing to protect")
	assert.True(t, clears(logout(adaToken, ada, "cross-site")), "the cookie's own user's token (the frontend's logout link)")
	w.call("GET", "/auth/me", userA, "", http.StatusUnauthorized, nil)
}

// TestSSOCookieIsNoBearer: the cookie a browser sign-in sets opens
// holdco's pages but is refused as a REST bearer (401), and a REST bearer
// does not open the pages.
func TestSSOCookieIsNoBearer(t *testing.T) {
	w := newWorld(t)
	req := httptest.NewRequest(http.MethodGet, "/auth/me", nil)
	req.Header.Set("Authorization", "Bearer "+w.sso[userA])
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())

	rec = w.page(http.MethodGet, "/auth/cli/device", w.sso[userA], nil)
	assert.Equal(t, http.StatusOK, rec.Code, "the cookie opens the approval page")
	rec = w.page(http.MethodGet, "/auth/cli/device", w.creds[userA], nil)
	assert.Equal(t, http.StatusFound, rec.Code, "a bearer is no page session: sign in first")
}

// TestDeviceStartAnswers429WithRetryAfter: a hundred starts in a row from
// one address get DeviceStartsPerMinute device codes, then 429 with
// Retry-After.
func TestDeviceStartAnswers429WithRetryAfter(t *testing.T) {
	w := newWorld(t)
	ok, limited := 0, 0
	for range 100 {
		rec := w.do(http.MethodPost, "/auth/cli/device/start", anon, "")
		switch rec.Code {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			limited++
			assert.NotEmpty(t, rec.Header().Get("Retry-After"))
			assert.Contains(t, rec.Body.String(), `"rate_limited"`)
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
	// Windows are whole minutes: the run may straddle two of them.
	assert.GreaterOrEqual(t, ok, identity.DeviceStartsPerMinute)
	assert.LessOrEqual(t, ok, 2*identity.DeviceStartsPerMinute)
	assert.Equal(t, 100, ok+limited)
}
