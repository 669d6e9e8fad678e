package mcp_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/mcp"
)

// listMeta is the _meta the clients send.
const listMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.ProtocolVersion + `","io.modelcontextprotocol/clientCapabilities":{}}`

// listRequest is a tools/list as the clients send it, with id and params
// raw (params "": the clients' _meta only).
func listRequest(t *testing.T, url, token, id, params string) (int, http.Header, []byte) {
	t.Helper()
	if params == "" {
		params = "{" + listMeta + "}"
	}
	return rpcRaw(t, url, token, "tools/list", id, params, nil)
}

// A plain tools/list is answered from the SDK's kept answer: the same
// status, content type and result, byte for byte, as the SDK gives a
// request it answers itself (an id it would rewrite, or a cursor), with
// the request's own id; without a token it is still refused.
func TestToolsListFastPathAnswersAsTheSDK(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	type answer struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}
	decode := func(b []byte) answer {
		var a answer
		require.NoError(t, json.Unmarshal(b, &a), string(b))
		return a
	}
	// Answered by the SDK itself: an id with a space is not one the kept
	// answer takes.
	sdkStatus, sdkHeader, sdkBody := listRequest(t, w.url, w.token, `"by sdk"`, "")
	require.Equal(t, http.StatusOK, sdkStatus, string(sdkBody))
	bySDK := decode(sdkBody)
	require.NotEmpty(t, bySDK.Result)

	for _, id := range []string{"7", `"req-1"`, "0", "123456789"} {
		status, header, body := listRequest(t, w.url, w.token, id, "")
		assert.Equal(t, sdkStatus, status, id)
		assert.Equal(t, sdkHeader.Get("Content-Type"), header.Get("Content-Type"), id)
		got := decode(body)
		assert.Equal(t, "2.0", got.JSONRPC)
		assert.JSONEq(t, id, string(got.ID))
		assert.True(t, bytes.Equal(bySDK.Result, got.Result), "id %s: the kept result is the SDK's", id)
		// The whole body is the SDK's with the id swapped.
		assert.Equal(t, string(bytes.Replace(sdkBody, []byte(`"by sdk"`), []byte(id), 1)), string(body), id)
	}

	// Other capabilities (the tasks extension): a kept answer of their own,
	// the SDK's too.
	withTasks := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.ProtocolVersion +
		`","io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + mcp.TasksExtension + `":{}}}}}`
	_, _, first := listRequest(t, w.url, w.token, `"x y"`, withTasks)
	_, _, kept := listRequest(t, w.url, w.token, "11", withTasks)
	assert.Equal(t, string(bytes.Replace(first, []byte(`"x y"`), []byte("11"), 1)), string(kept))

	// Params the SDK refuses are refused again, by the SDK, every time.
	for range 2 {
		status, _, body := listRequest(t, w.url, w.token, "10", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"`+mcp.ProtocolVersion+`"}}`)
		assert.Equal(t, http.StatusBadRequest, status, string(body))
		assert.Contains(t, string(body), "clientCapabilities")
	}

	// A cursor goes to the SDK, which refuses one it never issued.
	_, _, body := listRequest(t, w.url, w.token, "8", `{"cursor":"nope",`+listMeta+`}`)
	assert.Contains(t, string(body), `"error"`, "an unknown cursor is the SDK's error")

	// No token: 401 before any answer.
	status, _, _ := listRequest(t, w.url, "", "9", "")
	assert.Equal(t, http.StatusUnauthorized, status)
}
