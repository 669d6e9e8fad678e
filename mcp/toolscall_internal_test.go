package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
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
