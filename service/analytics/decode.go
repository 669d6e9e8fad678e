package analytics

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The capture body's JSON is read in one pass by a small decoder that
// keeps only the fields capture uses, in the types it uses them in, with
// the answers encoding/json gave when it decoded into the wire structs
// (TestSplitEventsMatchesEncodingJSON and FuzzSplitEventsMatchesEncodingJSON
// hold the two side by side): the same syntax errors (anywhere in the
// body, nesting beyond 10,000), keys matched exactly or else
// case-insensitively (Unicode simple folding, as encoding/json does), the
// last of duplicate keys wins, null leaves a string field as it was,
// objects of the same field merge, a value of the wrong type makes the
// event (or, in the fields around a batch, the body) undecodable, and
// strings with escapes or invalid UTF-8 are unquoted by encoding/json
// itself. A page view costs a few allocations (its kept strings) instead
// of encoding/json's reflection and the second decode of a lone event.

// wireTop is what a batch body carries around its events.
type wireTop struct {
	APIKey, Token, SentAt string
}

// wireEvent is one PostHog event; fields holdco does not use are skipped.
type wireEvent struct {
	Event, APIKey, Token, Timestamp string
	// DistinctID is distinct_id as text: a string, or a number as
	// written; "" when absent or of another type.
	DistinctID string
	// Offset is offset (ms before sending) when HasOffset.
	Offset     float64
	HasOffset  bool
	Properties wireProps
}

type wireProps struct {
	Token, DistinctID                                   string // DistinctID as wireEvent's
	CurrentURL, Pathname, Host, Referrer, ReferringHost string
	ScreenWidth, ScreenHeight                           int // by dimension
	UTMSource, UTMMedium, UTMCampaign                   string
}

// maxJSONDepth is encoding/json's limit of nested arrays and objects.
const maxJSONDepth = 10000

// splitEvents finds the events of a body: an array, {batch: [...]},
// {data: ...} or one event. It returns the events that decode, what
// surrounds them, and how many there were in all.
func splitEvents(raw []byte) ([]wireEvent, wireTop, int) { return splitEventsInto(nil, raw) }

// splitEventsInto is splitEvents, a lone event appended to one (the
// caller's room for it, on its stack).
func splitEventsInto(one []wireEvent, raw []byte) ([]wireEvent, wireTop, int) {
	raw = bytes.TrimSpace(raw)
	r := jsonReader{b: raw}
	switch {
	case len(raw) > 0 && raw[0] == '[':
		evs, n, ok := r.eventArray()
		if !ok || !r.atEnd() {
			return nil, wireTop{}, 1
		}
		return evs, wireTop{}, n
	case len(raw) > 0 && raw[0] == '{':
		var ts topState
		var ev wireEvent
		evBad, ok := r.eventObject(&ev, &ts)
		if !ok || !r.atEnd() {
			return nil, wireTop{}, 1
		}
		top := ts.top
		switch {
		case ts.bad:
			return nil, top, 1
		case ts.hasBatch:
			if ts.batchBad {
				return nil, top, 1
			}
			return ts.batch, top, ts.batchN
		case ts.data != nil:
			inner := ts.data
			if inner[0] == '"' || inner[0] == 'n' { // base64 text (null is "")
				s := ""
				if inner[0] == '"' {
					s = unquote(inner)
				}
				b, err := decodeBase64([]byte(s))
				if err != nil {
					return nil, top, 1
				}
				inner = b
			}
			evs, innerTop, n := splitEventsInto(one, inner)
			if top.APIKey == "" {
				top.APIKey = innerTop.APIKey
			}
			return evs, top, n
		case evBad:
			return nil, top, 1
		}
		return append(one[:0], ev), top, 1
	}
	return nil, wireTop{}, 1
}

// topState is what the fields around a batch hold.
type topState struct {
	top wireTop
	// bad: a field of the wrong type (the body is undecodable).
	bad bool
	// hasBatch: a batch field (even null); batchBad: not an array.
	hasBatch, batchBad bool
	batch              []wireEvent
	batchN             int
	// data is the data field's JSON; nil when absent.
	data []byte
}

// jsonReader reads JSON from b at i; depth counts the arrays and
// objects open. Its methods return false on a syntax error.
type jsonReader struct {
	b     []byte
	i     int
	depth int
}

