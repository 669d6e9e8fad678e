// Package agenttools is the catalog of tools a company's agents call in a
// turn, and that the assistant connector exposes with a `business`
// argument added. Each tool is a typed Go function whose input's JSON
// Schema is generated from its Go type; every tool only maps its arguments
// to an existing use case of service/..., which does its own
// authorization from the principal in ctx.
package agenttools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"holdco/models"
)

// MaxResultBytes is the largest tool result (its JSON); more is too_large.
const MaxResultBytes = 1 << 20

// Catalog holds the tools by name.
type Catalog struct {
	tools map[string]*tool
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{tools: map[string]*tool{}} }

type tool struct {
	spec models.ToolSpec
	// props are the input's properties with their resolved schemas;
	// required names the properties that must be present.
	props    map[string]*jsonschema.Resolved
	required []string
	// control tools are declared to the model but handled by the turn
	// workflow, not by Call.
	control bool
	// quick tools read or write only holdco's own rows (IsQuick).
	quick bool
	call  func(ctx context.Context, companyID string, raw json.RawMessage) (any, error)
}

// Register adds a tool. The input schema is generated from In (an object:
// a struct whose exported fields carry json names). Field tags:
//
//	jsonschema:"…"   the property's description
//	json:",omitempty" makes the property optional (otherwise required)
//	maxLength:"N"    at most N characters (strings)
//	enum:"a,b,c"     one of these values (strings; for an array, its items)
//	minimum:"N", maximum:"N"  bounds (numbers)
//
// Register panics on a bad input type or a duplicate name: the catalog is
// built once at start-up from code.
func Register[In, Out any](c *Catalog, name, description string, fn func(ctx context.Context, companyID string, in In) (Out, error)) {
	t := newTool[In](name, description)
	t.call = func(ctx context.Context, companyID string, raw json.RawMessage) (any, error) {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, invalid("", "The arguments do not match the tool's input schema.")
		}
		return fn(ctx, companyID, in)
	}
	c.add(t)
}

// RegisterControl declares a tool whose calls the turn workflow handles
// itself (ask_question ends the turn waiting for the user's answer). Its
// schema is in Specs; Call refuses it.
func RegisterControl[In any](c *Catalog, name, description string) {
	t := newTool[In](name, description)
	t.control = true
	c.add(t)
}

func (c *Catalog) add(t *tool) {
	if _, dup := c.tools[t.spec.Name]; dup {
		panic("agenttools: tool " + t.spec.Name + " registered twice")
	}
	c.tools[t.spec.Name] = t
}

func newTool[In any](name, description string) *tool {
	s, err := SchemaFor[In]()
	if err != nil {
		panic(fmt.Sprintf("agenttools: tool %s: %v", name, err))
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("agenttools: tool %s: %v", name, err))
	}
	t := &tool{spec: models.ToolSpec{Name: name, Description: description, InputSchema: raw},
		props: map[string]*jsonschema.Resolved{}, required: s.Required}
	for p, ps := range s.Properties {
		r, err := ps.Resolve(nil)
		if err != nil {
			panic(fmt.Sprintf("agenttools: tool %s, property %s: %v", name, p, err))
		}
		t.props[p] = r
	}
	return t
}

// SchemaFor generates the JSON Schema of a tool input type, reading the
// tags Register documents.
func SchemaFor[In any]() (*jsonschema.Schema, error) {
	typ := reflect.TypeFor[In]()
	if typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("input %v is not a struct", typ)
	}
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, err
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if v, ok := f.Tag.Lookup("maxLength"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("field %s: maxLength %q", f.Name, v)
			}
			ps.MaxLength = &n
		}
		if v, ok := f.Tag.Lookup("enum"); ok {
			target := ps // an array's enum constrains its items
			if ps.Items != nil {
				target = ps.Items
			}
			for _, e := range strings.Split(v, ",") {
				target.Enum = append(target.Enum, e)
			}
		}
		for tag, dst := range map[string]**float64{"minimum": &ps.Minimum, "maximum": &ps.Maximum} {
			if v, ok := f.Tag.Lookup(tag); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return nil, fmt.Errorf("field %s: %s %q", f.Name, tag, v)
				}
				*dst = &n
			}
		}
	}
	return s, nil
}

