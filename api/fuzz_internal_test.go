package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"holdco/service"
)

type fuzzInput struct {
	ID   string `path:"id" format:"uuid"`
	Q    string `query:"q"`
	Body struct {
		Name  string            `json:"name" maxLength:"200"`
		Idea  string            `json:"idea,omitempty" multiline:"true"`
		Ref   string            `json:"ref,omitempty" format:"uuid"`
		Count int               `json:"count,omitempty" maximum:"1000"`
		Tags  []string          `json:"tags,omitempty"`
		Meta  map[string]string `json:"meta,omitempty"`
	}
}

// FuzzInputCheck sends arbitrary path, query and JSON bodies through the
// edge check (checkInputs) of a real router to a route with single-line,
// multi-line, UUID, integer, list and map fields. The answer is never a
// 5xx; what reaches the handler is valid UTF-8 with no NUL, no control
// character in single-line values (tab and line breaks only in the
// multi-line one), UUIDs in canonical form, no U+FFFD the client did not
// send, and the two copies of the text rule (the edge's and the use
// cases' service.CheckText) agree on every string.
func FuzzInputCheck(f *testing.F) {
	for _, b := range []string{
		`{"name":"Ada"}`, `{"name":"A\u0000"}`, `{"name":"x","idea":"a\nb\tc"}`, `{"name":"x","idea":"\u0007"}`,
		`{"name":"\ud800"}`, "{\"name\":\"\xff\"}", `{"name":"x","ref":"{6BA7B810-9DAD-11D1-80B4-00C04FD430C8}"}`,
		`{"name":"x","count":1e3}`, `{"name":"x","count":1.5}`, `{"name":"x","count":1e400}`, `{"name":"x","tags":["a","\u0085"]}`,
		`{"name":"x","meta":{"\u0001":"v"}}`, `{"NAME":"\u0000"}`, `null`, `[]`, `{"name":"x"} {"name":"y"}`, `{"name":"\ufffd"}`,
	} {
		f.Add("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "q", []byte(b))
	}
	f.Add("urn:uuid:6BA7B8109DAD11D180B400C04FD430C8", "a%00b", []byte(`{"name":"x"}`))
	f.Add("not-a-uuid", "\u0085", []byte(`{}`))
	r := New(Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var got *fuzzInput
	huma.Register(r.API, huma.Operation{OperationID: "fuzz-gadget", Method: http.MethodPost, Path: "/fuzz/{id}"},
		func(_ context.Context, in *fuzzInput) (*struct{}, error) { got = in; return nil, nil })
	f.Fuzz(func(t *testing.T, id, q string, body []byte) {
		for _, s := range []string{id, q, string(body)} {
			for _, rule := range []textRule{ruleSingleLine, ruleMultiLine} {
				typ, _ := textFailure(s, rule)
				if (typ == "") != (service.CheckText(s, rule == ruleMultiLine) == nil) {
					t.Fatalf("the edge (%q) and CheckText disagree on %q (multi-line %v)", typ, s, rule == ruleMultiLine)
				}
			}
		}
		target := "/fuzz/" + url.PathEscape(id) + "?q=" + url.QueryEscape(q)
		req := httptest.NewRequest(http.MethodPost, "http://holdco.test/", bytes.NewReader(body))
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		req.URL, req.RequestURI = u, target
		req.Header.Set("Content-Type", "application/json")
		got = nil
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%d for id %q q %q body %q: %s", rec.Code, id, q, body, rec.Body.String())
		}
		if got == nil {
			return
		}
		if rec.Code >= 300 {
			t.Fatalf("handler ran, answer %d", rec.Code)
		}
		sentFFFD := bytes.Contains(body, []byte("\ufffd")) || bytes.Contains(bytes.ToLower(body), []byte(`\ufffd`))
		check := func(what, s string, multiline bool) {
			if service.CheckText(s, multiline) != nil {
				t.Fatalf("%s %q reached the handler", what, s)
			}
			if !sentFFFD && strings.ContainsRune(s, utf8.RuneError) {
				t.Fatalf("%s %q holds U+FFFD the client did not send (body %q)", what, s, body)
			}
		}
		check("id", got.ID, false)
		check("q", got.Q, false)
		check("name", got.Body.Name, false)
		check("idea", got.Body.Idea, true)
		check("ref", got.Body.Ref, false)
		for _, s := range got.Body.Tags {
			check("tag", s, false)
		}
		for k, v := range got.Body.Meta {
			check("meta key", k, false)
			check("meta value", v, false)
		}
		for what, v := range map[string]string{"id": got.ID, "ref": got.Body.Ref} {
			if v == "" && what == "ref" {
				continue
			}
			if c, ok := canonicalUUID(v); !ok || c != v {
				t.Fatalf("%s %q is not a canonical UUID", what, v)
			}
		}
		if got.Body.Count > 1000 {
			t.Fatalf("count %d", got.Body.Count)
		}
	})
}