func (r *jsonReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *jsonReader) atEnd() bool {
	r.ws()
	return r.i == len(r.b)
}

// peek is the next byte (0 at the end).
func (r *jsonReader) peek() byte {
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// rawString reads the string at r.i (a '"'): its bytes between the
// quotes, and whether they are its value as they are (no escapes, valid
// UTF-8).
func (r *jsonReader) rawString() (seg []byte, plain, ok bool) {
	b := r.b
	start := r.i + 1
	plain, ascii := true, true
	for j := start; j < len(b); {
		c := b[j]
		switch {
		case c == '"':
			seg = b[start:j]
			r.i = j + 1
			if !ascii && plain && !utf8.Valid(seg) {
				plain = false
			}
			return seg, plain, true
		case c == '\\':
			plain = false
			j++
			if j >= len(b) {
				return nil, false, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+4 >= len(b) {
					return nil, false, false
				}
				for k := 1; k <= 4; k++ {
					if !isHex(b[j+k]) {
						return nil, false, false
					}
				}
				j += 5
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		case c >= utf8.RuneSelf:
			ascii = false
			j++
		default:
			j++
		}
	}
	return nil, false, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// str reads a string value.
func (r *jsonReader) str() (string, bool) {
	start := r.i
	seg, plain, ok := r.rawString()
	switch {
	case !ok:
		return "", false
	case plain:
		return string(seg), true
	}
	return unquote(r.b[start:r.i]), true
}

// unquote is the value of a JSON string with escapes or invalid UTF-8,
// as encoding/json reads it (invalid UTF-8 and lone surrogates become
// U+FFFD).
func unquote(quoted []byte) string {
	var s string
	_ = json.Unmarshal(quoted, &s)
	return s
}

// key reads an object key.
func (r *jsonReader) key() ([]byte, bool) {
	start := r.i
	seg, plain, ok := r.rawString()
	switch {
	case !ok:
		return nil, false
	case plain:
		return seg, true
	}
	return []byte(unquote(r.b[start:r.i])), true
}

// number reads a number, as written.
func (r *jsonReader) number() ([]byte, bool) {
	b, j := r.b, r.i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j >= len(b):
		return nil, false
	case b[j] == '0':
		j++
	case b[j] >= '1' && b[j] <= '9':
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	default:
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		if j >= len(b) || !isDigit(b[j]) {
			return nil, false
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || !isDigit(b[j]) {
			return nil, false
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	lit := b[r.i:j]
	r.i = j
	return lit, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (r *jsonReader) literal(word string) bool {
	if !bytes.HasPrefix(r.b[r.i:], []byte(word)) {
		return false
	}
	r.i += len(word)
	return true
}

// parseFloat is encoding/json's conversion of a number into a float64
// (or an interface): out of range is an error.
func parseFloat(lit []byte) (float64, bool) {
	f, err := strconv.ParseFloat(string(lit), 64)
	return f, err == nil
}

// skip reads any value. With numbers, a number out of float64's range
// is reported (numErr), as decoding into an interface does.
func (r *jsonReader) skip(numbers bool) (numErr, ok bool) {
	switch c := r.peek(); {
	case c == '{', c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		if r.depth++; r.depth > maxJSONDepth {
			return false, false
		}
		r.i++
		r.ws()
		if r.peek() == end {
			r.i++
			r.depth--
			return false, true
		}
		for {
			if c == '{' {
				if r.peek() != '"' {
					return false, false
				}
				if _, _, ok := r.rawString(); !ok {
					return false, false
				}
				r.ws()
				if r.peek() != ':' {
					return false, false
				}
				r.i++
				r.ws()
			}
			bad, ok := r.skip(numbers)
			if !ok {
				return false, false
			}
			numErr = numErr || bad
			r.ws()
			switch r.peek() {
			case ',':
				r.i++
				r.ws()
				continue
			case end:
				r.i++
				r.depth--
				return numErr, true
			}
			return false, false
		}
	case c == '"':
		_, _, ok := r.rawString()
		return false, ok
	case c == 't':
		return false, r.literal("true")
	case c == 'f':
		return false, r.literal("false")
	case c == 'n':
		return false, r.literal("null")
	case c == '-' || isDigit(c):
		lit, ok := r.number()
		if !ok {
			return false, false
		}
		if numbers {
			_, fine := parseFloat(lit)
			return !fine, true
		}
		return false, true
	}
	return false, false
}

// object reads an object, calling field with r.i at each value (which it
// reads).
func (r *jsonReader) object(field func(key []byte) bool) bool {
	if r.depth++; r.depth > maxJSONDepth {
		return false
	}
	r.i++ // '{'
	r.ws()
	if r.peek() == '}' {
		r.i++
		r.depth--
		return true
	}
	for {
		if r.peek() != '"' {
			return false
		}
		k, ok := r.key()
		if !ok {
			return false
		}
		r.ws()
		if r.peek() != ':' {
			return false
		}
		r.i++
		r.ws()
		if !field(k) {
			return false
		}
		r.ws()
		switch r.peek() {
		case ',':
			r.i++
			r.ws()
			continue
		case '}':
			r.i++
			r.depth--
			return true
		}
		return false
	}
}

// stringField reads a value for a string field: a string sets it, null
// leaves it; another type is a type error (bad).
func (r *jsonReader) stringField(dst *string, bad *bool) bool {
	switch r.peek() {
	case '"':
		s, ok := r.str()
		*dst = s
		return ok
	case 'n':
		return r.literal("null")
	}
	*bad = true
	_, ok := r.skip(false)
	return ok
}

// distinctIDField reads a distinct_id (any type): a string's value, a
// number's text, else "".
func (r *jsonReader) distinctIDField(dst *string) bool {
	switch c := r.peek(); {
	case c == '"':
		s, ok := r.str()
		*dst = s
		return ok
	case c == '-' || isDigit(c):
		lit, ok := r.number()
		*dst = string(lit)
		return ok
	}
	*dst = ""
	_, ok := r.skip(false)
	return ok
}

// dimensionField reads a screen size (an interface in encoding/json's
// terms): a number, or a string holding one; anything else is 0.
func (r *jsonReader) dimensionField(dst *int, bad *bool) bool {
	switch c := r.peek(); {
	case c == '"':
		s, ok := r.str()
		*dst = dimensionText(s)
		return ok
	case c == '-' || isDigit(c):
		lit, ok := r.number()
		f, fine := parseFloat(lit)
		if !fine {
			*bad = true
		}
		*dst = dimension(f)
		return ok
	}
	*dst = 0
	numErr, ok := r.skip(true)
	*bad = *bad || numErr
	return ok
}

var (
	eventFieldNames = []string{"event", "distinct_id", "api_key", "token", "timestamp", "offset", "properties", "sent_at", "batch", "data"}
	propFieldNames  = []string{"token", "distinct_id", "$current_url", "$pathname", "$host", "$referrer", "$referring_domain",
		"$screen_width", "$screen_height", "utm_source", "utm_medium", "utm_campaign"}
)

// fieldName is the name of names a key stands for: the one it equals,
// else the one it equals ignoring case (as encoding/json matches struct
// fields); "" for none.
func fieldName(key []byte, names []string) string {
	for _, n := range names {
		if string(key) == n {
			return n
		}
	}
	ascii := true
	for _, c := range key {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	for _, n := range names {
		if ascii {
			if len(key) == len(n) && asciiEqualFold(key, n) {
				return n
			}
		} else if strings.EqualFold(string(key), n) {
			return n
		}
	}
	return ""
}

func asciiEqualFold(a []byte, b string) bool {
	for i := range a {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// eventObject reads an event object into ev; with ts, the fields around
// a batch too (a body that is one object). bad: a field of the event
// had the wrong type.
func (r *jsonReader) eventObject(ev *wireEvent, ts *topState) (bad, ok bool) {
	ok = r.object(func(key []byte) bool {
		name := fieldName(key, eventFieldNames)
		if ts == nil {
			switch name {
			case "sent_at", "batch", "data":
				name = ""
			}
		}
		switch name {
		case "event":
			return r.stringField(&ev.Event, &bad)
		case "distinct_id":
			return r.distinctIDField(&ev.DistinctID)
		case "api_key", "token":
			dst := &ev.APIKey
			if name == "token" {
				dst = &ev.Token
			}
			wrong := false
			if !r.stringField(dst, &wrong) {
				return false
			}
			bad = bad || wrong
			if ts != nil { // the same field of the batch's surroundings
				if name == "token" {
					ts.top.Token = *dst
				} else {
					ts.top.APIKey = *dst
				}
				ts.bad = ts.bad || wrong
			}
			return true
		case "timestamp":
			return r.stringField(&ev.Timestamp, &bad)
		case "offset":
			switch c := r.peek(); {
			case c == '-' || isDigit(c):
				lit, ok := r.number()
				f, fine := parseFloat(lit)
				ev.Offset, ev.HasOffset = f, true
				bad = bad || !fine
				return ok
			case c == 'n':
				ev.Offset, ev.HasOffset = 0, false
				return r.literal("null")
			}
			bad = true
			_, ok := r.skip(false)
			return ok
		case "properties":
			switch r.peek() {
			case '{':
				return r.propsObject(&ev.Properties, &bad)
			case 'n':
				return r.literal("null")
			}
			bad = true
			_, ok := r.skip(false)
			return ok
		case "sent_at":
			return r.stringField(&ts.top.SentAt, &ts.bad)
		case "batch":
			ts.hasBatch, ts.batch, ts.batchN, ts.batchBad = true, nil, 0, false
			switch r.peek() {
			case '[':
				evs, n, ok := r.eventArray()
				ts.batch, ts.batchN = evs, n
				return ok
			case 'n':
				return r.literal("null")
			}
			ts.batchBad = true
			_, ok := r.skip(false)
			return ok
		case "data":
			start := r.i
			if _, ok := r.skip(false); !ok {
				return false
			}
			ts.data = r.b[start:r.i]
			return true
		}
		_, ok := r.skip(false)
		return ok
	})
	return bad, ok
}

// propsObject reads an event's properties into p (merged with what it
// holds, as encoding/json does for a repeated object).
func (r *jsonReader) propsObject(p *wireProps, bad *bool) bool {
	return r.object(func(key []byte) bool {
		switch fieldName(key, propFieldNames) {
		case "token":
			return r.stringField(&p.Token, bad)
		case "distinct_id":
			return r.distinctIDField(&p.DistinctID)
		case "$current_url":
			return r.stringField(&p.CurrentURL, bad)
		case "$pathname":
			return r.stringField(&p.Pathname, bad)
		case "$host":
			return r.stringField(&p.Host, bad)
		case "$referrer":
			return r.stringField(&p.Referrer, bad)
		case "$referring_domain":
			return r.stringField(&p.ReferringHost, bad)
		case "$screen_width":
			return r.dimensionField(&p.ScreenWidth, bad)
		case "$screen_height":
			return r.dimensionField(&p.ScreenHeight, bad)
		case "utm_source":
			return r.stringField(&p.UTMSource, bad)
		case "utm_medium":
			return r.stringField(&p.UTMMedium, bad)
		case "utm_campaign":
			return r.stringField(&p.UTMCampaign, bad)
		}
		_, ok := r.skip(false)
		return ok
	})
}

// eventArray reads an array of events: the ones that decode (null is an
// empty event, as encoding/json decodes it into a struct) and how many
// items it held.
func (r *jsonReader) eventArray() (evs []wireEvent, n int, ok bool) {
	if r.depth++; r.depth > maxJSONDepth {
		return nil, 0, false
	}
	r.i++ // '['
	r.ws()
	if r.peek() == ']' {
		r.i++
		r.depth--
		return nil, 0, true
	}
	for {
		n++
		switch r.peek() {
		case '{':
			var ev wireEvent
			bad, ok := r.eventObject(&ev, nil)
			if !ok {
				return nil, 0, false
			}
			if !bad {
				evs = append(evs, ev)
			}
		case 'n':
			if !r.literal("null") {
				return nil, 0, false
			}
			evs = append(evs, wireEvent{})
		default:
			if _, ok := r.skip(false); !ok {
				return nil, 0, false
			}
		}
		r.ws()
		switch r.peek() {
		case ',':
			r.i++
			r.ws()
			continue
		case ']':
			r.i++
			r.depth--
			return evs, n, true
		}
		return nil, 0, false
	}
}
