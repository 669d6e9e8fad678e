package analytics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reference: capture's decoding as it was, encoding/json into the
// wire structs (before the one-pass decoder of decode.go), converted to
// the decoder's types.

type refTop struct {
	APIKey string          `json:"api_key"`
	Token  string          `json:"token"`
	SentAt string          `json:"sent_at"`
	Batch  json.RawMessage `json:"batch"`
	Data   json.RawMessage `json:"data"`
}

type refEvent struct {
	Event      string          `json:"event"`
	DistinctID json.RawMessage `json:"distinct_id"`
	APIKey     string          `json:"api_key"`
	Token      string          `json:"token"`
	Timestamp  string          `json:"timestamp"`
	Offset     *float64        `json:"offset"`
	Properties refProps        `json:"properties"`
}

type refProps struct {
	Token         string          `json:"token"`
	DistinctID    json.RawMessage `json:"distinct_id"`
	CurrentURL    string          `json:"$current_url"`
	Pathname      string          `json:"$pathname"`
	Host          string          `json:"$host"`
	Referrer      string          `json:"$referrer"`
	ReferringHost string          `json:"$referring_domain"`
	ScreenWidth   any             `json:"$screen_width"`
	ScreenHeight  any             `json:"$screen_height"`
	UTMSource     string          `json:"utm_source"`
	UTMMedium     string          `json:"utm_medium"`
	UTMCampaign   string          `json:"utm_campaign"`
}

func refSplitEvents(raw []byte) ([]wireEvent, wireTop, int) {
	var top refTop
	wt := func() wireTop { return wireTop{APIKey: top.APIKey, Token: top.Token, SentAt: top.SentAt} }
	raw = bytes.TrimSpace(raw)
	var items []json.RawMessage
	switch {
	case len(raw) > 0 && raw[0] == '[':
		if json.Unmarshal(raw, &items) != nil {
			return nil, wt(), 1
		}
	case len(raw) > 0 && raw[0] == '{':
		if json.Unmarshal(raw, &top) != nil {
			return nil, wt(), 1
		}
		switch {
		case len(top.Batch) > 0:
			if json.Unmarshal(top.Batch, &items) != nil {
				return nil, wt(), 1
			}
		case len(top.Data) > 0:
			inner := top.Data
			var s string
			if json.Unmarshal(inner, &s) == nil { // base64 text
				b, err := decodeBase64([]byte(s))
				if err != nil {
					return nil, wt(), 1
				}
				inner = b
			}
			evs, innerTop, n := refSplitEvents(inner)
			if top.APIKey == "" {
				top.APIKey = innerTop.APIKey
			}
			return evs, wt(), n
		default:
			items = []json.RawMessage{raw}
		}
	default:
		return nil, wt(), 1
	}
	out := make([]wireEvent, 0, len(items))
	for _, it := range items {
		var w refEvent
		if json.Unmarshal(it, &w) == nil {
			out = append(out, w.wire())
		}
	}
	return out, wt(), len(items)
}

func (w refEvent) wire() wireEvent {
	p := w.Properties
	e := wireEvent{Event: w.Event, APIKey: w.APIKey, Token: w.Token, Timestamp: w.Timestamp, DistinctID: refDistinctID(w.DistinctID),
		Properties: wireProps{Token: p.Token, DistinctID: refDistinctID(p.DistinctID), CurrentURL: p.CurrentURL, Pathname: p.Pathname,
			Host: p.Host, Referrer: p.Referrer, ReferringHost: p.ReferringHost, ScreenWidth: refDimension(p.ScreenWidth),
			ScreenHeight: refDimension(p.ScreenHeight), UTMSource: p.UTMSource, UTMMedium: p.UTMMedium, UTMCampaign: p.UTMCampaign}}
	if w.Offset != nil {
		e.Offset, e.HasOffset = *w.Offset, true
	}
	return e
}

func refDistinctID(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

func refDimension(v any) int {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case string:
		f, _ = strconv.ParseFloat(x, 64)
	}
	return dimension(f)
}

