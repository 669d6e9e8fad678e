package oauth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/oauth"
	"holdco/service"
	authz "holdco/service/oauth"
)

func TestDiscovery(t *testing.T) {
	w := newWorld(t, nil, nil)
	status, m := decode(t, w.get(http.DefaultClient, "/.well-known/oauth-authorization-server"))
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, w.srv.URL, m["issuer"])
	assert.Equal(t, w.srv.URL+"/oidc/authorize", m["authorization_endpoint"])
	assert.Equal(t, w.srv.URL+"/oidc/token", m["token_endpoint"])
	assert.Equal(t, w.srv.URL+"/oidc/register", m["registration_endpoint"])
	assert.Equal(t, w.srv.URL+"/oidc/revoke", m["revocation_endpoint"])
	assert.Equal(t, []any{"code"}, m["response_types_supported"])
	assert.Equal(t, []any{"authorization_code"}, m["grant_types_supported"])
	assert.Equal(t, []any{"S256"}, m["code_challenge_methods_supported"])
	assert.Equal(t, []any{"none"}, m["token_endpoint_auth_methods_supported"])
	assert.Equal(t, []any{"nanocorp"}, m["scopes_supported"], "offline_access is accepted but never advertised")
	assert.Equal(t, true, m["client_id_metadata_document_supported"])
	assert.Equal(t, true, m["authorization_response_iss_parameter_supported"])
	health := w.get(http.DefaultClient, "/nope")
	assert.Equal(t, http.StatusNotFound, health.StatusCode)
}

