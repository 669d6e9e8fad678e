package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// tools/call without a session. The SDK's stateless path makes, connects
// and closes a server session for every request, decodes the JSON-RPC
// message again and routes it through its middleware to the tool's
// handler; most of a cheap call's time and memory went there. A plain
// tools/call (the filter recognises it: see plainToolsCall) is therefore
// answered here: the tool's call (the very function the SDK runs, tools.go)
// runs with the bearer check's principal, and its result is encoded as
// the SDK encodes it — the result with the server's identity in _meta,
// in a JSON-RPC response with the request's id, status 200,
// application/json (the listener answers JSON, never SSE) and
// Cache-Control: no-cache, no-transform. Anything unusual goes to the SDK
// as before: an unknown tool, another id form, headers the SDK reads
// (Mcp-Param-*, Last-Event-ID), params or _meta beyond the plain ones
// (a task, a progress token, input responses, a log level), capabilities
// the SDK might refuse, send_message with the tasks extension (tasks.go),
// a foreign Host under the localhost check.
// TestToolsCallFastPathAnswersAsTheSDK compares the two.

// toolsCallKey marks a request the protocol filter found to be a plain
// tools/call; its value is a callRequest.
type toolsCallKey struct{}

type callRequest struct {
	id    json.RawMessage // canonical JSON
	name  string
	args  json.RawMessage // as sent; nil when absent
	tasks bool            // the client declared the tasks extension
}

// plainToolsCall reports whether the body the filter read is a tools/call
// the fast path may answer, and returns what it needs. It accepts only
// what the SDK would take as sent: every member name known and written
// once, as the SDK spells it.
func plainToolsCall(r *http.Request, body []byte, msg *message) (callRequest, bool) {
	if msg.Method != "tools/call" || msg.JSONRPC != "2.0" || !canonicalID(msg.ID) ||
		r.Header.Get(headerProtocolVersion) != ProtocolVersion || r.Header.Get("Mcp-Method") != "tools/call" {
		return callRequest{}, false
	}
	for name := range r.Header {
		if strings.HasPrefix(name, "Mcp-Param-") || name == "Last-Event-Id" {
			return callRequest{}, false
		}
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return callRequest{}, false
	}
	if jsonOK, streamOK := accepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
		return callRequest{}, false
	}
	top, ok := members(body, "jsonrpc", "id", "method", "params")
	if !ok {
		return callRequest{}, false
	}
	params, ok := members(top["params"], "name", "arguments", "_meta")
	if !ok {
		return callRequest{}, false
	}
	var name string
	if json.Unmarshal(params["name"], &name) != nil || name == "" || r.Header.Get(headerName) != name {
		return callRequest{}, false
	}
	args, present := params["arguments"]
	if present && (len(args) == 0 || args[0] != '{') {
		return callRequest{}, false
	}
	meta, ok := members(params["_meta"], sdk.MetaKeyProtocolVersion, sdk.MetaKeyClientCapabilities, sdk.MetaKeyClientInfo)
	if !ok {
		return callRequest{}, false
	}
	var version string
	if json.Unmarshal(meta[sdk.MetaKeyProtocolVersion], &version) != nil || version != ProtocolVersion {
		return callRequest{}, false
	}
	tasks, ok := plainCapabilities(meta[sdk.MetaKeyClientCapabilities])
	if !ok {
		return callRequest{}, false
	}
	if info, present := meta[sdk.MetaKeyClientInfo]; present && !plainClientInfo(info) {
		return callRequest{}, false
	}
	return callRequest{id: msg.ID, name: name, args: args, tasks: tasks}, true
}

// members reads a JSON object's members as sent: ok is false for anything
// but an object, a member named twice, or a name not in allowed.
func members(raw json.RawMessage, allowed ...string) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	out := make(map[string]json.RawMessage, len(allowed))
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := t.(string)
		known := false
		for _, a := range allowed {
			known = known || a == name
		}
		if _, twice := out[name]; !known || twice {
			return nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, false
		}
		out[name] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	return out, true
}