// Specs are the tools for a model request, sorted by name.
func (c *Catalog) Specs() []models.ToolSpec {
	specs := make([]models.ToolSpec, 0, len(c.tools))
	for _, t := range c.tools {
		specs = append(specs, t.spec)
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs
}

// IsControl reports whether name is a tool the turn workflow handles
// itself (ask_question).
func (c *Catalog) IsControl(name string) bool {
	t := c.tools[name]
	return t != nil && t.control
}

// IsQuick reports whether a tool reads or writes only holdco's own rows,
// with no provider, network or company database behind it, and answers in
// milliseconds: a turn runs its calls as local activities (workflows,
// changeLocalTools), without a round trip through Temporal's server.
func (c *Catalog) IsQuick(name string) bool {
	t := c.tools[name]
	return t != nil && t.quick
}

// markQuick declares the named tools quick (IsQuick); it panics on a name
// the catalog does not have, like Register on a bad tool.
func (c *Catalog) markQuick(names ...string) {
	for _, n := range names {
		t := c.tools[n]
		if t == nil {
			panic("agenttools: quick tool " + n + " is not registered")
		}
		t.quick = true
	}
}

// Has reports whether the catalog has a tool of that name.
func (c *Catalog) Has(name string) bool { return c.tools[name] != nil }

// Call runs the tool name for the company with the model's (or the
// connector's) JSON arguments and answers its result as JSON. Every error
// is a *models.Error: an unknown tool or arguments that break the schema
// are invalid_argument (with field when one is to blame), a result over
// MaxResultBytes is too_large, and the use case's own errors pass as they
// are. ErrorJSON renders any of them as the tool_result body.
func (c *Catalog) Call(ctx context.Context, companyID, name string, raw json.RawMessage) (json.RawMessage, error) {
	t := c.tools[name]
	if t == nil {
		return nil, invalid("name", "There is no tool named %q.", name)
	}
	if t.control {
		return nil, models.Errorf(models.CodeInvalidArgument,
			"%s is handled by the agent's turn, not called as a tool: the turn ends waiting for the user's answer.", name).WithField("name")
	}
	args, err := t.check(raw)
	if err != nil {
		return nil, err
	}
	out, err := t.call(ctx, companyID, args)
	if err != nil {
		return nil, asDomain(err)
	}
	res, err := json.Marshal(out)
	if err != nil {
		return nil, models.Errorf(models.CodeInternal, "The tool's result could not be encoded.").Wrap(err)
	}
	if len(res) > MaxResultBytes {
		return nil, models.Errorf(models.CodeTooLarge, "The result is %d bytes; a tool result is at most %d bytes (1 MB). Ask for less (a smaller limit or one item).",
			len(res), MaxResultBytes).With("size_bytes", len(res)).With("limit_bytes", MaxResultBytes)
	}
	return res, nil
}

// check validates raw against the tool's schema, property by property so
// that the error names the field, and answers the arguments to decode.
func (t *tool) check(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	if !utf8.Valid(raw) {
		return nil, invalid("", "The arguments are not valid UTF-8.")
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, invalid("", "The arguments must be one JSON object.")
	}
	if dec.More() {
		return nil, invalid("", "The arguments must be one JSON object.")
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		r := t.props[k]
		if r == nil {
			return nil, invalid(k, "%s is not an argument of %s.", k, t.spec.Name)
		}
		if bad := controlIn(obj[k]); bad != "" {
			return nil, invalid(k, "%s holds %s, which is not allowed.", k, bad)
		}
		if err := r.Validate(toPlain(obj[k])); err != nil {
			return nil, invalid(k, "%s is not valid: %s.", k, describe(r.Schema()))
		}
	}
	for _, k := range t.required {
		if _, ok := obj[k]; !ok {
			return nil, invalid(k, "%s is required.", k)
		}
	}
	if _, changed := wholeNumbers(obj); changed {
		canon, err := json.Marshal(obj)
		if err != nil {
			return nil, invalid("", "The arguments must be one JSON object.")
		}
		return canon, nil
	}
	return raw, nil
}

// wholeNumbers rewrites, in place, each whole number written with a
// fraction or an exponent (1.0, 1e0: an integer to JSON Schema, which the
// check above allows) as an integer literal, so that it decodes into the
// tool's integer fields as it does into its float ones. It reports whether
// it changed one. Numbers beyond int64 are left as written.
func wholeNumbers(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		if !strings.ContainsAny(x.String(), ".eE") {
			return x, false
		}
		f, err := x.Float64()
		if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
			return x, false
		}
		return json.Number(strconv.FormatInt(int64(f), 10)), true
	case map[string]any:
		changed := false
		for k, e := range x {
			if n, c := wholeNumbers(e); c {
				x[k], changed = n, true
			}
		}
		return x, changed
	case []any:
		changed := false
		for i, e := range x {
			if n, c := wholeNumbers(e); c {
				x[i], changed = n, true
			}
		}
		return x, changed
	}
	return v, false
}

