package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"holdco/service/founding"
)

// e2eDir holds the Node end-to-end scripts and their pinned clients.
var e2eDir = filepath.Join("..", "scripts", "e2e", "connector")

// node runs one of the scripts against the connector; it skips (saying
// why) when Node or the scripts' dependencies are missing (`make test`
// installs them with npm ci).
func node(t *testing.T, script string, env ...string) {
	t.Helper()
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the official TypeScript clients cannot run")
	}
	if _, err := os.Stat(filepath.Join(e2eDir, "node_modules", "@modelcontextprotocol")); err != nil {
		t.Skip("the e2e scripts' dependencies are not installed: run `npm ci` in scripts/e2e/connector (make test does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, script)
	cmd.Dir = e2eDir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", script, out)
	require.NoError(t, err, "%s failed", script)
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
	w.founding.firstRun = founding.FirstPass{Status: founding.FirstPassSkipped, Detail: "The business has its plan already."}
	node(t, "connector.mjs", "MCP_URL="+w.url, "E2E_BEARER="+w.token)
}
