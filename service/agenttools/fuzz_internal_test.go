package agenttools

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"holdco/models"
)

// FuzzToolArguments sends arbitrary arguments to every tool of the agents'
// catalog (what the model and the connector send). The check answers
// invalid_argument or passes; what passes is one JSON object that the
// tool's published input schema accepts as a whole, holds no NUL or
// control character in any string or key, and decodes into the tool's
// typed input (the services are absent here: a tool body that runs is
// stopped by their absence, which is what tells the decode passed).
func FuzzToolArguments(f *testing.F) {
	c := New(Services{})
	names := make([]string, 0, len(c.tools))
	for n := range c.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	schemas := map[string]*jsonschema.Resolved{}
	for _, n := range names {
		var s jsonschema.Schema
		if err := json.Unmarshal(c.tools[n].spec.InputSchema, &s); err != nil {
			f.Fatal(err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			f.Fatal(err)
		}
		schemas[n] = r
	}
	for i, a := range []string{
		`{"sql":"SELECT 1","mode":"read_only"}`, `{"title":"t","description":"d\nx"}`, `{"limit":1e3}`, `{"limit":1.5}`,
		`{"limit":1e400}`, `{"name":"\u0000"}`, `{"\u0007":1}`, `null`, ``, `[]`, `{"a":1}{"b":2}`, `{"path":"a/b","content_base64":"AAAA"}`,
		`{"to":"jane@example.com","subject":"s","text":"t"}`, `{"question":"why?"}`, `{"days":-1}`, `{"query":"x","count":9007199254740993}`,
	} {
		f.Add(uint(i), []byte(a))
	}
	f.Fuzz(func(t *testing.T, which uint, raw []byte) {
		name := names[which%uint(len(names))]
		tl := c.tools[name]
		args, err := tl.check(raw)
		if err != nil {
			if !models.IsCode(err, models.CodeInvalidArgument) {
				t.Fatalf("%s: %v", name, err)
			}
			return
		}
		var v any
		if err := json.Unmarshal(args, &v); err != nil {
			t.Fatalf("%s: passed %q, not JSON: %v", name, args, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: passed %q, not an object", name, args)
		}
		if err := schemas[name].Validate(obj); err != nil {
			t.Fatalf("%s: passed %q, which its schema refuses: %v", name, args, err)
		}
		if bad := controlIn(obj); bad != "" {
			t.Fatalf("%s: passed %q holding %s", name, args, bad)
		}
		if tl.control {
			return
		}
		if err := callWithoutServices(tl, args); err != nil && models.IsCode(err, models.CodeInvalidArgument) {
			var de *models.Error
			if errors.As(err, &de) && de.Detail == "The arguments do not match the tool's input schema." {
				t.Fatalf("%s: %q passes the schema but not the typed input", name, args)
			}
		}
	})
}

// callWithoutServices runs the tool's decode and body; the body stops at
// the first missing service (a nil dereference, recovered).
func callWithoutServices(tl *tool, args json.RawMessage) (err error) {
	defer func() {
		if recover() != nil {
			err = nil
		}
	}()
	_, err = tl.call(context.Background(), "00000000-0000-0000-0000-000000000000", args)
	return err
}
