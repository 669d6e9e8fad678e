package oauth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/testenv"
)

// TestCallbackRefusesAnotherBrowsersSignIn: login CSRF on the
// authorization server's origin. The attacker starts a sign-in, signs in
// at the provider as themselves and hands the victim the callback URL;
// the victim's browser (which did not start that sign-in) is not signed
// in, so the consent page cannot connect the victim's assistant to the
// attacker's account. The attacker's own browser finishes normally.
func TestCallbackRefusesAnotherBrowsersSignIn(t *testing.T) {
	w := newWorld(t, nil, nil)
	client := w.registerClient("http://127.0.0.1:9999/cb")
	attacker, victim := w.browser(), w.browser()
	toIdP := w.authorize(attacker, authParams(client, "http://127.0.0.1:9999/cb"))
	require.Equal(t, http.StatusFound, toIdP.StatusCode)
	state := testenv.StateOf(t, toIdP.Header.Get("Location"))
	callback := "/oidc/callback?" + url.Values{"code": {w.env.IdP.Approve(state, "mallory@example.com", "mallory")}, "state": {state}}.Encode()

	resp := w.get(victim, callback)
	body := page(t, resp)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, "not started in this browser")
	for _, c := range resp.Cookies() {
		assert.False(t, strings.Contains(c.Name, "oauth_session") && c.MaxAge >= 0, "no session cookie: %s", c.Name)
	}
	// Still not signed in: the authorization request goes to sign-in.
	again := w.authorize(victim, authParams(client, "http://127.0.0.1:9999/cb"))
	require.Equal(t, http.StatusFound, again.StatusCode)
	assert.True(t, strings.HasPrefix(again.Header.Get("Location"), "https://idp.test/"))

	back := w.get(attacker, callback)
	require.Equal(t, http.StatusFound, back.StatusCode, "the browser that started it signs in (the code was not spent)")
	assert.True(t, strings.HasPrefix(back.Header.Get("Location"), "/oidc/authorize?"))
}
