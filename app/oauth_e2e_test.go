package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/models"
	"holdco/service"
	"holdco/testenv"
)

// startOAuth runs the api role (for the embedded identity provider) and
// the oauth role.
func startOAuth(t *testing.T) *app.App {
	t.Helper()
	a := runApp(t, embeddedConfig(t, t.TempDir(), nil), app.RoleAPI, app.RoleOAuth)
	return a
}

// The full flow with the npm oauth4webapi client against the running
// server and its embedded identity provider: discovery, registration,
// sign-in, consent, PKCE, iss and state, code replay, revocation.
func TestOAuthFlowWithOAuth4WebAPI(t *testing.T) {
	t.Parallel()
	testenv.NodeScripts(t, "oauth")
	a := startOAuth(t)
	svc := a.Service.OAuth
	out := node(t, "oauth", []string{"ISSUER=" + svc.Issuer(), "RESOURCE=" + svc.Resource()}, "flow.mjs")
	var res struct {
		AccessToken   string          `json:"access_token"`
		ReplayedToken string          `json:"replayed_token"`
		RevokedToken  string          `json:"revoked_token"`
		ClientID      string          `json:"client_id"`
		Checks        map[string]bool `json:"checks"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), "%s", out)
	for _, c := range []string{"iss", "state", "pkce", "replay", "revoke"} {
		assert.True(t, res.Checks[c], c)
	}
	ctx := context.Background()
	p, err := svc.Introspect(ctx, res.AccessToken)
	require.NoError(t, err)
	assert.Equal(t, service.CredentialOAuthAccess, p.Credential)
	assert.Equal(t, res.ClientID, p.ClientID)
	assert.NotEmpty(t, p.ConglomerateID)
	for _, dead := range []string{res.ReplayedToken, res.RevokedToken} {
		_, err = svc.Introspect(ctx, dead)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
	}
}

// chromium is the system's Chromium (testenv.Chromium).
func chromium(t *testing.T) string { return testenv.Chromium(t) }

// The consent page cannot be spoofed: hidden characters in client names
// are refused at registration, and redirect hosts show in ASCII, as
// Chromium renders the page.
func TestConsentPageSpoofingInChromium(t *testing.T) {
	t.Parallel()
	testenv.NodeScripts(t, "oauth")
	bin := chromium(t)
	a := startOAuth(t)
	svc := a.Service.OAuth
	out := node(t, "oauth", []string{"ISSUER=" + svc.Issuer(), "RESOURCE=" + svc.Resource(), "CHROMIUM=" + bin}, "spoofing.mjs")
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res), "%s", out)
	assert.Equal(t, true, res["names_refused"])
	assert.Equal(t, true, res["ascii_hosts"])
	assert.Contains(t, res["receiver"], "xn--exmple-4nf.com")
}

// The consent page in headless Chromium: Allow, Deny and Switch account.
func TestConsentPageInChromium(t *testing.T) {
	t.Parallel()
	testenv.NodeScripts(t, "oauth")
	bin := chromium(t)
	a := startOAuth(t)
	svc := a.Service.OAuth
	out := node(t, "oauth", []string{"ISSUER=" + svc.Issuer(), "RESOURCE=" + svc.Resource(), "CHROMIUM=" + bin}, "consent.mjs")
	var res map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &res), "%s", out)
	for _, c := range []string{"allow", "deny", "switch"} {
		assert.Equal(t, true, res[c], c)
	}
}