// Rule 12b: dynamic registration.
func TestRegistrationRules(t *testing.T) {
	w := newWorld(t, nil, nil)
	cases := []struct {
		name, body string
		status     int
		errCode    string
	}{
		{"web https", `{"client_name":"A","redirect_uris":["https://a.example/cb"]}`, 201, ""},
		{"native loopback any host", `{"client_name":"A","application_type":"native","redirect_uris":["http://127.0.0.1/cb","http://[::1]:8080/x","http://localhost:3000/a/b"]}`, 201, ""},
		{"grant types with refresh", `{"client_name":"A","redirect_uris":["https://a.example/cb"],"grant_types":["refresh_token","authorization_code"]}`, 201, ""},
		{"unknown fields and logo ignored", `{"client_name":"A","redirect_uris":["https://a.example/cb"],"logo_uri":"http://x","jwks":{},"software_id":"x"}`, 201, ""},
		{"auth method none", `{"client_name":"A","redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"none","response_types":["code"]}`, 201, ""},
		{"client_uri https", `{"client_name":"A","redirect_uris":["https://a.example/cb"],"client_uri":"https://a.example"}`, 201, ""},
		{"no redirect uris", `{"client_name":"A"}`, 400, "invalid_redirect_uri"},
		{"empty redirect uris", `{"client_name":"A","redirect_uris":[]}`, 400, "invalid_redirect_uri"},
		{"eleven redirect uris", `{"client_name":"A","redirect_uris":["https://a/1","https://a/2","https://a/3","https://a/4","https://a/5","https://a/6","https://a/7","https://a/8","https://a/9","https://a/10","https://a/11"]}`, 400, "invalid_redirect_uri"},
		{"web http loopback", `{"client_name":"A","redirect_uris":["http://127.0.0.1:3000/cb"]}`, 400, "invalid_redirect_uri"},
		{"native http elsewhere", `{"client_name":"A","application_type":"native","redirect_uris":["http://a.example/cb"]}`, 400, "invalid_redirect_uri"},
		{"custom scheme", `{"client_name":"A","application_type":"native","redirect_uris":["com.example:/cb"]}`, 400, "invalid_redirect_uri"},
		{"fragment", `{"client_name":"A","redirect_uris":["https://a.example/cb#x"]}`, 400, "invalid_redirect_uri"},
		// Shown whole on the consent page: a right-to-left override would
		// draw part of it reversed, a zero-width space hide in the host.
		{"right-to-left override", `{"client_name":"A","redirect_uris":["https://evil.example/cb?x=\u202egro.elpmaxe-tsurt//:sptth"]}`, 400, "invalid_redirect_uri"},
		{"zero-width space", `{"client_name":"A","redirect_uris":["https://a.example/c\u200bb"]}`, 400, "invalid_redirect_uri"},
		{"bad application type", `{"client_name":"A","application_type":"desktop","redirect_uris":["https://a.example/cb"]}`, 400, "invalid_client_metadata"},
		{"implicit grant", `{"client_name":"A","redirect_uris":["https://a.example/cb"],"grant_types":["implicit"]}`, 400, "invalid_client_metadata"},
		{"client credentials", `{"client_name":"A","redirect_uris":["https://a.example/cb"],"grant_types":["authorization_code","client_credentials"]}`, 400, "invalid_client_metadata"},
		{"token response type", `{"client_name":"A","redirect_uris":["https://a.example/cb"],"response_types":["token"]}`, 400, "invalid_client_metadata"},
		{"secret auth method", `{"client_name":"A","redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`, 400, "invalid_client_metadata"},
		{"no name", `{"redirect_uris":["https://a.example/cb"]}`, 400, "invalid_client_metadata"},
		{"empty name", `{"client_name":"","redirect_uris":["https://a.example/cb"]}`, 400, "invalid_client_metadata"},
		{"name of 65", `{"client_name":"` + strings.Repeat("n", 65) + `","redirect_uris":["https://a.example/cb"]}`, 400, "invalid_client_metadata"},
		{"name with NUL", `{"client_name":"a\u0000b","redirect_uris":["https://a.example/cb"]}`, 400, "invalid_client_metadata"},
		{"client_uri http", `{"client_name":"A","redirect_uris":["https://a.example/cb"],"client_uri":"http://a.example"}`, 400, "invalid_client_metadata"},
		{"not an object", `[1,2]`, 400, "invalid_client_metadata"},
		{"redirect not strings", `{"client_name":"A","redirect_uris":[1]}`, 400, "invalid_client_metadata"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, m := w.register(c.body)
			require.Equal(t, c.status, status, m)
			if c.errCode != "" {
				assert.Equal(t, c.errCode, m["error"])
				assert.NotEmpty(t, m["error_description"])
				return
			}
			assert.NotEmpty(t, m["client_id"])
			assert.NotZero(t, m["client_id_issued_at"])
			assert.NotContains(t, m, "client_secret")
			assert.Equal(t, []any{"authorization_code"}, m["grant_types"], "refresh_token is stored as authorization_code only")
			assert.Equal(t, "none", m["token_endpoint_auth_method"])
			assert.NotContains(t, m, "logo_uri")
		})
	}
	t.Run("wrong content type", func(t *testing.T) {
		resp, err := http.Post(w.srv.URL+"/oidc/register", "text/plain", strings.NewReader(`{}`))
		require.NoError(t, err)
		status, m := decode(t, resp)
		assert.Equal(t, 400, status)
		assert.Equal(t, "invalid_client_metadata", m["error"])
	})
	t.Run("body over 64 KB", func(t *testing.T) {
		status, m := w.register(`{"client_name":"` + strings.Repeat("a", 70<<10) + `"}`)
		assert.Equal(t, 400, status)
		assert.Equal(t, "invalid_client_metadata", m["error"])
	})
}

// A native client's loopback port is a port it can listen on, written
// plainly (its own world: the registration table above fills one
// address's registration burst).
func TestRegistrationRefusesLoopbackPortsNoClientListensOn(t *testing.T) {
	w := newWorld(t, nil, nil)
	for port, want := range map[string]int{"0": 400, "080": 400, "65536": 400, "+80": 400, "65535": 201, "1": 201} {
		status, m := w.register(`{"client_name":"A","application_type":"native","redirect_uris":["http://127.0.0.1:` + port + `/cb"]}`)
		require.Equal(t, want, status, "port %s: %v", port, m)
		if want == 400 {
			assert.Equal(t, "invalid_redirect_uri", m["error"], port)
		}
	}
}