// toPlain turns json.Numbers into float64 (what the validator reads).
func toPlain(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = toPlain(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = toPlain(e)
		}
		return a
	}
	return v
}

// controlIn names a NUL or control character (other than tab, newline and
// carriage return) in any string of v, "" when there is none.
func controlIn(v any) string {
	switch x := v.(type) {
	case string:
		for _, r := range x {
			if r == 0 {
				return "a NUL byte"
			}
			if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
				return "a control character"
			}
		}
	case map[string]any:
		for k, e := range x {
			if s := controlIn(k); s != "" {
				return s
			}
			if s := controlIn(e); s != "" {
				return s
			}
		}
	case []any:
		for _, e := range x {
			if s := controlIn(e); s != "" {
				return s
			}
		}
	}
	return ""
}

// describe says what a property accepts, in the words of its schema.
func describe(s *jsonschema.Schema) string {
	var parts []string
	switch {
	case s.Type != "":
		parts = append(parts, "expected "+s.Type)
	case len(s.Types) > 0:
		parts = append(parts, "expected "+strings.Join(s.Types, " or "))
	}
	if len(s.Enum) > 0 {
		vals := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			vals[i] = fmt.Sprint(e)
		}
		parts = append(parts, "one of "+strings.Join(vals, ", "))
	}
	if s.MaxLength != nil {
		parts = append(parts, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	if s.Minimum != nil {
		parts = append(parts, fmt.Sprintf("at least %v", *s.Minimum))
	}
	if s.Maximum != nil {
		parts = append(parts, fmt.Sprintf("at most %v", *s.Maximum))
	}
	if len(parts) == 0 {
		return "it does not match the input schema"
	}
	return strings.Join(parts, ", ")
}

func invalid(field, format string, args ...any) *models.Error {
	e := models.Errorf(models.CodeInvalidArgument, format, args...)
	if field != "" {
		e = e.WithField(field)
	}
	return e
}

// asDomain makes any error a *models.Error (an unexpected one is
// internal_error, its cause kept for logs only).
func asDomain(err error) *models.Error {
	var de *models.Error
	if errors.As(err, &de) {
		return de
	}
	return models.Errorf(models.CodeInternal, "The tool failed on the service side; retry shortly.").Wrap(err)
}

// ErrorJSON renders an error as the body both a model's tool_result
// (IsError) and the connector's isError result carry: {error, detail,
// field…} as models.BodyOf renders it.
func ErrorJSON(err error) json.RawMessage {
	b, merr := json.Marshal(models.BodyOf(asDomain(err)))
	if merr != nil {
		return json.RawMessage(`{"error":"internal_error","detail":"The error could not be encoded."}`)
	}
	return b
}

// keyed are the tools whose effect is stored under the call's key
// (service.EffectID) or checked at the provider by it: the same call made
// again — a turn's activity retried after a crash, or a client's request
// sent again with its idempotency key — answers the effect already made
// instead of making a second one, and a billable one is paid once.
var keyed = map[string]bool{
	"send_email": true, "web_research": true, "generate_image": true,
	ToolCreateTask: true, "add_prospect": true, "write_file": true,
	"create_product": true, "create_payment_link": true, "regenerate_ad": true,
	"commit_repository_files": true, "query_database": true,
}

// Keyed reports whether the tool's effect is keyed by the call (see
// keyed); the connector offers these with an idempotency_key argument.
func Keyed(name string) bool { return keyed[name] }
