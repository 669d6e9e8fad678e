package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

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
	params, ok := members(top[3], "name", "arguments", "_meta")
	if !ok {
		return callRequest{}, false
	}
	name, ok := plainString(params[0])
	if !ok || name == "" || r.Header.Get(headerName) != name {
		return callRequest{}, false
	}
	args := params[1]
	if args != nil && args[0] != '{' {
		return callRequest{}, false
	}
	meta, ok := members(params[2], sdk.MetaKeyProtocolVersion, sdk.MetaKeyClientCapabilities, sdk.MetaKeyClientInfo)
	if !ok {
		return callRequest{}, false
	}
	if version, ok := plainString(meta[0]); !ok || version != ProtocolVersion {
		return callRequest{}, false
	}
	tasks, ok := plainCapabilities(meta[1])
	if !ok || meta[2] != nil && !plainClientInfo(meta[2]) {
		return callRequest{}, false
	}
	return callRequest{id: msg.ID, name: name, args: args, tasks: tasks}, true
}

// fields are an object's members by the position of their names in
// members' allowed list; nil when absent.
type fields [6]json.RawMessage

// members reads a JSON object's members as sent. raw must be valid JSON
// (the filter decoded the body it is part of): ok is false for anything
// but an object, a name written twice or with an escape, or a name not in
// allowed (at most six).
func members(raw []byte, allowed ...string) (out fields, ok bool) {
	ok = eachMember(raw, func(name, value []byte) bool {
		for k, a := range allowed {
			if string(name) == a {
				if out[k] != nil {
					return false
				}
				out[k] = value
				return true
			}
		}
		return false
	})
	return out, ok
}

// eachMember calls fn with each member of the JSON object raw (valid
// JSON) until it answers false; false for anything but an object, a name
// with an escape or with bytes that are not UTF-8 (encoding/json reads
// those as U+FFFD: FuzzEachMember), or when fn refused.
func eachMember(raw []byte, fn func(name, value []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) && raw[i] == '"' {
		j := i + 1
		for j < len(raw) && raw[j] != '"' && raw[j] != '\\' {
			j++
		}
		if j >= len(raw) || raw[j] != '"' {
			return false
		}
		name := raw[i+1 : j]
		if !utf8.Valid(name) {
			return false
		}
		i = skipSpace(raw, j+1)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		end := skipValue(raw, i)
		if end <= i || !fn(name, raw[i:end]) {
			return false
		}
		i = skipSpace(raw, end)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == '}':
			return true
		default:
			return false
		}
	}
	return false
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at i (valid JSON).
func skipValue(raw []byte, i int) int {
	depth := 0
	for i < len(raw) {
		switch c := raw[i]; c {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			i++
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
			i++
		default:
			i++
		}
		if depth == 0 && i > 0 && (raw[i-1] == '"' || raw[i-1] == '}' || raw[i-1] == ']') {
			return i
		}
	}
	return i
}

// plainString reads a JSON string without escapes.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return "", false
	}
	return string(raw[1 : len(raw)-1]), true
}

