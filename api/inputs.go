package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"
)

// Every operation's inputs pass checkInputs before huma parses them, so a
// new route gets the same rules without doing anything:
//
//   - no string (path, query and header parameters, every string of a JSON
//     body and its object keys) may hold a NUL character or invalid UTF-8
//     (in a JSON string: raw bytes that are not UTF-8, or a \u escape of a
//     lone surrogate);
//   - a string meant as a single line (parameters, and body fields not
//     tagged `multiline:"true"`) may hold no control character at all
//     (C0, DEL, C1); a multi-line field may hold tab, newline and carriage
//     return among them;
//   - a UUID (format:"uuid") written upper-case, without dashes, in braces
//     or as urn:uuid: reaches the handler canonical (lower-case, hyphenated),
//     as FastAPI hands a handler a parsed UUID;
//   - an integer field given an integral number in another spelling (1e3,
//     1000.0) gets the integer, as Pydantic's lax mode does;
//   - an optional body that is JSON null counts as no body.
//
// Failures answer 422 with FastAPI's body and nothing reaches a handler.

// multilineTag marks a body string field where line breaks and tabs are
// allowed (free text such as a company's idea).
const multilineTag = "multiline"

// Validation failure kinds of the edge check.
const (
	typeStringNUL     = "string_nul"
	typeStringControl = "string_control_character"
	typeStringUnicode = "string_unicode"
	typeIntFromFloat  = "int_from_float"
	typeIntSize       = "int_parsing_size"
)

const msgStringUnicode = "Input should be a valid string, unable to parse raw data as a unicode string"

type textRule int

const (
	ruleNoNUL      textRule = iota // unknown or free-form values: only NUL is refused
	ruleMultiLine                  // control characters other than \t \n \r are refused
	ruleSingleLine                 // every control character is refused
)

// textFailure returns the kind and message of the first character rule
// broken by s, or "" when s is fine.
func textFailure(s string, rule textRule) (typ, msg string) {
	if !utf8.ValidString(s) {
		return typeStringUnicode, msgStringUnicode
	}
	if strings.IndexByte(s, 0) >= 0 {
		return typeStringNUL, "String should not contain NUL characters"
	}
	if rule == ruleNoNUL {
		return "", ""
	}
	for _, r := range s {
		if !isControl(r) {
			continue
		}
		if rule == ruleMultiLine && (r == '\t' || r == '\n' || r == '\r') {
			continue
		}
		if rule == ruleMultiLine {
			return typeStringControl, "String should not contain control characters other than tab and line breaks"
		}
		return typeStringControl, "String should not contain control characters"
	}
	return "", ""
}

// isControl reports C0, DEL and C1 control characters.
func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r <= 0x9f }

// canonicalUUID returns the lower-case hyphenated form of any spelling
// huma's uuid format accepts, and false for anything else.
func canonicalUUID(s string) (string, bool) {
	u, err := uuid.Parse(s)
	if err != nil {
		return "", false
	}
	return u.String(), true
}

// humaContext lets inputContext embed huma.Context without a field named
// Context shadowing its Context method.
type humaContext = huma.Context

// inputContext hands huma the checked inputs: canonical parameter values
// and the (possibly rewritten) body.
type inputContext struct {
	humaContext
	params map[string]string // path parameters replaced by canonical values
	query  map[string]string // query parameters replaced by canonical values
	body   io.Reader
}

func (c *inputContext) Param(name string) string {
	if v, ok := c.params[name]; ok {
		return v
	}
	return c.humaContext.Param(name)
}

func (c *inputContext) Query(name string) string {
	if v, ok := c.query[name]; ok {
		return v
	}
	return c.humaContext.Query(name)
}

func (c *inputContext) BodyReader() io.Reader {
	if c.body != nil {
		return c.body
	}
	return c.humaContext.BodyReader()
}

// checkInputs is the huma middleware applying the edge rules above.
func checkInputs(api huma.API) func(huma.Context, func(huma.Context)) {
	registry := api.OpenAPI().Components.Schemas
	return func(ctx huma.Context, next func(huma.Context)) {
		op := ctx.Operation()
		if op == nil {
			next(ctx)
			return
		}
		in := &inputContext{humaContext: ctx}
		var errs []ValidationError
		fail := func(loc []any, typ, msg string) {
			errs = append(errs, ValidationError{Loc: loc, Msg: msg, Type: typ})
		}
		for _, p := range op.Parameters {
			var values []string
			switch p.In {
			case "path":
				values = []string{ctx.Param(p.Name)}
			case "query":
				u := ctx.URL()
				values = u.Query()[p.Name]
			case "header":
				values = []string{ctx.Header(p.Name)}
			default:
				continue
			}
			bad := false
			for _, v := range values {
				if typ, msg := textFailure(v, ruleSingleLine); typ != "" {
					fail([]any{p.In, p.Name}, typ, msg)
					bad = true
					break
				}
			}
			if !bad && p.In == "header" && len(values) == 1 && values[0] != "" {
				// huma skips the schema of a header declared in an
				// embedded struct: every header is checked here.
				if typ, msg := headerFailure(values[0], p.Schema); typ != "" {
					fail([]any{p.In, p.Name}, typ, msg)
					bad = true
				}
			}
			if bad || p.Schema == nil || p.Schema.Format != "uuid" || len(values) == 0 {
				continue
			}
			if c, ok := canonicalUUID(values[0]); ok && c != values[0] {
				switch p.In {
				case "path":
					in.params = setValue(in.params, p.Name, c)
				case "query":
					in.query = setValue(in.query, p.Name, c)
				}
			}
		}
		// Whatever the Content-Type says: huma reads any body of a JSON
		// operation as JSON (including "json", "x+json" and an empty
		// suffix), so every body it would read is checked.
		if t := jsonBodyType(op, registry); t != nil {
			in.body = checkBody(ctx, op, t, fail)
		}
		if len(errs) > 0 {
			_ = huma.WriteErr(api, ctx, http.StatusUnprocessableEntity, "validation failed", &HTTPValidationError{Detail: errs})
			return
		}
		next(in)
	}
}

