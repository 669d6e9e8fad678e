package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
)

// jsonEncoder is a response body that writes its own JSON: the same bytes
// encoding/json writes for it (HTML not escaped, as huma's default), with
// no reflection. The company page's answer is one (dashboard.go): encoding
// it by reflection was 9–13 % of the server's CPU on that route. The test
// TestHandEncodingIsEncodingJSONs compares the two on random values of
// every field, so a field added to a type and not to its encodeJSON fails
// it.
type jsonEncoder interface {
	encodeJSON(e *jsonEnc)
}

// jsonFormat is huma's JSON format, with a fast path for a jsonEncoder
// body: encoded into a pooled buffer and written in one piece with its
// Content-Length (a body over net/http's 2 KB buffer is otherwise sent
// chunked). Anything else goes to huma's default (encoding/json).
var jsonFormat = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		je, ok := v.(jsonEncoder)
		if !ok {
			return huma.DefaultJSONFormat.Marshal(w, v)
		}
		e := encoders.Get().(*jsonEnc)
		defer e.release()
		je.encodeJSON(e)
		if e.err != nil {
			return e.err
		}
		e.b = append(e.b, '\n') // as json.Encoder.Encode
		if rw, ok := w.(http.ResponseWriter); ok {
			rw.Header()["Content-Length"] = []string{strconv.Itoa(len(e.b))}
		}
		_, err := w.Write(e.b)
		return err
	},
	Unmarshal: huma.DefaultJSONFormat.Unmarshal,
}

var encoders = sync.Pool{New: func() any { return &jsonEnc{b: make([]byte, 0, 4096)} }}

// jsonEnc appends JSON values to b; the first value that encoding/json
// would refuse (a time outside RFC 3339's years, a NaN or an infinity)
// sets err, and the rest is appended but not used.
type jsonEnc struct {
	b   []byte
	err error
}

// release puts e back in the pool, unless an unusually large body grew it.
func (e *jsonEnc) release() {
	if cap(e.b) > 1<<20 {
		return
	}
	e.b, e.err = e.b[:0], nil
	encoders.Put(e)
}

// raw appends s as it is: punctuation and keys, written as literals.
func (e *jsonEnc) raw(s string) { e.b = append(e.b, s...) }

func (e *jsonEnc) int(n int64) { e.b = strconv.AppendInt(e.b, n, 10) }

func (e *jsonEnc) bool(v bool) { e.b = strconv.AppendBool(e.b, v) }

func (e *jsonEnc) null() { e.b = append(e.b, "null"...) }

func (e *jsonEnc) intPtr(n *int64) {
	if n == nil {
		e.null()
		return
	}
	e.int(*n)
}

func (e *jsonEnc) strPtr(s *string) {
	if s == nil {
		e.null()
		return
	}
	e.str(*s)
}

// time is time.Time's MarshalJSON: RFC 3339 with nanoseconds, an error
// outside years 0–9999 or for an offset outside ±24 h.
func (e *jsonEnc) time(t time.Time) {
	e.b = append(e.b, '"')
	b, err := t.AppendText(e.b)
	if err != nil {
		e.fail(&json.MarshalerError{Type: reflect.TypeFor[time.Time](), Err: err})
		return
	}
	e.b = append(b, '"')
}

func (e *jsonEnc) timePtr(t *time.Time) {
	if t == nil {
		e.null()
		return
	}
	e.time(*t)
}

func (e *jsonEnc) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// float is encoding/json's float64: the shortest representation, in
// exponent form below 1e-6 and from 1e21 on (e-07 written e-7); NaN and
// the infinities are an error.
func (e *jsonEnc) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		e.fail(errUnsupportedFloat)
		return
	}
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if format == 'e' {
		if n := len(e.b); n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

var errUnsupportedFloat = errors.New("json: unsupported value: NaN or infinite float")

func (e *jsonEnc) floatPtr(f *float64) {
	if f == nil {
		e.null()
		return
	}
	e.float(*f)
}

// rawObject is a json.Marshaler's result as encoding/json writes it:
// compacted (the insignificant whitespace removed), an error when it is
// not JSON.
func (e *jsonEnc) rawObject(v []byte) {
	buf := bytes.NewBuffer(e.b)
	if err := json.Compact(buf, v); err != nil {
		e.fail(err)
		return
	}
	e.b = buf.Bytes()
}

// list appends s as an array of f's encodings (null for a nil slice, as
// encoding/json).
func list[T any](e *jsonEnc, s []T, f func(*T, *jsonEnc)) {
	if s == nil {
		e.null()
		return
	}
	e.b = append(e.b, '[')
	for i := range s {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		f(&s[i], e)
	}
	e.b = append(e.b, ']')
}

// str appends s quoted as encoding/json does with HTML escaping off: ",
// \ and the control characters escaped (\b, \f, \n, \r and \t short),
// U+2028 and U+2029 escaped, invalid UTF-8 replaced by U+FFFD.
func (e *jsonEnc) str(s string) {
	const hex = "0123456789abcdef"
	b := append(e.b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	e.b = append(b, '"')
}