// plainCapabilities reports whether client capabilities are ones the SDK
// reads without refusal (an object of the capabilities it knows, each of
// the shape it decodes), and whether they declare the tasks extension.
func plainCapabilities(raw json.RawMessage) (tasks, ok bool) {
	caps, ok := members(raw, "extensions", "experimental", "roots", "sampling", "elicitation")
	if !ok {
		return false, false
	}
	for name, v := range caps {
		switch name {
		case "extensions", "experimental":
			var m map[string]json.RawMessage
			if json.Unmarshal(v, &m) != nil || m == nil {
				return false, false
			}
			if name == "extensions" {
				_, tasks = m[TasksExtension]
			}
		case "roots":
			roots, ok := members(v, "listChanged")
			var b bool
			if !ok || roots["listChanged"] != nil && json.Unmarshal(roots["listChanged"], &b) != nil {
				return false, false
			}
		default: // sampling, elicitation: objects of empty objects
			sub, ok := members(v, "context", "tools", "form", "url")
			if !ok {
				return false, false
			}
			for _, s := range sub {
				if m, ok := members(s); !ok || len(m) > 0 {
					return false, false
				}
			}
		}
	}
	return tasks, true
}

// plainClientInfo reports whether clientInfo is an object of the SDK's
// Implementation's string members.
func plainClientInfo(raw json.RawMessage) bool {
	info, ok := members(raw, "name", "title", "description", "version", "websiteUrl")
	if !ok {
		return false
	}
	for _, v := range info {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return false
		}
	}
	return true
}

// serveToolsCall answers a plain tools/call (marked by the filter) with the
// tool's call, and everything else through next.
func (h *handler) serveToolsCall(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cr, ok := r.Context().Value(toolsCallKey{}).(callRequest)
		var tool registeredCall
		if ok {
			tool, ok = h.calls[cr.name]
		}
		// The SDK refuses a loopback listener's request under another Host
		// (DNS rebinding) while that check is on; send_message makes a task
		// for a client with the tasks extension (the receiving middleware).
		if !ok || !tool.fast || h.sdkCallsOnly || h.localhostCheck && !hostIsLoopback(r.Host) || cr.name == taskTool && cr.tasks {
			next.ServeHTTP(w, r)
			return
		}
		var id any
		_ = json.Unmarshal(cr.id, &id)
		rpcID, err := jsonrpc.MakeID(id)
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		ctx := withTokenPrincipal(r.Context(), auth.TokenInfoFromContext(r.Context()))
		body, err := h.encodeResult(rpcID, tool.call(ctx, cr.args))
		if err != nil {
			h.logFailure(ctx, "connector: encoding a tool's result", err, "tool", cr.name)
			writeRPCError(w, http.StatusInternalServerError, cr.id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "The tool's result could not be encoded."})
			return
		}
		h.fastCalls.Add(1)
		hdr := w.Header()
		hdr.Set("Cache-Control", "no-cache, no-transform")
		hdr.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
}

// encodeResult is the SDK's JSON-RPC response to a tools/call whose handler
// returned res: empty content as [], the server's identity in _meta and
// resultType complete (2026-07-28 results carry both), the envelope
// encoded without HTML escaping.
func (h *handler) encodeResult(id jsonrpc.ID, res *sdk.CallToolResult) ([]byte, error) {
	if res.Content == nil {
		res.Content = []sdk.Content{}
	}
	if _, ok := res.Meta[sdk.MetaKeyServerInfo]; !ok {
		if res.Meta == nil {
			res.Meta = sdk.Meta{}
		}
		res.Meta[sdk.MetaKeyServerInfo] = h.impl
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, err
	}
	// The SDK marks a 2026-07-28 result complete; CallToolResult encodes
	// that mark (unexported) last, after its own fields.
	out := bytes.TrimRight(buf.Bytes(), "\n")
	if len(out) < 2 || out[len(out)-1] != '}' {
		return nil, errors.New("a tool result is not a JSON object")
	}
	out = append(out[:len(out)-1], `,"resultType":"complete"}`...)
	return jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: out})
}
