package app_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/testenv"
)

// TestDocsRenderOfflineInChromium: the REST reference renders in Chromium
// with every other origin blocked: its assets come from the binary.
func TestDocsRenderOfflineInChromium(t *testing.T) {
	t.Parallel()
	testenv.NodeScripts(t, "oauth")
	bin := chromium(t)
	a := runApp(t, embeddedConfig(t, t.TempDir(), nil), app.RoleAPI)
	out := node(t, "oauth", []string{"BASE=http://" + a.APIAddr(), "CHROMIUM=" + bin}, "docs.mjs")
	var res struct {
		Rendered bool     `json:"rendered"`
		Blocked  []string `json:"blocked"`
		Errors   []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), "%s", out)
	assert.True(t, res.Rendered)
	assert.Empty(t, res.Blocked, "nothing asked of another origin")
	assert.Empty(t, res.Errors)
}