// Rules 2–9 at the authorization endpoint, for a pre-registered client
// (errors go back to the client with iss) and a self-registered one
// (errors stay on a service page until a user approved the redirect).
func TestAuthorizationRequestRules(t *testing.T) {
	w := newWorld(t, nil, nil)
	self := w.registerClient("http://127.0.0.1:4000/cb", "https://self.example/cb")
	cases := []struct {
		name    string
		edit    func(q url.Values)
		errCode string // "" : valid (redirect to sign-in)
	}{
		{"valid", func(url.Values) {}, ""},
		{"scope openid and offline_access ignored", func(q url.Values) { q.Set("scope", "openid nanocorp offline_access") }, ""},
		{"scope absent", func(q url.Values) { q.Del("scope") }, ""},
		{"nonce ignored", func(q url.Values) { q.Set("nonce", "n") }, ""},
		{"resource the connector", func(q url.Values) { q.Set("resource", resource) }, ""},
		{"resource with trailing slash", func(q url.Values) { q.Set("resource", resource+"/") }, ""},
		{"resource empty", func(q url.Values) { q.Set("resource", "") }, ""},
		{"response_mode query", func(q url.Values) { q.Set("response_mode", "query") }, ""},
		{"state missing", func(q url.Values) { q.Del("state") }, "invalid_request"},
		{"challenge missing", func(q url.Values) { q.Del("code_challenge") }, "invalid_request"},
		{"challenge method missing", func(q url.Values) { q.Del("code_challenge_method") }, "invalid_request"},
		{"challenge method plain", func(q url.Values) { q.Set("code_challenge_method", "plain") }, "invalid_request"},
		{"challenge malformed", func(q url.Values) { q.Set("code_challenge", "short") }, "invalid_request"},
		{"response type token", func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		{"response type missing", func(q url.Values) { q.Del("response_type") }, "invalid_request"},
		{"unknown scope", func(q url.Values) { q.Set("scope", "nanocorp admin") }, "invalid_scope"},
		{"other resource", func(q url.Values) { q.Set("resource", "https://evil.example") }, "invalid_target"},
		{"prompt consent", func(q url.Values) { q.Set("prompt", "consent") }, "invalid_request"},
		{"prompt login", func(q url.Values) { q.Set("prompt", "login") }, "invalid_request"},
		{"max_age", func(q url.Values) { q.Set("max_age", "0") }, "invalid_request"},
		{"response_mode fragment", func(q url.Values) { q.Set("response_mode", "fragment") }, "invalid_request"},
		{"response_mode form_post", func(q url.Values) { q.Set("response_mode", "form_post") }, "invalid_request"},
	}
	for _, c := range cases {
		t.Run("preregistered/"+c.name, func(t *testing.T) {
			q := authParams(preClient.ID, preClient.RedirectURIs[0])
			c.edit(q)
			resp := w.authorize(w.browser(), q)
			require.Equal(t, http.StatusFound, resp.StatusCode)
			loc := resp.Header.Get("Location")
			if c.errCode == "" {
				assert.True(t, strings.HasPrefix(loc, "https://idp.test/"), loc)
				return
			}
			got := codeFrom(t, resp, w.srv.URL, preClient.RedirectURIs[0])
			assert.Equal(t, c.errCode, got.Get("error"))
			assert.Equal(t, q.Get("state"), got.Get("state"))
		})
		t.Run("self-registered/"+c.name, func(t *testing.T) {
			q := authParams(self, "https://self.example/cb")
			c.edit(q)
			resp := w.authorize(w.browser(), q)
			if c.errCode == "" {
				assert.Equal(t, http.StatusFound, resp.StatusCode)
				return
			}
			body := page(t, resp)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "rule 8: shown on a service page, not redirected")
			assert.Contains(t, body, c.errCode)
		})
	}
	// Never redirected, whatever the client: the redirect cannot be trusted.
	pageCases := []struct {
		name string
		q    url.Values
	}{
		{"unknown client", authParams("nobody", "https://partner.example/cb")},
		{"no client", func() url.Values { q := authParams("", "https://partner.example/cb"); q.Del("client_id"); return q }()},
		{"unregistered redirect", authParams(preClient.ID, "https://partner.example/other")},
		{"redirect with extra query", authParams(preClient.ID, "https://partner.example/cb?x=1")},
		{"redirect missing", func() url.Values { q := authParams(preClient.ID, ""); q.Del("redirect_uri"); return q }()},
		{"duplicate parameter", func() url.Values {
			q := authParams(preClient.ID, preClient.RedirectURIs[0])
			q.Add("state", "2")
			return q
		}()},
		{"web client other port", authParams(self, "https://self.example:444/cb")},
		{"request over 16 KB", func() url.Values {
			q := authParams(preClient.ID, preClient.RedirectURIs[0])
			q.Set("nonce", strings.Repeat("n", 17<<10))
			return q
		}()},
		{"native loopback other path", authParams(self, "http://127.0.0.1:4000/other")},
		{"native loopback other host", authParams(self, "http://localhost:4000/cb")},
	}
	for _, c := range pageCases {
		t.Run("page/"+c.name, func(t *testing.T) {
			resp := w.authorize(w.browser(), c.q)
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
			assert.Empty(t, resp.Header.Get("Location"))
		})
	}
	t.Run("rule 9: native loopback redirect matches on any port", func(t *testing.T) {
		resp := w.authorize(w.browser(), authParams(self, "http://127.0.0.1:51234/cb"))
		assert.Equal(t, http.StatusFound, resp.StatusCode)
		assert.True(t, strings.HasPrefix(resp.Header.Get("Location"), "https://idp.test/"))
	})
}

