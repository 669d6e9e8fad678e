package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
)

// TestDocsRenderOfflineInChromium: the REST reference renders in Chromium
// with every other origin blocked: its assets come from the binary.
func TestDocsRenderOfflineInChromium(t *testing.T) {
	nodeScripts(t)
	bin := chromium(t)
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Start(ctx, embeddedConfig(t, t.TempDir(), nil), []app.Role{app.RoleAPI}, quietLogger())
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	out := runNode(t, "docs.mjs", "BASE=http://"+a.APIAddr(), "CHROMIUM="+bin)
	var res struct {
		Rendered bool     `json:"rendered"`
		Blocked  []string `json:"blocked"`
		Errors   []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	assert.True(t, res.Rendered)
	assert.Empty(t, res.Blocked, "nothing asked of another origin")
	assert.Empty(t, res.Errors)
}
