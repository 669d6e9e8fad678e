package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"pgregory.net/rapid"
)

// FuzzEachMember: on a valid JSON object, the fast path's member reader
// finds the members, values as sent, that encoding/json reads; anything
// it refuses is left to the SDK, so it may refuse (escaped names) but
// never misread.
func FuzzEachMember(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}] ,"d":"x\"y"}`, `{"a":{"b":{}},"c":null,"d":true,"e":-1.5e3}`,
		`{"a\"b":1}`, `[1]`, `"s"`, `{"a":"\\"}`, `{"a":[],"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		var names, values []string
		ok := eachMember(raw, func(name, value []byte) bool {
			names, values = append(names, string(name)), append(values, string(value))
			return true
		})
		dec := json.NewDecoder(bytes.NewReader(raw))
		if tok, _ := dec.Token(); tok != json.Delim('{') {
			if ok {
				t.Fatalf("%q is not an object, yet read", raw)
			}
			return
		}
		if !ok {
			if !bytes.Contains(raw, []byte(`\`)) && utf8.Valid(raw) {
				t.Fatalf("%q refused without an escape or a byte that is not UTF-8", raw)
			}
			return
		}
		i := 0
		for ; dec.More(); i++ {
			tok, _ := dec.Token()
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if i >= len(names) || tok != names[i] || string(v) != values[i] {
				t.Fatalf("%q: member %d read as %q=%q", raw, i, names, values)
			}
			if i == len(names)-1 && dec.More() {
				t.Fatalf("%q: members after %q", raw, names)
			}
		}
		if i != len(names) {
			t.Fatalf("%q: read %d members, not %d", raw, len(names), i)
		}
	})
}

// fataler is what *testing.T and *rapid.T share.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// sdkResponse is the SDK's response to a tools/call whose handler returned
// res: the server's identity added to _meta, nil content as [], the result
// marked complete, json.Marshal'd into a JSON-RPC response; nil when the
// SDK cannot encode it.
func sdkResponse(t fataler, impl *sdk.Implementation, id any, res sdk.CallToolResult) []byte {
	t.Helper()
	if res.Content == nil {
		res.Content = []sdk.Content{}
	}
	meta := sdk.Meta{sdk.MetaKeyServerInfo: impl}
	for k, v := range res.Meta {
		meta[k] = v
	}
	res.Meta = meta
	raw, err := json.Marshal(&res)
	if err != nil {
		return nil
	}
	raw = append(raw[:len(raw)-1], `,"resultType":"complete"}`...)
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: rid, Result: raw})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The fast path's encoding of a result is the SDK's, byte for byte, for
// the tools' results (written in one pass) and for any other shape (the
// generic encoding): HTML-escaped characters, U+2028, bytes that are not
// UTF-8, structured content not compact, an error, several contents; and
// what the SDK cannot encode is an error.
func TestEncodeResultIsTheSDKs(t *testing.T) {
	impl := &sdk.Implementation{Name: "holdco", Title: "holdco <businesses> & co", Version: "v1\u2028"}
	h := &handler{impl: impl}
	h.serverMeta, _ = json.Marshal(sdk.Meta{sdk.MetaKeyServerInfo: impl})
	check := func(t fataler, id string, res sdk.CallToolResult) {
		t.Helper()
		var idValue any
		if err := json.Unmarshal([]byte(id), &idValue); err != nil {
			t.Fatal(err)
		}
		want := sdkResponse(t, impl, idValue, res)
		got, err := h.encodeResult(json.RawMessage(id), &res)
		if want == nil {
			if err == nil {
				t.Fatalf("encoded %s, which the SDK cannot encode", got)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("encoded\n%s\nthe SDK's\n%s", got, want)
		}
	}
	text := func(s string) []sdk.Content { return []sdk.Content{&sdk.TextContent{Text: s}} }
	for name, c := range map[string]struct {
		id  string
		res sdk.CallToolResult
	}{
		"success":     {"7", sdk.CallToolResult{Content: text(`{"balance":5}`), StructuredContent: json.RawMessage(`{"balance":5}`)}},
		"a string id": {`"req-1"`, sdk.CallToolResult{Content: text(`{}`), StructuredContent: json.RawMessage(`{}`)}},
		"escapes": {"8", sdk.CallToolResult{Content: text("<b>&amp;</b> \u2028\u2029 \x01 \"q\" é 🙂 \xff"),
			StructuredContent: json.RawMessage(`{"a":"<b>&\u2028\u2029 é","b":[1, 2 ,{"c" : null}]}`)}},
		"an error":              {"9", sdk.CallToolResult{IsError: true, Content: text(`{"error":"not_found","detail":"No <such> business."}`)}},
		"no content":            {"10", sdk.CallToolResult{}},
		"structured as a value": {"11", sdk.CallToolResult{Content: text("x"), StructuredContent: map[string]any{"a": "<"}}},
		"empty structured":      {"12", sdk.CallToolResult{Content: text("x"), StructuredContent: json.RawMessage{}}},
		"two contents":          {"13", sdk.CallToolResult{Content: append(text("a"), &sdk.TextContent{Text: "b"})}},
		"meta":                  {"14", sdk.CallToolResult{Meta: sdk.Meta{"x": "<y>"}, Content: text("a")}},
		"annotated": {"15", sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a",
			Annotations: &sdk.Annotations{Priority: 0.5}}}}},
		"a link": {"16", sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "https://example.com/?a=1&b=<2>", Name: "l"}}}},
	} {
		t.Run(name, func(t *testing.T) { check(t, c.id, c.res) })
	}
	t.Run("any text", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			s := rapid.String().Draw(rt, "text")
			raw, _ := json.Marshal(map[string]string{"s": s})
			check(rt, strconv.Itoa(rapid.IntRange(0, 1<<40).Draw(rt, "id")),
				sdk.CallToolResult{IsError: rapid.Bool().Draw(rt, "error"), Content: text(s + string(raw)), StructuredContent: json.RawMessage(raw)})
		})
	})
}

// BenchmarkEncodeResult: get_credits' result encoded by the fast path and
// as the SDK encodes it.
// go test ./mcp -run '^$' -bench EncodeResult -benchmem
func BenchmarkEncodeResult(b *testing.B) {
	impl := &sdk.Implementation{Name: "holdco", Title: "holdco businesses", Version: "dev"}
	h := &handler{impl: impl}
	h.serverMeta, _ = json.Marshal(sdk.Meta{sdk.MetaKeyServerInfo: impl})
	raw := json.RawMessage(`{"balance":994,"spent_today":6,"daily_credit_cap":1000,"min_to_start_turn":1,"min_to_start_business":10,` +
		`"plan":{"name":"free","price_cents":0}}`)
	res := func() *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}, StructuredContent: raw}
	}
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.encodeResult(json.RawMessage("7"), res()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sdk", func(b *testing.B) {
		for b.Loop() {
			if sdkResponse(b, impl, float64(7), *res()) == nil {
				b.Fatal("not encoded")
			}
		}
	})
}