// Rules 6, 10, 11 and 13: the flow, the consent page, remembered consent,
// the token and its introspection.
func TestFlowConsentAndToken(t *testing.T) {
	w := newWorld(t, nil, nil)
	self := w.registerClient("http://127.0.0.1:4000/cb", "https://self.example/cb")
	c := w.browser()
	q := authParams(self, "http://127.0.0.1:4999/cb")
	resp := w.signIn(c, w.authorize(c, q), "ada@example.com")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	assert.Contains(t, csp, "form-action 'self' http://127.0.0.1:4999")
	assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	body := page(t, resp)
	for _, want := range []string{"Test Assistant", "Not verified", "this computer, port 4999", "act as you across all your businesses",
		"ada@example.com", "Switch account", `id="allow"`, `id="deny"`, `name="csrf"`} {
		assert.Contains(t, body, want)
	}
	// A forged form (no CSRF token) is refused.
	bad := w.decide(c, strings.Replace(body, `name="csrf" value="`, `name="csrf" value="x`, 1), "allow")
	assert.Equal(t, http.StatusBadRequest, bad.StatusCode)

	got := codeFrom(t, w.decide(c, body, "allow"), w.srv.URL, "http://127.0.0.1:4999/cb")
	assert.Equal(t, "st-123", got.Get("state"))
	code := got.Get("code")

	// Rule 3: public clients only.
	status, m := w.token(tokenForm(self, q.Get("redirect_uri"), code), true)
	assert.Equal(t, 400, status)
	assert.Equal(t, "invalid_request", m["error"])
	withSecret := tokenForm(self, q.Get("redirect_uri"), code)
	withSecret.Set("client_secret", "s")
	status, m = w.token(withSecret, false)
	assert.Equal(t, 400, status)
	assert.Equal(t, "invalid_request", m["error"])

	status, m = w.token(tokenForm(self, q.Get("redirect_uri"), code), false)
	require.Equal(t, 200, status, m)
	access := m["access_token"].(string)
	assert.True(t, strings.HasPrefix(access, authz.TokenPrefix))
	assert.Equal(t, "Bearer", m["token_type"])
	assert.Equal(t, "nanocorp", m["scope"])
	assert.NotContains(t, m, "id_token")
	assert.NotContains(t, m, "refresh_token")
	assert.NotContains(t, m, "expires_in")

	ctx := context.Background()
	p, err := w.svc.Introspect(ctx, access)
	require.NoError(t, err)
	assert.Equal(t, service.CredentialOAuthAccess, p.Credential)
	assert.Equal(t, self, p.ClientID)
	assert.NotEmpty(t, p.UserID)
	assert.NotEmpty(t, p.ConglomerateID)
	assert.NotEmpty(t, p.CredentialID)
	// Opaque: REST refuses it.
	_, err = w.env.Svc.Authenticate(ctx, access)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))

	// Rule 10: consent is remembered for the approved redirect URI
	// (any loopback port) ...
	again := w.authorize(c, authParams(self, "http://127.0.0.1:5000/cb"))
	codeFrom(t, again, w.srv.URL, "http://127.0.0.1:5000/cb")
	// ... and prompt=none gets a code too, and errors now redirect.
	pn := authParams(self, "http://127.0.0.1:4000/cb")
	pn.Set("prompt", "none")
	codeFrom(t, w.authorize(c, pn), w.srv.URL, "http://127.0.0.1:4000/cb")
	pn.Set("prompt", "login")
	assert.Equal(t, "invalid_request", codeFrom(t, w.authorize(w.browser(), pn), w.srv.URL, "http://127.0.0.1:4000/cb").Get("error"))
	// Another redirect URI asks again.
	other := w.authorize(c, authParams(self, "https://self.example/cb"))
	assert.Equal(t, http.StatusOK, other.StatusCode)
	assert.Contains(t, page(t, other), "self.example")

	// Revocation (RFC 7009): 200, and the token stops working.
	rv := func(form url.Values) int {
		resp, err := http.PostForm(w.srv.URL+"/oidc/revoke", form)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 200, rv(url.Values{"token": {"hco_at_v1_unknown"}, "client_id": {self}}))
	assert.Equal(t, 200, rv(url.Values{"token": {access}, "client_id": {"someone-else"}}), "another client's revocation is answered but ignored")
	_, err = w.svc.Introspect(ctx, access)
	require.NoError(t, err)
	assert.Equal(t, 400, rv(url.Values{"client_id": {self}}))
	assert.Equal(t, 200, rv(url.Values{"token": {access}, "client_id": {self}}))
	_, err = w.svc.Introspect(ctx, access)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
	for _, bad := range []string{"", "nope", authz.TokenPrefix, authz.TokenPrefix + strings.Repeat("x", 200)} {
		_, err = w.svc.Introspect(ctx, bad)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
	}
}