// sameSplit fails unless the decoder and the reference find the same
// events in raw (what surrounds them matters only with events).
func sameSplit(t *testing.T, raw []byte) {
	t.Helper()
	wantEvs, wantTop, wantN := refSplitEvents(raw)
	gotEvs, gotTop, gotN := splitEvents(raw)
	if wantN != gotN || len(wantEvs) != len(gotEvs) {
		t.Fatalf("%q: %d events of %d, want %d of %d", raw, len(gotEvs), gotN, len(wantEvs), wantN)
	}
	for i := range wantEvs {
		if !sameEvent(wantEvs[i], gotEvs[i]) {
			t.Fatalf("%q: event %d is\n%#v, want\n%#v", raw, i, gotEvs[i], wantEvs[i])
		}
	}
	if len(wantEvs) > 0 && wantTop != gotTop {
		t.Fatalf("%q: surroundings %#v, want %#v", raw, gotTop, wantTop)
	}
}

func sameEvent(a, b wireEvent) bool {
	if a.Offset != a.Offset && b.Offset != b.Offset { // NaN cannot come from JSON; be safe
		a.Offset, b.Offset = 0, 0
	}
	return a == b
}

var decodeCases = []string{
	// What posthog-js and the loader send.
	`{"event":"$pageview","distinct_id":"v1","properties":{"token":"hca_x","$current_url":"https://shop.example/p1","$referrer":"https://news.example/"}}`,
	`[{"event":"e","distinct_id":7,"timestamp":"2024-01-01T00:00:00Z"},{"event":"f","offset":100}]`,
	`{"api_key":"phc_0123456789","batch":[{"event":"e","properties":{"distinct_id":"d","$referrer":"https://www.b.example/"}}],"sent_at":"2024-01-01T00:00:01Z"}`,
	`{"data":"eyJldmVudCI6ImUiLCJkaXN0aW5jdF9pZCI6ImQifQ"}`,
	`{"data":{"data":{"batch":[]}}}`,
	`{"event":"e\u0000","distinct_id":"\ud800"}`,
	`{"event":"e","distinct_id":"d","offset":1e300,"properties":{"$screen_width":"1e9"}}`,
	`{"event":"$pageview","distinct_id":"01H","properties":{"$os":"Mac OS X","$browser":"Chrome","$set":{"a":[1,2,{"b":null}]},"$screen_width":1440,"$screen_height":900.5,"utm_source":"x","$lib":"web","$feature_flags":{},"$active_feature_flags":[]},"timestamp":"2024-01-01T00:00:00.123Z","uuid":"0190"}`,
	// Keys: case, Unicode folding, escapes, duplicates.
	`{"EVENT":"e","Distinct_ID":"d","Properties":{"$Current_URL":"https://a.example/","TOKEN":"t"}}`,
	"{\"event\":\"e\",\"distinct_id\":\"d\",\"to\u212aen\":\"kelvin\",\"properties\":{\"utm_\u017fource\":\"long s\"}}",
	`{"ev\u0065nt":"escaped key","distinct_id":"d"}`,
	`{"event":"a","event":"b","distinct_id":"d","distinct_id":null}`,
	`{"event":"a","event":null,"distinct_id":"d"}`,
	`{"event":"e","distinct_id":"d","properties":{"token":"a"},"properties":{"$host":"h"},"properties":null}`,
	`{"event":"e","distinct_id":"d","offset":5,"offset":null}`,
	`{"event":"e","distinct_id":"d","api_key":"k","api_key":null,"token":"t"}`,
	// Types.
	`{"event":5,"distinct_id":"d"}`,
	`{"event":"e","distinct_id":true}`,
	`{"event":"e","distinct_id":{"a":1e400}}`,
	`{"event":"e","distinct_id":-0.5e+3}`,
	`{"event":"e","distinct_id":"d","offset":"5"}`,
	`{"event":"e","distinct_id":"d","offset":1e400}`,
	`{"event":"e","distinct_id":"d","properties":"x"}`,
	`{"event":"e","distinct_id":"d","properties":[]}`,
	`{"event":"e","distinct_id":"d","properties":{"$screen_width":{"a":[1e400]}}}`,
	`{"event":"e","distinct_id":"d","properties":{"$screen_width":[1,"2",true,null]}}`,
	`{"event":"e","distinct_id":"d","properties":{"$screen_width":1e400}}`,
	`{"event":"e","distinct_id":"d","properties":{"$screen_width":"NaN","$screen_height":"-1"}}`,
	`{"event":"e","distinct_id":"d","properties":{"$screen_width":true,"$screen_height":null}}`,
	`{"event":"e","distinct_id":"d","sent_at":5}`,
	`{"event":"e","distinct_id":"d","token":[]}`,
	`{"event":"e","distinct_id":"d","properties":{"token":{}}}`,
	// Batches and data.
	`{"batch":null}`,
	`{"batch":5}`,
	`{"batch":[null,1,"x",[],{"event":"e","distinct_id":"d"},{"event":1}]}`,
	`{"batch":[{"event":"e","distinct_id":"d"}],"batch":[]}`,
	`{"batch":[],"data":"eyJldmVudCI6ImUifQ"}`,
	`{"BATCH":[{"event":"e","distinct_id":"d","sent_at":5,"batch":7}],"Sent_At":"2024-01-01T00:00:00Z","Token":"t"}`,
	`{"data":null}`,
	`{"data":5}`,
	`{"data":"!!!"}`,
	`{"data":[{"event":"e","distinct_id":"d","api_key":"inner"}]}`,
	`{"api_key":"outer","data":{"api_key":"inner","event":"e","distinct_id":"d"}}`,
	`{"data":{"api_key":"inner","event":"e","distinct_id":"d"},"sent_at":"2024-01-01T00:00:00Z"}`,
	`[]`, `[null]`, `[[]]`, `{}`, `[1,]`, `{"a":1,}`, `[1 2]`,
	// Syntax.
	`{"event":"e","distinct_id":"d"} x`, `{"event":"e","distinct_id":"d"`, `{"event":"e" "distinct_id":"d"}`,
	`{"event":"e","distinct_id":01}`, `{"event":"e","distinct_id":-}`, `{"event":"e","distinct_id":1.}`, `{"event":"e","distinct_id":.5}`,
	`{"event":"e","distinct_id":1e}`, `{"event":"e","distinct_id":tru}`, `{"event":"e","distinct_id":nul}`, `{"event":"e","distinct_id":truex}`,
	"{\"event\":\"e\tf\",\"distinct_id\":\"d\"}", `{"event":"\x","distinct_id":"d"}`, `{"event":"\u12","distinct_id":"d"}`,
	"{\"event\":\"caf\xe9\",\"distinct_id\":\"\xed\xa0\x80\"}", "{\"ev\xffent\":\"e\",\"distinct_id\":\"d\"}",
	`{"event":"\ud83d\ude00 \ud83d\u0041 \ude00","distinct_id":"d\/\b\f\n\r\t\"\\"}`,
	"\f{\"event\":\"e\",\"distinct_id\":\"d\"}\v", "\u00a0[{\"event\":\"e\",\"distinct_id\":\"d\"}]",
	"{\"event\":\"e\",\"distinct_id\":\"d\"}\u00a0", `{"event":"e","distinct_id":"d"}` + "\x00",
	"", " ", "null", `"x"`, `5`, `{`, `[`, `{"a"}`, `{"a":}`, `{:1}`, `{1:1}`,
}

