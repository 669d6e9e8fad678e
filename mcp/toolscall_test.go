package mcp_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/mcp"
	"holdco/service/companies"
)

// callRaw posts a tools/call as the clients send it: id and params raw,
// the headers the clients set (name for Mcp-Name) with overrides ("":
// deleted).
func callRaw(t *testing.T, url, token, id, name, params string, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	h := map[string]string{"Mcp-Name": name}
	for k, v := range headers {
		h[k] = v
	}
	return rpcRaw(t, url, token, "tools/call", id, params, h)
}

// rpcRaw posts one JSON-RPC request (id and params raw) with the headers
// the clients set and the overrides ("": deleted), and returns the answer.
func rpcRaw(t *testing.T, url, token, method, id, params string, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, out
}

// A plain tools/call is answered without a server session, and exactly as
// the SDK answers it: the same status, headers (but Date) and body, byte
// for byte, for every kind of tool and outcome — success, invalid
// arguments, another account's or no business, insufficient credits, an
// agents' tool. Unusual requests (an unknown tool, another id form, a
// task, a progress token, a parameter header, send_message making a task,
// member names in another case) are the SDK's on both listeners.
func TestToolsCallFastPathAnswersAsTheSDK(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var fastCount, sdkCount func() int64
	fastURL := w.serveWith(t, w.e.Svc, "", func(d mcp.Deps) http.Handler {
		h, n := mcp.NewCounting(d, false)
		fastCount = n
		return h
	})
	sdkURL := w.serveWith(t, w.e.Svc, "", func(d mcp.Deps) http.Handler {
		h, n := mcp.NewCounting(d, true)
		sdkCount = n
		return h
	})

	bob, bobCong := w.e.User(t, "bob@example.com")
	_, err := w.e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Bob Shop", Handle: "bob-shop", Idea: "Shop"})
	require.NoError(t, err)
	poor, _ := w.e.User(t, "poor@example.com")
	poorCo := w.e.SeedCompany(t, poor, companies.CompanyInput{Name: "Poor Shop", Handle: "poor-shop", Idea: "Nothing"})
	w.setReady(t, poorCo.ID)
	poorToken := w.issue(t, poor, "oat_poor")

	pv := `"io.modelcontextprotocol/protocolVersion":"` + mcp.ProtocolVersion + `"`
	plain := `"_meta":{` + pv + `,"io.modelcontextprotocol/clientCapabilities":{}}`
	withInfo := `"_meta":{` + pv + `,"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{"tools":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw-test","version":"1"}}`
	withTasks := `"_meta":{` + pv + `,"io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + mcp.TasksExtension + `":{}}}}`
	params := func(name, args, meta string) string {
		p := `{"name":"` + name + `",` + meta
		if args != "" {
			p += `,"arguments":` + args
		}
		return p + "}"
	}
	for _, c := range []struct {
		what, id, name, params, token string
		headers                       map[string]string
		fast                          bool
	}{
		{what: "success", id: "7", name: "get_credits", params: params("get_credits", "{}", plain), fast: true},
		{what: "a string id, no arguments", id: `"req-1"`, name: "get_credits", params: params("get_credits", "", plain), fast: true},
		{what: "an unknown argument", id: "8", name: "get_credits", params: params("get_credits", `{"surprise":1}`, plain), fast: true},
		{what: "client info and capabilities", id: "9", name: "list_businesses", params: params("list_businesses", "{}", withInfo), fast: true},
		{what: "one business", id: "10", name: "get_business", params: params("get_business", `{"business":"ada-bakery"}`, withTasks), fast: true},
		{what: "an invalid handle", id: "11", name: "get_business", params: params("get_business", `{"business":"Not A Handle!"}`, plain), fast: true},
		{what: "characters HTML escapes", id: "12", name: "get_business", params: params("get_business", `{"business":"<b>&amp;"}`, plain), fast: true},
		{what: "no such business", id: "13", name: "get_business", params: params("get_business", `{"business":"no-such-shop"}`, plain), fast: true},
		{what: "another account's business", id: "14", name: "get_business", params: params("get_business", `{"business":"bob-shop"}`, plain), fast: true},
		{what: "an agents' tool, forbidden", id: "15", name: "list_documents", params: params("list_documents", `{"business":"bob-shop"}`, plain), fast: true},
		{what: "an agents' tool", id: "16", name: "list_documents", params: params("list_documents", `{"business":"ada-bakery"}`, plain), fast: true},
		{what: "a missing argument", id: "17", name: "send_message", params: params("send_message", `{"business":"ada-bakery"}`, plain), fast: true},
		{what: "insufficient credits", id: "18", name: "send_message", token: poorToken,
			params: params("send_message", `{"business":"poor-shop","message":"Hello"}`, plain), fast: true},
		{what: "no such turn", id: "19", name: "get_turn", params: params("get_turn", `{"turn_id":"nope"}`, plain), fast: true},
		{what: "a link", id: "20", name: "archive_business", params: params("archive_business", `{"business":"ada-bakery"}`, plain), fast: true},

		{what: "arguments not an object", id: "30", name: "get_credits", params: params("get_credits", `[]`, plain)},
		{what: "an unknown tool", id: "31", name: "no_such_tool", params: params("no_such_tool", "{}", plain)},
		{what: "an id the SDK rewrites", id: `"x y"`, name: "get_credits", params: params("get_credits", "{}", plain)},
		{what: "a task", id: "32", name: "get_credits", params: `{"name":"get_credits","task":{},` + plain + `}`},
		{what: "a progress token", id: "33", name: "get_credits",
			params: `{"name":"get_credits","_meta":{` + pv + `,"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}`},
		{what: "a parameter header", id: "34", name: "get_business", params: params("get_business", `{"business":"ada-bakery"}`, plain),
			headers: map[string]string{"Mcp-Param-Business": "ada-bakery"}},
		{what: "send_message as a task", id: "35", name: "send_message", params: params("send_message", `{"business":"ada-bakery"}`, withTasks)},
		{what: "a member name in another case", id: "36", name: "get_credits", params: `{"Name":"get_credits","name":"get_credits",` + plain + `}`},
		{what: "no client capabilities", id: "37", name: "get_credits", params: `{"name":"get_credits","_meta":{` + pv + `}}`},
		{what: "a mismatched name header", id: "38", name: "get_business", params: params("get_credits", "{}", plain)},
		{what: "no token", id: "39", name: "get_credits", params: params("get_credits", "{}", plain), headers: map[string]string{"Authorization": ""}},
	} {
		token := c.token
		if token == "" {
			token = w.token
		}
		before := fastCount()
		sdkStatus, sdkHeader, sdkBody := callRaw(t, sdkURL, token, c.id, c.name, c.params, c.headers)
		status, header, body := callRaw(t, fastURL, token, c.id, c.name, c.params, c.headers)
		if c.fast {
			assert.Equal(t, before+1, fastCount(), "%s: answered by the fast path", c.what)
		} else {
			assert.Equal(t, before, fastCount(), "%s: answered by the SDK", c.what)
		}
		assert.Equal(t, sdkStatus, status, c.what)
		assert.Equal(t, string(sdkBody), string(body), c.what)
		// Volatile: the date, and the listener's own address (in the
		// resource metadata's of a 401).
		sdkHeader.Del("Date")
		header.Del("Date")
		for _, v := range sdkHeader {
			for i := range v {
				v[i] = strings.ReplaceAll(v[i], sdkURL, fastURL)
			}
		}
		assert.Equal(t, sdkHeader, header, c.what)
	}
	assert.Zero(t, sdkCount(), "the switch turns the fast path off")
}