// Rule 7: prompt=none for a pre-registered client.
func TestPromptNone(t *testing.T) {
	w := newWorld(t, nil, nil)
	q := authParams(preClient.ID, preClient.RedirectURIs[0])
	q.Set("prompt", "none")
	c := w.browser()
	assert.Equal(t, "login_required", codeFrom(t, w.authorize(c, q), w.srv.URL, preClient.RedirectURIs[0]).Get("error"))
	// Signed in, no consent: consent_required.
	q2 := authParams(preClient.ID, preClient.RedirectURIs[0])
	resp := w.signIn(c, w.authorize(c, q2), "bob@example.com")
	body := page(t, resp)
	assert.Contains(t, body, "Registered with holdco")
	assert.Contains(t, body, "partner.example")
	assert.Equal(t, "consent_required", codeFrom(t, w.authorize(c, q), w.srv.URL, preClient.RedirectURIs[0]).Get("error"))
	// Deny goes back with access_denied.
	assert.Equal(t, "access_denied", codeFrom(t, w.decide(c, body, "deny"), w.srv.URL, preClient.RedirectURIs[0]).Get("error"))
	// After Allow, prompt=none answers a code.
	resp = w.authorize(c, q2)
	codeFrom(t, w.decide(c, page(t, resp), "allow"), w.srv.URL, preClient.RedirectURIs[0])
	got := codeFrom(t, w.authorize(c, q), w.srv.URL, preClient.RedirectURIs[0])
	assert.NotEmpty(t, got.Get("code"))
}

