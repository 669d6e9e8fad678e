package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// call runs a tool and decodes its JSON text; isError reports a refusal.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	text, ok := res.Content[0].(*sdk.TextContent)
	require.True(t, ok)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(text.Text), &out), text.Text)
	return out, res.IsError
}

func TestListAndGetWithTheGoClient(t *testing.T) {
	w := newWorld(t)
	cs := w.connect(t, w.token)
	assert.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	tools, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, 3_600_000, tools.TTLMs)
	assert.Equal(t, "private", tools.CacheScope)

	list, isErr := call(t, cs, "list_businesses", nil)
	require.False(t, isErr, list)
	bs := list["businesses"].([]any)
	require.Len(t, bs, 1)
	assert.Equal(t, "ada-bakery", bs[0].(map[string]any)["handle"])

	got, isErr := call(t, cs, "get_business", map[string]any{"business": "ada-bakery"})
	require.False(t, isErr, got)
	assert.Equal(t, true, got["ready"])
	assert.Equal(t, w.company.ID, got["id"])
}
