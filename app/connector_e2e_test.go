package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/models"
	"holdco/testenv"
)

// TestConnectorEndToEndWithOAuth runs the whole app (every role, the
// embedded identity provider, the scripted model) and the official
// TypeScript client (@modelcontextprotocol/client 2.4.0 pinned to
// 2026-07-28, ext-tasks 0.2.2) without a token: it meets the connector's
// 401, discovers the authorization server, registers, signs in at the
// development provider, approves the consent page, redeems the code with
// PKCE, and with that token creates a business, runs send_message as a
// task polled to completion and cancels another with tasks/cancel. The
// older client (@modelcontextprotocol/sdk 1.32.2) is refused with -32022
// by the same listener.
func TestConnectorEndToEndWithOAuth(t *testing.T) {
	t.Parallel()
	testenv.NodeScripts(t, "connector")
	ctx := t.Context()
	// A scripted step of 300ms: the cancelled task's turn (three model
	// calls) is still running when tasks/cancel arrives; with 0s it could
	// end before.
	cfg := embeddedConfig(t, t.TempDir(), map[string]string{
		"DATABASE_URL": testenv.DatabaseURL(t), "HOLDCO_LLM_SCRIPTED_STEP_DELAY": "300ms"})
	a := runApp(t, cfg, app.AllRoles...)
	t.Logf("database: %s", a.Store.Dialect())
	mcpURL := "http://" + a.MCPAddr()
	require.Equal(t, mcpURL, a.Service.OAuth.Resource(), "tokens are bound to the connector's own address")

	t.Run("older client gets -32022", func(t *testing.T) {
		out := node(t, "connector", []string{"MCP_URL=" + mcpURL}, "old-sdk.mjs")
		assert.Contains(t, out, "refused with -32022")
	})

	// The user signs up at the development provider (the password is the
	// one the script types on the sign-in page). create_business grants
	// the welcome credits, which the first pass mostly spends: two more
	// turns need more.
	const email, password = "connector-e2e@example.com", "correct horse"
	base := "http://" + a.APIAddr()
	key := cliLogin(t, base, email)
	cong := authedJSON(t, "GET", base+"/auth/me", key, "", 200)["conglomerate_id"].(string)
	_, err := a.Service.Billing.GrantCredits(ctx, a.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 50, "connector e2e")
	require.NoError(t, err)

	out := node(t, "connector", []string{"MCP_URL=" + mcpURL, "E2E_EMAIL=" + email, "E2E_PASSWORD=" + password, "E2E_TIMEOUT_MS=240000"}, "connector.mjs")
	assert.Contains(t, out, "ok: OAuth, create_business, ")
	assert.Contains(t, out, "a task polled to completion, a task cancelled")

	// The assistant is one of the user's connections, with its live token.
	req, err := http.NewRequest(http.MethodGet, base+"/auth/connections", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var conns []struct {
		ClientName  string `json:"client_name"`
		RedirectURI string `json:"redirect_uri"`
		LiveTokens  int64  `json:"live_tokens"`
	}
	require.NoError(t, json.Unmarshal(raw, &conns), "%s", raw)
	require.Len(t, conns, 1, "%s", raw)
	assert.Equal(t, "holdco e2e", conns[0].ClientName)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+/callback$`, conns[0].RedirectURI)
	assert.Equal(t, int64(1), conns[0].LiveTokens)
}
