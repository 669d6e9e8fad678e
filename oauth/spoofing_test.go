package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	authz "holdco/service/oauth"
)

// TestClientNamesWithHiddenCharactersAreRefused: dynamic registration
// refuses a client_name with a format (Cf) or control character with a
// clear invalid_client_metadata, so no name can pass for another on the
// consent page.
func TestClientNamesWithHiddenCharactersAreRefused(t *testing.T) {
	w := newWorld(t, nil, nil)
	for _, name := range []string{"Cl\u200baude", "\u202eedualC", "Claude\u2066", "\ufeffClaude", "Cla\u00adude", "Claude\u2028Code", "Cl\u0085aude"} {
		b, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": []string{"https://app.example/cb"}})
		status, m := w.register(string(b))
		assert.Equal(t, http.StatusBadRequest, status, "%q: %v", name, m)
		assert.Equal(t, "invalid_client_metadata", m["error"], "%q", name)
		assert.Contains(t, m["error_description"], "client_name", "%q", name)
	}
	// Ordinary names in any script stay allowed.
	for _, name := range []string{"Claude", "Клод", "クロード", "Assistant (beta) — v2"} {
		b, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": []string{"https://app.example/cb"}})
		status, m := w.register(string(b))
		assert.Equal(t, http.StatusCreated, status, "%q: %v", name, m)
	}
}

// TestMetadataDocumentNameWithHiddenCharactersIsRefused: the same rule for
// a client ID metadata document, shown on the service's error page.
func TestMetadataDocumentNameWithHiddenCharactersIsRefused(t *testing.T) {
	ms := newMetadataServer(t)
	fetcher := &authz.Fetcher{Resolver: fixedResolver{"example.com": addrs("127.0.0.1")}, RootCAs: ms.pool(),
		AllowAddr: func(a netip.Addr) bool { return a.IsLoopback() }, Timeout: 5 * time.Second}
	w := newWorld(t, fetcher, nil)
	id := ms.url("/client.json")
	ms.serve(200, "application/json", "", `{"client_id":"`+id+`","client_name":"Cl\u200baude","redirect_uris":["https://doc.example/cb"]}`)
	resp := w.authorize(w.browser(), authParams(id, "https://doc.example/cb"))
	body := page(t, resp)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	assert.Contains(t, body, "client_name must not contain invisible")
	assert.Contains(t, body, "U&#43;200B")
}

// TestConsentPageShowsRedirectHostsInASCII: a redirect host with a
// Cyrillic а (exаmple.com) is shown in punycode on the consent page, never
// as a look-alike of example.com.
func TestConsentPageShowsRedirectHostsInASCII(t *testing.T) {
	w := newWorld(t, nil, nil)
	redirect := "https://ex\u0430mple.com/callback"
	b, _ := json.Marshal(map[string]any{"client_name": "Look-alike", "redirect_uris": []string{redirect}})
	status, m := w.register(string(b))
	require.Equal(t, http.StatusCreated, status, m)
	c := w.browser()
	resp := w.signIn(c, w.authorize(c, authParams(m["client_id"].(string), redirect)), "ada@example.com")
	body := page(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, "https://xn--exmple-4nf.com")
	assert.NotContains(t, body, "ex\u0430mple")
	assert.False(t, strings.ContainsFunc(body[strings.Index(body, "<body>"):], func(r rune) bool { return r == '\u0430' }))
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "https://xn--exmple-4nf.com")
}