// TestSplitEventsMatchesEncodingJSON: the one-pass decoder finds what
// encoding/json found in the wire structs, field for field, on bodies
// posthog clients send and on every odd case of JSON the structs met.
func TestSplitEventsMatchesEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		sameSplit(t, []byte(c))
	}
	// Nesting: encoding/json refuses beyond 10,000 levels.
	for _, depth := range []int{9_998, 9_999, 10_000, 10_001} {
		for _, body := range []string{
			`{"event":"e","distinct_id":"d","x":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`,
			strings.Repeat("[", depth) + strings.Repeat("]", depth),
			`{"batch":[{"event":"e","distinct_id":"d","properties":{"$screen_width":` + strings.Repeat("[", depth-4) + strings.Repeat("]", depth-4) + `}}]}`,
		} {
			sameSplit(t, []byte(body))
		}
	}
	// A larger batch, as posthog-js sends it.
	var b strings.Builder
	b.WriteString(`{"api_key":"hca_k","sent_at":"2024-01-01T00:00:05Z","batch":[`)
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"event":"$pageview","distinct_id":"v%d","timestamp":"2024-01-01T00:00:0%dZ","properties":{"$current_url":"https://a.example/p%d?utm_source=s","$screen_width":%d}}`, i, i%5, i, 100*i)
	}
	b.WriteString("]}")
	sameSplit(t, []byte(b.String()))
	evs, top, n := splitEvents([]byte(b.String()))
	require.Len(t, evs, 50)
	assert.Equal(t, 50, n)
	assert.Equal(t, wireTop{APIKey: "hca_k", SentAt: "2024-01-01T00:00:05Z"}, top)
	assert.Equal(t, 4900, evs[49].Properties.ScreenWidth)
}

// FuzzSplitEventsMatchesEncodingJSON holds the decoder against
// encoding/json on arbitrary bodies: the same events, field for field,
// the same count, the same rejections.
// go test -run '^$' -fuzz FuzzSplitEventsMatchesEncodingJSON ./service/analytics/
func FuzzSplitEventsMatchesEncodingJSON(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sameSplit(t, body)
		// And through the rest of capture's decoding: the same rows.
		now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
		wantEvs, wantTop, _ := refSplitEvents(body)
		gotEvs, gotTop, _ := splitEvents(body)
		for i := range wantEvs {
			we, wok := wantEvs[i].event(now, wantTop.SentAt)
			ge, gok := gotEvs[i].event(now, gotTop.SentAt)
			if wok != gok || we != ge {
				t.Fatalf("%q: row %d %v %+v, want %v %+v", body, i, gok, ge, wok, we)
			}
		}
	})
}

// BenchmarkSplitEvents is the decoding of one page view as the loader
// sends it, and of a batch of 50 as posthog-js does, against encoding/json
// into the wire structs (the reference, as capture decoded before).
func BenchmarkSplitEvents(b *testing.B) {
	one := []byte(`{"event":"$pageview","distinct_id":"v4711","properties":{"token":"hca_abcdefghijklmnopqrstuvwx","$current_url":"https://shop.example/p7","$referrer":"https://news.example/"}}`)
	var batch strings.Builder
	batch.WriteString(`{"api_key":"hca_abcdefghijklmnopqrstuvwx","sent_at":"2024-01-01T00:00:05Z","batch":[`)
	for i := range 50 {
		if i > 0 {
			batch.WriteString(",")
		}
		fmt.Fprintf(&batch, `{"event":"$pageview","distinct_id":"01J%08d","timestamp":"2024-01-01T00:00:01.123Z","properties":{"$os":"Mac OS X","$browser":"Chrome","$device_type":"Desktop","$current_url":"https://shop.example/p%d?utm_source=news","$host":"shop.example","$pathname":"/p%d","$browser_version":126,"$screen_height":900,"$screen_width":1440,"$lib":"web","$lib_version":"1.200.0","$insert_id":"abc%d","$time":1704067201.123,"$referrer":"https://news.example/","$referring_domain":"news.example","$session_id":"01J","$window_id":"01J","$pageview_id":"01J","$set":{},"$set_once":{}}}`, i, i%20, i%20, i)
	}
	batch.WriteString("]}")
	for _, c := range []struct {
		name string
		body []byte
	}{{"pageview", one}, {"batch50", []byte(batch.String())}} {
		for _, d := range []struct {
			name  string
			split func([]byte) ([]wireEvent, wireTop, int)
		}{{"decoder", splitEvents}, {"encoding-json", refSplitEvents}} {
			b.Run(c.name+"/"+d.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.body)))
				for b.Loop() {
					if evs, _, _ := d.split(c.body); len(evs) == 0 {
						b.Fatal("no events")
					}
				}
			})
		}
	}
}