// Rule 8: Deny for a self-registered client whose redirect nobody
// approved stays on the service page.
func TestDenyUnapprovedStaysOnPage(t *testing.T) {
	w := newWorld(t, nil, nil)
	self := w.registerClient("https://self.example/cb")
	c := w.browser()
	resp := w.signIn(c, w.authorize(c, authParams(self, "https://self.example/cb")), "cy@example.com")
	denied := w.decide(c, page(t, resp), "deny")
	assert.Equal(t, http.StatusOK, denied.StatusCode)
	assert.Contains(t, page(t, denied), "access_denied")
	// Unapproved: prompt=none is a page too.
	q := authParams(self, "https://self.example/cb")
	q.Set("prompt", "none")
	assert.Equal(t, http.StatusBadRequest, w.authorize(c, q).StatusCode)
}

// Code replay, binding and lifetime.
func TestCodeRules(t *testing.T) {
	w := newWorld(t, nil, nil)
	self := w.registerClient("https://self.example/cb")
	other := w.registerClient("https://other.example/cb")
	c := w.browser()
	redirect := "https://self.example/cb"
	q := authParams(self, redirect)
	code := w.approveFlow(c, q, "dee@example.com")
	status, m := w.token(tokenForm(self, redirect, code), false)
	require.Equal(t, 200, status, m)
	first := m["access_token"].(string)
	_, err := w.svc.Introspect(context.Background(), first)
	require.NoError(t, err)
	// Replay fails and revokes what the code issued.
	status, m = w.token(tokenForm(self, redirect, code), false)
	assert.Equal(t, 400, status)
	assert.Equal(t, "invalid_grant", m["error"])
	_, err = w.svc.Introspect(context.Background(), first)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "a replayed code revokes its token")

	cases := []struct {
		name string
		edit func(f url.Values)
		code string
	}{
		{"other client", func(f url.Values) { f.Set("client_id", other); f.Set("redirect_uri", "https://other.example/cb") }, "invalid_grant"},
		{"other redirect", func(f url.Values) { f.Set("redirect_uri", "https://self.example/cb2") }, "invalid_grant"},
		{"wrong verifier", func(f url.Values) { f.Set("code_verifier", strings.Repeat("a", 43)) }, "invalid_grant"},
		{"other resource", func(f url.Values) { f.Set("resource", "https://evil.example") }, "invalid_target"},
		{"unknown client", func(f url.Values) { f.Set("client_id", "nobody") }, "invalid_client"},
		{"refresh grant", func(f url.Values) { f.Set("grant_type", "refresh_token") }, "unsupported_grant_type"},
		{"no verifier", func(f url.Values) { f.Del("code_verifier") }, "invalid_request"},
		{"resource with slash", func(f url.Values) { f.Set("resource", resource+"/") }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code := w.approveFlow(c, q, "dee@example.com")
			f := tokenForm(self, redirect, code)
			tc.edit(f)
			status, m := w.token(f, false)
			if tc.code == "" {
				assert.Equal(t, 200, status, m)
				return
			}
			assert.Equal(t, tc.code, m["error"], m)
			// A code is single-use: whatever the first attempt's outcome.
			if tc.code == "invalid_grant" || tc.code == "invalid_target" {
				status, m = w.token(tokenForm(self, redirect, code), false)
				assert.Equal(t, 400, status)
				assert.Equal(t, "invalid_grant", m["error"])
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		code := w.approveFlow(c, q, "dee@example.com")
		w.env.Clock.Advance(authz.CodeTTL + 1)
		_, m := w.token(tokenForm(self, redirect, code), false)
		assert.Equal(t, "invalid_grant", m["error"])
	})
}

