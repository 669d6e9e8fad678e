package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/testenv"
)

// TestMCPRoleServesTheConnector: the mcp listener serves the connector at
// its root, the protected resource metadata naming its public URL and the
// authorization server, and a 401 pointing at it; GET /health stays.
func TestMCPRoleServesTheConnector(t *testing.T) {
	t.Parallel()
	temporal := testenv.NewTemporal(t, nil)
	cfg := embeddedConfig(t, t.TempDir(), map[string]string{
		"TEMPORAL_ADDRESS": temporal.Server.GetFrontendHostPort(), "TEMPORAL_NAMESPACE": temporal.Namespace,
		"HOLDCO_MCP_PUBLIC_URL": "http://mcp.test", "HOLDCO_OAUTH_PUBLIC_URL": "http://auth.test"})
	a := startRoles(t, cfg, app.RoleMCP)
	base := "http://" + a.MCPAddr()

	status, meta := getJSON(t, base+"/.well-known/oauth-protected-resource")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "http://mcp.test", meta["resource"])
	assert.Equal(t, []any{"http://auth.test"}, meta["authorization_servers"])
	assert.Equal(t, []any{"nanocorp"}, meta["scopes_supported"])

	req, err := http.NewRequest(http.MethodPost, base+"/", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	req.Header.Set("Authorization", "Bearer svc_u_v1_a-cli-session-key")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, `Bearer resource_metadata="http://mcp.test/.well-known/oauth-protected-resource"`, resp.Header.Get("WWW-Authenticate"))

	// Behind a proxy on loopback, requests carry the public name.
	req, err = http.NewRequest(http.MethodPost, base+"/", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	require.NoError(t, err)
	req.Host = "mcp.test"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "not refused for its Host")

	status, health := getJSON(t, base+"/health")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok", health["database"])
}
