package mcp_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/tools/*.json with the served tools/list")

// TestToolsListIsGolden: tools/list (names in order, cache hints) and each
// tool's description and schemas are what testdata/tools holds; a change
// to a tool's interface shows in review.
func TestToolsListIsGolden(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, _, body := w.rpc(t, rpcCall{token: w.token, method: "tools/list"})
	res := rpcResult(t, body)
	tools := res["tools"].([]any)
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.(map[string]any)["name"].(string)
	}
	assert.True(t, sort.StringsAreSorted(names), "tools/list is sorted by name: %v", names)
	list := map[string]any{"ttlMs": res["ttlMs"], "cacheScope": res["cacheScope"], "tools": names}
	golden(t, "list.json", list)

	dir := filepath.Join("testdata", "tools")
	want := map[string]bool{"list.json": true}
	for _, tl := range tools {
		m := tl.(map[string]any)
		file := m["name"].(string) + ".json"
		want[file] = true
		golden(t, file, m)
		in := m["inputSchema"].(map[string]any)
		assert.Equal(t, "object", in["type"], file)
		if isBusinessTool(m["name"].(string)) {
			assert.Contains(t, in["required"], "business", "%s takes a required business", file)
		}
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if !want[e.Name()] {
			if *update {
				require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
				continue
			}
			t.Errorf("testdata/tools/%s is not a served tool (run go test ./mcp -run Golden -update)", e.Name())
		}
	}
}

// isBusinessTool reports whether the tool acts on one business (all but
// the account's and turn tools).
func isBusinessTool(name string) bool {
	switch name {
	case "list_businesses", "create_business", "get_turn", "interrupt_turn", "get_billing_links", "get_credits",
		"cancel_platform_subscription", "change_auto_topup", "delete_account":
		return false
	}
	return true
}

func golden(t *testing.T, file string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", "tools", file)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./mcp -run Golden -update")
	assert.JSONEq(t, string(want), string(got), file)
}