// Rule 13: at most 100 live tokens per user per client, the oldest
// revoked, also under concurrent exchanges.
func TestLiveTokenLimit(t *testing.T) {
	big := oauth.Rate{PerMinute: 10_000, Burst: 10_000}
	w := newWorld(t, nil, &oauth.Limits{RegisterPerAddr: big, AuthorizePerAddr: big, AuthorizePerClient: big, TokenPerAddr: big, TokenPerClient: big})
	self := w.registerClient("https://self.example/cb")
	c := w.browser()
	q := authParams(self, "https://self.example/cb")
	var tokens []string
	for range authz.MaxLiveTokens {
		_, m := w.token(tokenForm(self, "https://self.example/cb", w.approveFlow(c, q, "eve@example.com")), false)
		tokens = append(tokens, m["access_token"].(string))
		w.env.Clock.Advance(time.Millisecond) // "oldest" is by issue time
	}
	codes := make([]string, 8)
	for i := range codes {
		codes[i] = w.approveFlow(c, q, "eve@example.com")
	}
	var wg sync.WaitGroup
	for _, code := range codes {
		wg.Go(func() {
			status, m := w.token(tokenForm(self, "https://self.example/cb", code), false)
			assert.Equal(t, 200, status, m)
		})
	}
	wg.Wait()
	p, err := w.svc.Introspect(context.Background(), tokens[len(tokens)-1])
	require.NoError(t, err)
	n, err := w.env.Store.OAuth().CountLiveOAuthTokens(context.Background(), p.UserID, self)
	require.NoError(t, err)
	assert.EqualValues(t, authz.MaxLiveTokens, n)
	for i, tok := range tokens[:len(codes)] {
		_, err := w.svc.Introspect(context.Background(), tok)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "token %d is among the oldest and revoked", i)
	}
}

// Abuse limits: per client address on registration and authorization;
// the clock's minute refills them.
func TestRateLimits(t *testing.T) {
	w := newWorld(t, nil, &oauth.Limits{RegisterPerAddr: oauth.Rate{PerMinute: 2, Burst: 2}, AuthorizePerAddr: oauth.Rate{PerMinute: 60, Burst: 60},
		AuthorizePerClient: oauth.Rate{PerMinute: 3, Burst: 3}, TokenPerAddr: oauth.Rate{PerMinute: 60, Burst: 60}, TokenPerClient: oauth.Rate{PerMinute: 2, Burst: 2}})
	body := `{"client_name":"A","redirect_uris":["https://a.example/cb"]}`
	s1, _ := w.register(body)
	s2, _ := w.register(body)
	s3, m := w.register(body)
	assert.Equal(t, []int{201, 201, 429}, []int{s1, s2, s3}, m)
	for i := range 4 {
		resp := w.authorize(w.browser(), authParams(preClient.ID, preClient.RedirectURIs[0]))
		want := http.StatusFound
		if i == 3 {
			want = http.StatusTooManyRequests
		}
		assert.Equal(t, want, resp.StatusCode)
	}
	for i := range 3 {
		status, _ := w.token(tokenForm(preClient.ID, preClient.RedirectURIs[0], "bogus"), false)
		want := 400
		if i == 2 {
			want = 429
		}
		assert.Equal(t, want, status)
	}
	w.env.Clock.Advance(time.Minute)
	s4, _ := w.register(body)
	assert.Equal(t, 201, s4)
}

// Two authorization-server replicas on one database count one limit: the
// registrations of an address are 2 across both, and the refusal says
// when to retry.
func TestRateLimitsAreSharedByReplicas(t *testing.T) {
	lim := &oauth.Limits{RegisterPerAddr: oauth.Rate{PerMinute: 2, Burst: 2}, AuthorizePerAddr: oauth.Rate{PerMinute: 60, Burst: 60},
		AuthorizePerClient: oauth.Rate{PerMinute: 60, Burst: 60}, TokenPerAddr: oauth.Rate{PerMinute: 60, Burst: 60}, TokenPerClient: oauth.Rate{PerMinute: 60, Burst: 60}}
	w := newWorld(t, nil, lim)
	replicas := []http.Handler{oauth.New(oauth.Deps{Service: w.svc, Logger: testLogger(), Limits: lim}),
		oauth.New(oauth.Deps{Service: w.env.Replica(t).OAuth, Logger: testLogger(), Limits: lim})}
	var statuses []int
	var retry string
	for i := range 4 {
		req := httptest.NewRequest(http.MethodPost, authz.RegisterPath, strings.NewReader(`{"client_name":"A","redirect_uris":["https://a.example/cb"]}`))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = "203.0.113.9:4000"
		rec := httptest.NewRecorder()
		replicas[i%2].ServeHTTP(rec, req)
		statuses = append(statuses, rec.Code)
		if rec.Code == http.StatusTooManyRequests {
			retry = rec.Header().Get("Retry-After")
		}
	}
	assert.Equal(t, []int{201, 201, 429, 429}, statuses)
	assert.Equal(t, "30", retry, "one registration every 30 s at 2 a minute")
}