// plainCapabilities reports whether client capabilities are ones the SDK
// reads without refusal (an object of the capabilities it knows, each of
// the shape it decodes), and whether they declare the tasks extension.
func plainCapabilities(raw json.RawMessage) (tasks, ok bool) {
	caps, ok := members(raw, "extensions", "experimental", "roots", "sampling", "elicitation")
	if !ok {
		return false, false
	}
	for i, v := range caps {
		if v == nil {
			continue
		}
		switch i {
		case 0, 1: // extensions, experimental: objects
			if !eachMember(v, func(name, _ []byte) bool {
				tasks = tasks || i == 0 && string(name) == TasksExtension
				return true
			}) {
				return false, false
			}
		case 2: // roots: {listChanged: a boolean}
			roots, ok := members(v, "listChanged")
			if !ok || roots[0] != nil && string(roots[0]) != "true" && string(roots[0]) != "false" {
				return false, false
			}
		default: // sampling, elicitation: objects of empty objects
			sub, ok := members(v, "context", "tools", "form", "url")
			if !ok {
				return false, false
			}
			for _, s := range sub {
				if s != nil && !eachMember(s, func(_, _ []byte) bool { return false }) {
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
	return eachMember(raw, func(name, value []byte) bool {
		switch string(name) {
		case "name", "title", "description", "version", "websiteUrl":
			_, ok := plainString(value)
			return ok
		}
		return false
	})
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
		// As under the SDK (its stateless session waits for the call), a
		// client that goes away does not cancel a call half done.
		ctx := withTokenPrincipal(context.WithoutCancel(r.Context()), auth.TokenInfoFromContext(r.Context()))
		body, err := h.encodeResult(cr.id, tool.call(ctx, cr.args))
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
// returned res, byte for byte: the envelope with the request's id (as
// sent: plainToolsCall took only ids the SDK writes back the same), the
// result with empty content as [], the server's identity in _meta and
// resultType complete (2026-07-28 results carry both). The SDK encodes the
// result with json.Marshal (HTML escaped) and the envelope without
// escaping, compacting the result twice more on the way; a result of the
// tools' usual shape (plainResult) is written here in one pass instead.
func (h *handler) encodeResult(id json.RawMessage, res *sdk.CallToolResult) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(256 + len(h.serverMeta))
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"result":`)
	if err := h.appendResult(&buf, res); err != nil {
		return nil, err
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// appendResult writes res as the result of encodeResult.
func (h *handler) appendResult(buf *bytes.Buffer, res *sdk.CallToolResult) error {
	// An Encoder escapes HTML as json.Marshal does; Encode adds a newline.
	enc := json.NewEncoder(buf)
	encode := func(v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1)
		return nil
	}
	if text, structured, ok := plainResult(res); ok {
		buf.WriteString(`{"_meta":`)
		buf.Write(h.serverMeta)
		buf.WriteString(`,"content":[{"type":"text","text":`)
		if err := encode(text); err != nil {
			return err
		}
		buf.WriteString(`}]`)
		if structured != nil {
			buf.WriteString(`,"structuredContent":`)
			if err := encode(structured); err != nil {
				return err
			}
		}
		if res.IsError {
			buf.WriteString(`,"isError":true`)
		}
		buf.WriteString(`,"resultType":"complete"}`)
		return nil
	}
	if res.Content == nil {
		res.Content = []sdk.Content{}
	}
	if _, ok := res.Meta[sdk.MetaKeyServerInfo]; !ok {
		if res.Meta == nil {
			res.Meta = sdk.Meta{}
		}
		res.Meta[sdk.MetaKeyServerInfo] = h.impl
	}
	start := buf.Len()
	if err := encode(res); err != nil {
		return err
	}
	// The SDK marks a 2026-07-28 result complete; CallToolResult encodes
	// that mark (unexported) last, after its own fields.
	if buf.Len()-start < 2 || buf.Bytes()[buf.Len()-1] != '}' {
		return errors.New("a tool result is not a JSON object")
	}
	buf.Truncate(buf.Len() - 1)
	buf.WriteString(`,"resultType":"complete"}`)
	return nil
}

// plainResult reports whether res has the shape of the tools' results
// (handler.result): no _meta, one text content without _meta or
// annotations, structured content as JSON or none, no input requests. It
// returns the text and the structured content.
func plainResult(res *sdk.CallToolResult) (text string, structured json.RawMessage, ok bool) {
	if res.Meta != nil || len(res.Content) != 1 || res.InputRequests != nil || res.RequestState != "" {
		return "", nil, false
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok || tc == nil || tc.Meta != nil || tc.Annotations != nil {
		return "", nil, false
	}
	if res.StructuredContent != nil {
		if structured, ok = res.StructuredContent.(json.RawMessage); !ok || len(structured) == 0 {
			return "", nil, false
		}
	}
	return tc.Text, structured, true
}
