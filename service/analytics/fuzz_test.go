package analytics

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"holdco/models"
	"holdco/service"
)

// FuzzCaptureDecode drives the capture decoder (encodings, then events)
// with arbitrary bodies and checks, besides not panicking:
//   - the decoded body is never larger than MaxDecodedBytes, and an error
//     is malformed or too_large, nothing else;
//   - each encoding a PostHog client uses (gzip, base64, a form's base64
//     `data`) decodes to the same bytes as the plain body;
//   - an event that passes is one line of text where it must be, has a
//     path, and its time lies within maxEventAge before now, never after.
func FuzzCaptureDecode(f *testing.F) {
	for _, s := range []string{
		`{"event":"$pageview","distinct_id":"u1","properties":{"token":"phc_0123456789","$current_url":"https://a.example/p?utm_source=x"}}`,
		`[{"event":"e","distinct_id":7,"timestamp":"2024-01-01T00:00:00Z"},{"event":"f","offset":100}]`,
		`{"api_key":"phc_0123456789","batch":[{"event":"e","properties":{"distinct_id":"d","$referrer":"https://www.b.example/"}}],"sent_at":"2024-01-01T00:00:01Z"}`,
		`{"data":"eyJldmVudCI6ImUiLCJkaXN0aW5jdF9pZCI6ImQifQ"}`,
		`{"data":{"data":{"batch":[]}}}`,
		`data=eyJldmVudCI6ImUifQ%3D%3D&compression=base64`,
		`{"event":"e\u0000","distinct_id":"\ud800"}`,
		`{"event":"e","distinct_id":"d","offset":1e300,"properties":{"$screen_width":"1e9"}}`,
	} {
		f.Add([]byte(s), "", "", "")
	}
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}, "", "gzip", "gzip-js")
	f.Add([]byte("eyJldmVudCI6ImUifQ"), "application/x-www-form-urlencoded", "", "base64")
	f.Add([]byte("data=%%%"), "application/x-www-form-urlencoded", "", "lz64")
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte, contentType, contentEncoding, compression string) {
		in := CaptureInput{Body: body, ContentType: contentType, ContentEncoding: contentEncoding, Compression: compression}
		raw, err := decodeBody(in)
		switch {
		case err == nil && len(raw) > MaxDecodedBytes:
			t.Fatalf("decoded %d bytes, more than %d", len(raw), MaxDecodedBytes)
		case err != nil && err != errMalformed && !models.IsCode(err, models.CodeTooLarge):
			t.Fatalf("unexpected error %v", err)
		}
		if err == nil {
			checkEvents(t, raw, now)
		}
		if len(body) > 64<<10 {
			return
		}
		// The encodings of a plain body decode to it.
		plain := bytes.TrimLeft(body, "\x1f\x8b") // not gzip itself
		if bytes.HasPrefix(plain, []byte("data=")) {
			return
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write(plain)
		_ = zw.Close()
		b64 := base64.StdEncoding.EncodeToString(plain)
		for name, enc := range map[string]CaptureInput{
			"gzip-js":      {Body: gz.Bytes(), Compression: "gzip-js"},
			"gzip header":  {Body: gz.Bytes(), ContentEncoding: "gzip"},
			"base64":       {Body: []byte(b64), Compression: "base64"},
			"form base64":  {Body: []byte("data=" + url.QueryEscape(b64)), ContentType: "application/x-www-form-urlencoded"},
			"form gzip-js": {Body: []byte("data=" + url.QueryEscape(gz.String()) + "&compression=gzip-js"), ContentType: "application/x-www-form-urlencoded"},
		} {
			got, err := decodeBody(enc)
			if len(plain) == 0 && strings.HasPrefix(name, "form") {
				continue // an empty data field is no body
			}
			if err != nil || !bytes.Equal(got, plain) {
				t.Fatalf("%s: decodes to %q, %v; want %q", name, got, err, plain)
			}
		}
	})
}

func checkEvents(t *testing.T, raw []byte, now time.Time) {
	t.Helper()
	wires, top, n := splitEvents(raw)
	if n < len(wires) {
		t.Fatalf("%d events counted, %d decoded", n, len(wires))
	}
	for _, w := range wires {
		e, ok := w.event(now, top.SentAt)
		if !ok {
			continue
		}
		for name, v := range map[string]string{"event": e.Event, "distinct_id": e.DistinctID} {
			if v == "" || utf8.RuneCountInString(v) > 200 || service.CheckText(v, false) != nil {
				t.Fatalf("%s %q passed", name, v)
			}
		}
		for name, v := range map[string]string{"path": e.Path, "referrer": e.Referrer, "utm_source": e.UTMSource, "utm_medium": e.UTMMedium, "utm_campaign": e.UTMCampaign} {
			if service.CheckText(v, false) != nil || len(v) > 500 {
				t.Fatalf("%s %q stored", name, v)
			}
		}
		if e.At.After(now) || now.Sub(e.At) > maxEventAge {
			t.Fatalf("event time %v outside [now-%v, now]", e.At, maxEventAge)
		}
		if e.ScreenWidth < 0 || e.ScreenWidth > 100_000 || e.ScreenHeight < 0 || e.ScreenHeight > 100_000 {
			t.Fatalf("screen %dx%d", e.ScreenWidth, e.ScreenHeight)
		}
	}
}