func setValue(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// jsonBodyType is the Go type of the operation's JSON body, or nil when it
// has none (or takes its body raw, like a signed webhook).
func jsonBodyType(op *huma.Operation, registry huma.Registry) reflect.Type {
	if op.RequestBody == nil {
		return nil
	}
	mt := op.RequestBody.Content["application/json"]
	if mt == nil || mt.Schema == nil || mt.Schema.Ref == "" {
		return nil
	}
	return registry.TypeFromRef(mt.Schema.Ref)
}

// checkBody reads the body (up to the operation's limit), applies the
// rules to it and returns what huma should read instead of the request
// body. A body that is too large or not JSON is passed on untouched for
// huma to refuse.
func checkBody(ctx huma.Context, op *huma.Operation, t reflect.Type, fail func([]any, string, string)) io.Reader {
	orig := ctx.BodyReader()
	if orig == nil {
		return nil
	}
	limited := orig
	if op.MaxBodyBytes > 0 {
		limited = io.LimitReader(orig, op.MaxBodyBytes)
	}
	raw, err := io.ReadAll(limited)
	passOn := io.MultiReader(bytes.NewReader(raw), orig)
	if err != nil || op.MaxBodyBytes > 0 && int64(len(raw)) >= op.MaxBodyBytes {
		return passOn
	}
	trimmed := bytes.TrimSpace(raw)
	if string(trimmed) == "null" && !op.RequestBody.Required {
		return bytes.NewReader(nil) // an optional body sent as null
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.Decode(new(any)) != io.EOF {
		return passOn // huma reports the JSON error
	}
	// encoding/json turns invalid UTF-8 and lone surrogate escapes into
	// U+FFFD without a word: they are found in the raw text first.
	for _, loc := range badUnicodeStrings(raw) {
		fail(append([]any{"body"}, loc...), typeStringUnicode, msgStringUnicode)
	}
	w := bodyWalker{fail: fail}
	v = w.walk(v, t, "", ruleSingleLine, []any{"body"})
	if !w.changed {
		return passOn
	}
	out, err := json.Marshal(v)
	if err != nil {
		return passOn
	}
	return bytes.NewReader(out)
}

// bodyWalker follows a decoded JSON body alongside the Go type it will be
// unmarshalled into.
type bodyWalker struct {
	fail    func(loc []any, typ, msg string)
	changed bool
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// walk checks v (at loc, destined for t, nil when unknown, a struct field
// with tag when tag is not empty) and returns it, rewritten where a value
// gets its canonical spelling.
func (w *bodyWalker) walk(v any, t reflect.Type, tag reflect.StructTag, rule textRule, loc []any) any {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t.Kind() == reflect.Interface || t == rawMessageType) {
		t, rule = nil, ruleNoNUL
	}
	switch v := v.(type) {
	case string:
		if t != nil && t.Kind() == reflect.Slice {
			return v // []byte: base64 of binary data
		}
		if t == nil {
			rule = ruleNoNUL
		}
		if typ, msg := textFailure(v, rule); typ != "" {
			w.fail(loc, typ, msg)
		}
		return v
	case json.Number:
		return w.number(v, t, tag, loc)
	case []any:
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := range v {
			v[i] = w.walk(v[i], elem, "", rule, append(append([]any{}, loc...), i))
		}
		return v
	case map[string]any:
		for k, item := range v {
			at := append(append([]any{}, loc...), k)
			if typ, msg := textFailure(k, ruleNoNUL); typ != "" {
				w.fail(at, typ, msg)
				continue
			}
			switch {
			case t != nil && t.Kind() == reflect.Struct:
				f, ok := fieldByJSONName(t, k)
				if !ok {
					v[k] = w.walk(item, nil, "", ruleNoNUL, at) // ignored, but never a NUL
					continue
				}
				v[k] = w.walk(item, f.Type, f.Tag, fieldRule(f), at)
				if s, isString := v[k].(string); isString && f.Tag.Get("format") == "uuid" {
					if c, ok := canonicalUUID(s); ok && c != s {
						v[k], w.changed = c, true
					}
				}
			case t != nil && t.Kind() == reflect.Map:
				// A typed map's keys are values of its field: the field's
				// rule holds for them too (found by FuzzInputCheck).
				if typ, msg := textFailure(k, rule); typ != "" {
					w.fail(at, typ, msg)
					continue
				}
				v[k] = w.walk(item, t.Elem(), "", rule, at)
			default:
				v[k] = w.walk(item, nil, "", ruleNoNUL, at)
			}
		}
		return v
	}
	return v
}

// fieldRule is the text rule of a struct field: single-line unless tagged
// multiline.
func fieldRule(f reflect.StructField) textRule {
	if f.Tag.Get(multilineTag) == "true" {
		return ruleMultiLine
	}
	return ruleSingleLine
}

// fieldByJSONName finds the field encoding/json fills for key: the exact
// name first, then a case-insensitive match (as encoding/json does).
func fieldByJSONName(t reflect.Type, key string) (reflect.StructField, bool) {
	var folded reflect.StructField
	foundFolded := false
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Tag.Get("json") == "" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f, true
		}
		if !foundFolded && strings.EqualFold(name, key) {
			folded, foundFolded = f, true
		}
	}
	return folded, foundFolded
}
