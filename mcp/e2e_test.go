package mcp_test

import (
	"testing"

	"holdco/service/founding"
	"holdco/testenv"
)

// node runs one of the official TypeScript clients' scripts
// (scripts/e2e/connector) against the connector (testenv.NodeScripts:
// installed by `make e2e-deps`; a failure under CI, a skip otherwise).
func node(t *testing.T, script string, env ...string) {
	t.Helper()
	testenv.RunNode(t, testenv.NodeScripts(t, "connector"), env, script)
}

// TestOlderOfficialClientGetsUnsupportedProtocolVersion: the 2025 client
// (@modelcontextprotocol/sdk 1.32.2) is refused with -32022.
func TestOlderOfficialClientGetsUnsupportedProtocolVersion(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	node(t, "old-sdk.mjs", "MCP_URL="+w.url)
}

// TestOfficialClientRunsTasks: @modelcontextprotocol/client 2.4.0 pinned
// to 2026-07-28 with ext-tasks 0.2.2 creates a business, runs a message
// as a task to completion and cancels another. The token comes from the
// fake introspector; the OAuth part of the script runs once the
// authorization server is wired (E2E_BEARER unset).
func TestOfficialClientRunsTasks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// Under the fake's lock: the race detector does not see the node
	// process's requests come after this write.
	w.founding.mu.Lock()
	w.founding.firstRun = founding.FirstPass{Status: founding.FirstPassSkipped, Detail: "The business has its plan already."}
	w.founding.mu.Unlock()
	node(t, "connector.mjs", "MCP_URL="+w.url, "E2E_BEARER="+w.token)
}