// Rule 1 (the part the authorization server owns): only its access
// tokens introspect; API keys, CLI session keys, company keys, web
// session tokens and admin tokens are refused.
func TestIntrospectRefusesOtherCredentials(t *testing.T) {
	w := newWorld(t, nil, nil)
	web := w.env.WebLogin(t, "ivy@example.com", "ivy")
	ctx := w.env.As(t, web)
	pat, err := w.env.Svc.CreatePersonalToken(ctx, "x", nil)
	require.NoError(t, err)
	for name, raw := range map[string]string{"web session": web, "personal token": pat.Raw, "company key": "svc_c_v1_abc",
		"admin": "svc_a_v1_abc", "empty": "", "bearer prefix": "Bearer " + pat.Raw} {
		_, err := w.svc.Introspect(context.Background(), raw)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated), name)
	}
}

// Rule 10: consent is asked again for a new registration, a changed
// consent page version, and (metadata documents) a changed redirect list.
func TestConsentAskedAgain(t *testing.T) {
	w := newWorld(t, nil, nil)
	c := w.browser()
	first := w.registerClient("https://self.example/cb")
	w.approveFlow(c, authParams(first, "https://self.example/cb"), "jo@example.com")
	codeFrom(t, w.authorize(c, authParams(first, "https://self.example/cb")), w.srv.URL, "https://self.example/cb")

	again := w.registerClient("https://self.example/cb")
	assert.Equal(t, http.StatusOK, w.authorize(c, authParams(again, "https://self.example/cb")).StatusCode, "a new registration asks again")

	_, err := w.env.SQL.Exec("UPDATE oauth_consents SET version = 0")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, w.authorize(c, authParams(first, "https://self.example/cb")).StatusCode, "an updated consent page asks again")
}

func TestConsentAskedAgainWhenRedirectListChanges(t *testing.T) {
	ms := newMetadataServer(t)
	fetcher := &authz.Fetcher{Resolver: fixedResolver{"example.com": addrs("127.0.0.1")}, RootCAs: ms.pool(),
		AllowAddr: func(a netip.Addr) bool { return a.IsLoopback() }}
	w := newWorld(t, fetcher, nil)
	id := ms.url("/client.json")
	ms.serve(200, "application/json", "no-store", doc(id, ""))
	c := w.browser()
	q := authParams(id, "https://doc.example/cb")
	w.approveFlow(c, q, "kim@example.com")
	codeFrom(t, w.authorize(c, q), w.srv.URL, "https://doc.example/cb")
	ms.serve(200, "application/json", "no-store", `{"client_id":"`+id+`","client_name":"Doc Assistant","redirect_uris":["https://doc.example/cb","https://doc.example/new"]}`)
	assert.Equal(t, http.StatusOK, w.authorize(c, q).StatusCode, "a changed redirect list asks again")
}

// Registrations nobody used expire after a day; used ones stay.
func TestUnusedRegistrationsExpire(t *testing.T) {
	w := newWorld(t, nil, nil)
	unused := w.registerClient("https://self.example/cb")
	used := w.registerClient("https://self.example/cb")
	c := w.browser()
	w.token(tokenForm(used, "https://self.example/cb", w.approveFlow(c, authParams(used, "https://self.example/cb"), "lu@example.com")), false)
	w.env.Clock.Advance(authz.UnusedClientTTL + time.Minute)
	w.registerClient("https://self.example/cb") // registering sweeps
	assert.Equal(t, http.StatusBadRequest, w.authorize(w.browser(), authParams(unused, "https://self.example/cb")).StatusCode)
	assert.Equal(t, http.StatusFound, w.authorize(c, authParams(used, "https://self.example/cb")).StatusCode, "the used client is still known (sign-in again: the session lasted 12 h)")
}
