package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
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

func TestBusinessToolsMapToTheUseCases(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cs := w.connect(t, w.token)
	ctx := context.Background()

	paused, isErr := call(t, cs, "pause_business", map[string]any{"business": "ada-bakery"})
	require.False(t, isErr, paused)
	assert.Equal(t, "paused", paused["status"])
	active, isErr := call(t, cs, "activate_business", map[string]any{"business": w.company.ID})
	require.False(t, isErr, active)
	assert.Equal(t, "active", active["status"])

	// The agents' tools, with business: a document written is read back.
	wrote, isErr := call(t, cs, "write_document", map[string]any{"business": "ada-bakery", "document_type": "notes", "content": "# Notes\nBake."})
	require.False(t, isErr, wrote)
	docs, isErr := call(t, cs, "list_documents", map[string]any{"business": "ada-bakery"})
	require.False(t, isErr, docs)
	assert.Len(t, docs["documents"], 1)
	noBusiness, isErr := call(t, cs, "list_documents", nil)
	require.True(t, isErr)
	assert.Equal(t, "business", noBusiness["field"])

	// A billable tool is charged once it succeeded.
	before, _ := call(t, cs, "get_credits", nil)
	sent, isErr := call(t, cs, "send_email", map[string]any{"business": "ada-bakery", "to": "customer@example.com", "subject": "Hello", "text": "Fresh bread."})
	require.False(t, isErr, sent)
	after, _ := call(t, cs, "get_credits", nil)
	assert.Equal(t, before["balance"].(float64)-1, after["balance"])

	sub, isErr := call(t, cs, "cancel_subscription", map[string]any{"business": "ada-bakery", "subscription": "sub_unknown"})
	require.True(t, isErr)
	assert.Equal(t, "not_found", sub["error"])

	// An agent's open question shows in the list.
	scope, err := w.e.Store.SystemCompanyScope(ctx, w.company.ID)
	require.NoError(t, err)
	turn, err := w.e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: "00000000-0000-4000-8000-000000000002", Trigger: models.TriggerMessage, Message: "hi"},
		[]models.ContentBlock{{Type: models.ContentText, Text: "hi"}})
	require.NoError(t, err)
	_, _, err = w.e.Store.Turns().FinishTurn(ctx, scope, turn.ID, "", models.TurnResult{Status: models.TurnWaiting, Question: "Which flour?", EndedAt: time.Now().UTC()},
		models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: service.ActorOf(w.owner), Summary: "A turn asks"})
	require.NoError(t, err)
	list, isErr := call(t, cs, "list_businesses", nil)
	require.False(t, isErr, list)
	assert.Equal(t, []any{"Which flour?"}, list["businesses"].([]any)[0].(map[string]any)["open_questions"])
	got, _ := call(t, cs, "get_business", map[string]any{"business": "ADA-BAKERY"})
	assert.Equal(t, "waiting", got["last_turn"].(map[string]any)["status"])
}
