package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzProtocolFilter sends arbitrary bodies and version/name headers
// through the connector's front filter. What reaches the SDK declares
// 2026-07-28 (header, or _meta without a header), is not initialize,
// carries Mcp-Name on tasks/* (equal to taskId when one is given) and is
// the body exactly as sent; everything else gets a JSON-RPC error
// (-32022 or -32020) with the request's id, or 413 for a body over the
// limit.
func FuzzProtocolFilter(f *testing.F) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	for _, c := range [][3]string{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, ProtocolVersion, ""},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{` + meta + `}}`, "", ""},
		{`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, "", ""},
		{`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t1",` + meta + `}}`, ProtocolVersion, "t2"},
		{`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t1"}}`, ProtocolVersion, "t1"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, ProtocolVersion, ""},
		{`{"id":{"x":1},"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`, "", ""},
		{`not json`, "2025-03-26", ""},
		{`{"method":"tasks/cancel","params":{"taskId":null}}`, ProtocolVersion, "x"},
	} {
		f.Add([]byte(c[0]), c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, body []byte, version, name string) {
		var reached []byte
		h := protocolFilter(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached, _ = io.ReadAll(r.Body)
			w.WriteHeader(http.StatusAccepted)
		}))
		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if version != "" {
			r.Header[headerProtocolVersion] = []string{version}
		}
		if name != "" {
			r.Header[headerName] = []string{name}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)

		var msg message
		parsed := json.Unmarshal(body, &msg) == nil
		metaVersion, _ := msg.Params.Meta[sdk.MetaKeyProtocolVersion].(string)
		if rec.Code == http.StatusAccepted {
			if !bytes.Equal(reached, body) {
				t.Fatalf("the SDK got %q, not the body %q", reached, body)
			}
			if msg.Method == "initialize" {
				t.Fatal("initialize reached the SDK")
			}
			if version != ProtocolVersion && (version != "" || metaVersion != ProtocolVersion) {
				t.Fatalf("version header %q, _meta %q reached the SDK", version, metaVersion)
			}
			if strings.HasPrefix(msg.Method, "tasks/") && (name == "" || msg.Params.TaskID != nil && *msg.Params.TaskID != name) {
				t.Fatalf("%s with Mcp-Name %q reached the SDK", msg.Method, name)
			}
			return
		}
		if rec.Code == http.StatusRequestEntityTooLarge {
			if len(body) <= MaxBodyBytes {
				t.Fatalf("413 for %d bytes", len(body))
			}
			return
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error == nil {
			t.Fatalf("%d %q is not a JSON-RPC error", rec.Code, rec.Body.String())
		}
		if resp.Error.Code != sdk.CodeUnsupportedProtocolVersion && resp.Error.Code != sdk.CodeHeaderMismatch {
			t.Fatalf("error code %d", resp.Error.Code)
		}
		if rec.Code != http.StatusOK && rec.Code != http.StatusBadRequest {
			t.Fatalf("status %d", rec.Code)
		}
		wantID := "null"
		if len(msg.ID) > 0 {
			wantID = string(msg.ID)
		}
		if parsed && !jsonEqual(string(resp.ID), wantID) {
			t.Fatalf("id %s answered as %s", wantID, resp.ID)
		}
	})
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
