package mcp_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
)

func TestSendMessagePlainIsPolledWithGetTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cs := w.connect(t, w.token)
	sent, isErr := call(t, cs, "send_message", map[string]any{"business": "ada-bakery", "message": "Plan the launch of the bakery"})
	require.False(t, isErr, sent)
	assert.Equal(t, w.company.ID, sent["business_id"])
	require.NotEmpty(t, sent["session_id"])
	turnID := sent["turn_id"].(string)
	var turn map[string]any
	require.Eventually(t, func() bool {
		turn, isErr = call(t, cs, "get_turn", map[string]any{"turn_id": turnID})
		require.False(t, isErr, turn)
		return turn["status"] == "completed"
	}, time.Minute, 50*time.Millisecond)
	assert.NotEmpty(t, turn["answer"])
	assert.NotNil(t, turn["credits_cost"])

	again, isErr := call(t, cs, "interrupt_turn", map[string]any{"turn_id": turnID})
	require.False(t, isErr, again)
	assert.Equal(t, "completed", again["status"], "interrupting an ended turn changes nothing")
}

func TestSendMessageAsATaskPolledToCompletion(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	status, _, body := w.rpc(t, rpcCall{token: w.token, method: "tools/call", tasks: true,
		params: map[string]any{"name": "send_message", "arguments": map[string]any{"business": "ada-bakery", "message": "Plan the launch"}}})
	require.Equal(t, 200, status, body)
	task := rpcResult(t, body)
	assert.Equal(t, "task", task["resultType"])
	assert.Equal(t, "working", task["status"])
	assert.EqualValues(t, 5000, task["pollIntervalMs"])
	assert.Contains(t, task, "ttlMs")
	taskID := task["taskId"].(string)
	turn, err := w.e.Svc.Turns.GetTurn(w.owner, taskID)
	require.NoError(t, err, "the task id is the turn id")
	assert.Equal(t, w.company.ID, turn.CompanyID)

	var got map[string]any
	require.Eventually(t, func() bool {
		status, _, body := w.rpc(t, rpcCall{token: w.token, method: "tasks/get", tasks: true, params: map[string]any{"taskId": taskID}})
		require.Equal(t, 200, status, body)
		got = rpcResult(t, body)
		return got["status"] != "working"
	}, time.Minute, 50*time.Millisecond)
	assert.Equal(t, "completed", got["status"])
	assert.Equal(t, "complete", got["resultType"])
	result := got["result"].(map[string]any)
	assert.Equal(t, "complete", result["resultType"])
	assert.Equal(t, false, result["isError"])
	assert.Equal(t, "completed", result["structuredContent"].(map[string]any)["status"])
	assert.NotEmpty(t, result["structuredContent"].(map[string]any)["answer"])

	// Another user of another account does not see the task.
	bob, _ := w.e.User(t, "bob@example.com")
	status, _, body = w.rpc(t, rpcCall{token: w.issue(t, bob, "oat_bob"), method: "tasks/get", tasks: true, params: map[string]any{"taskId": taskID}})
	require.Equal(t, 400, status, "the SDK answers invalid params with 400")
	e := rpcError(body)
	require.NotNil(t, e, body)
	assert.EqualValues(t, -32602, e["code"])
	assert.Equal(t, "forbidden", e["data"].(map[string]any)["error"])
}

func TestWithoutTheExtensionSendMessageAnswersPlainly(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	status, _, body := w.rpc(t, rpcCall{token: w.token, method: "tools/call",
		params: map[string]any{"name": "send_message", "arguments": map[string]any{"business": "ada-bakery", "message": "Hello"}}})
	require.Equal(t, 200, status, body)
	res := rpcResult(t, body)
	assert.NotEqual(t, "task", res["resultType"])
	assert.NotEmpty(t, res["structuredContent"].(map[string]any)["turn_id"])
}

func TestTasksCancelInterruptsTheTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	status, _, body := w.rpc(t, rpcCall{token: w.token, method: "tools/call", tasks: true,
		params: map[string]any{"name": "send_message", "arguments": map[string]any{"business": "ada-bakery", "message": "Write a long plan, take your time"}}})
	require.Equal(t, 200, status, body)
	taskID := rpcResult(t, body)["taskId"].(string)
	require.Eventually(t, func() bool {
		v, err := w.e.Svc.Turns.GetTurn(w.owner, taskID)
		require.NoError(t, err)
		return v.Status == models.TurnRunning
	}, time.Minute, 20*time.Millisecond)

	// tasks/* need Mcp-Name, the task id.
	status, _, body = w.rpc(t, rpcCall{token: w.token, method: "tasks/cancel", tasks: true, params: map[string]any{"taskId": taskID},
		headers: map[string]string{"Mcp-Name": ""}})
	assert.Equal(t, 400, status)
	assert.EqualValues(t, -32020, rpcError(body)["code"])
	status, _, body = w.rpc(t, rpcCall{token: w.token, method: "tasks/update", tasks: true, params: map[string]any{"taskId": taskID, "inputResponses": map[string]any{}}})
	assert.Equal(t, 400, status)
	assert.EqualValues(t, -32602, rpcError(body)["code"], "tasks/update is unsupported")

	status, _, body = w.rpc(t, rpcCall{token: w.token, method: "tasks/cancel", tasks: true, params: map[string]any{"taskId": taskID}})
	require.Equal(t, 200, status, body)
	assert.Equal(t, "complete", rpcResult(t, body)["resultType"])
	_, _, body = w.rpc(t, rpcCall{token: w.token, method: "tasks/get", tasks: true, params: map[string]any{"taskId": taskID}})
	got := rpcResult(t, body)
	assert.Equal(t, "cancelled", got["status"])
	assert.NotContains(t, got, "result")
	v, err := w.e.Svc.Turns.GetTurn(w.owner, taskID)
	require.NoError(t, err)
	assert.Equal(t, models.TurnInterrupted, v.Status)
}

func TestAFailedTurnIsACompletedTaskWithAnErrorResult(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	scope, err := w.e.Store.SystemCompanyScope(ctx, w.company.ID)
	require.NoError(t, err)
	turn, err := w.e.Store.Turns().CreateTurn(ctx, scope, models.Turn{SessionID: "00000000-0000-4000-8000-000000000001", Trigger: models.TriggerMessage, Message: "hi"},
		[]models.ContentBlock{{Type: models.ContentText, Text: "hi"}})
	require.NoError(t, err)
	_, _, err = w.e.Store.Turns().FinishTurn(ctx, scope, turn.ID, "", models.TurnResult{Status: models.TurnFailed, ErrorCode: string(models.CodeInsufficientCredits),
		ErrorDetail: "The account ran out of credits during the turn; top up to continue.", EndedAt: time.Now().UTC()},
		models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: service.ActorOf(w.owner), Summary: "A turn failed"})
	require.NoError(t, err)

	_, _, body := w.rpc(t, rpcCall{token: w.token, method: "tasks/get", tasks: true, params: map[string]any{"taskId": turn.ID}})
	got := rpcResult(t, body)
	assert.Equal(t, "completed", got["status"])
	result := got["result"].(map[string]any)
	assert.Equal(t, true, result["isError"])
	assert.Contains(t, result["content"].([]any)[0].(map[string]any)["text"], `"error":"insufficient_credits"`)
}

// send_message with an idempotency_key is safe to retry (a lost answer):
// the same key and message answer the turn the first call started, even
// while it runs (without a key that is a conflict), and start nothing
// else; the key with another message, or a bad key, is refused.
func TestSendMessageWithAKeyStartsOneTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cs := w.connect(t, w.token)
	args := map[string]any{"business": "ada-bakery", "message": "Write a long plan, take your time", "idempotency_key": "launch-7f3a"}
	first, isErr := call(t, cs, "send_message", args)
	require.False(t, isErr, first)
	again, isErr := call(t, cs, "send_message", args)
	require.False(t, isErr, again)
	assert.Equal(t, first["turn_id"], again["turn_id"], "the retry answers the first call's turn")
	assert.Equal(t, first["session_id"], again["session_id"])

	other, isErr := call(t, cs, "send_message", map[string]any{"business": "ada-bakery", "message": "Something else", "idempotency_key": "launch-7f3a"})
	require.True(t, isErr, other)
	assert.Equal(t, "conflict", other["error"])
	assert.Equal(t, "idempotency_key_reused", other["reason"])
	assert.Contains(t, other["detail"], "idempotency_key")

	bad, isErr := call(t, cs, "send_message", map[string]any{"business": "ada-bakery", "message": "Hi", "idempotency_key": "has space"})
	require.True(t, isErr, bad)
	assert.Equal(t, "invalid_argument", bad["error"])
	assert.Equal(t, "idempotency_key", bad["field"])

	scope, err := w.e.Store.SystemCompanyScope(context.Background(), w.company.ID)
	require.NoError(t, err)
	turns, err := w.e.Store.Turns().ListTurns(context.Background(), scope, nil, 10)
	require.NoError(t, err)
	assert.Len(t, turns, 1, "one turn for the two sends")
}
