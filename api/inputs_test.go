package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// detail decodes a 422 body and returns its first failure.
func detail(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var v struct {
		Detail []map[string]any `json:"detail"`
	}
	require.NoError(t, json.Unmarshal(body, &v), "body: %s", body)
	require.NotEmpty(t, v.Detail, "body: %s", body)
	return v.Detail[0]
}

func (w *world) companyNames(cong, cred string) []string {
	var list map[string]any
	w.call("GET", "/conglomerates/"+cong+"/companies", cred, "", 200, &list)
	var names []string
	for _, c := range list["companies"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	sort.Strings(names)
	return names
}

// TestNULInStringInputsIsRefusedAndNothingStored sends a NUL in each string
// input of the routes that used to store it (SQLite) or fail with 500
// (Postgres).
func TestNULInStringInputsIsRefusedAndNothingStored(t *testing.T) {
	w := newWorld(t)
	co := "/companies/" + w.adaCo
	cong := "/conglomerates/" + w.adaCong
	cases := []struct {
		method, path, body string
		loc                []any
	}{
		{"POST", cong + "/companies", `{"name":"Nul\u0000Co"}`, []any{"body", "name"}},
		{"POST", cong + "/companies", `{"name":"Fine","idea":"an\u0000idea"}`, []any{"body", "idea"}},
		{"POST", cong + "/companies", `{"name":"Fine","mission":"\u0000"}`, []any{"body", "mission"}},
		{"POST", cong + "/companies", `{"name":"Fine","handle":"fine\u0000"}`, []any{"body", "handle"}},
		{"PUT", co, `{"name":"Ada\u0000Shop"}`, []any{"body", "name"}},
		{"PUT", co, `{"idea":"x\u0000"}`, []any{"body", "idea"}},
		{"PUT", co, `{"mission":"x\u0000"}`, []any{"body", "mission"}},
		{"PATCH", cong, `{"name":"Ada\u0000Holdings"}`, []any{"body", "name"}},
		{"POST", "/auth/tokens", `{"name":"ci\u0000"}`, []any{"body", "name"}},
		{"DELETE", co, `{"reason":"\u0000"}`, []any{"body", "reason"}},
		// encoding/json fills fields case-insensitively: "NAME" is name.
		{"POST", cong + "/companies", `{"NAME":"Nul\u0000Co"}`, []any{"body", "NAME"}},
		{"POST", cong + "/companies", `{"name":"Fine","x\u0000":1}`, []any{"body", "x\x00"}},
	}
	var tokensBefore []any
	w.call("GET", "/auth/tokens", userA, "", 200, &tokensBefore)
	var congBefore map[string]any
	w.call("GET", cong, userA, "", 200, &congBefore)
	for _, c := range cases {
		rec := w.do(c.method, c.path, userA, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s %s %s: %s", c.method, c.path, c.body, rec.Body.String())
		d := detail(t, rec.Body.Bytes())
		assert.Equal(t, c.loc, d["loc"], c.body)
		assert.Equal(t, "string_nul", d["type"], c.body)
		assert.Equal(t, "String should not contain NUL characters", d["msg"])
	}
	assert.Equal(t, []string{"Ada Shop"}, w.companyNames(w.adaCong, userA), "no company created or renamed")
	var got map[string]any
	w.call("GET", co, userA, "", 200, &got)
	assert.Equal(t, "", got["idea"])
	assert.Equal(t, "active", got["status"], "not archived")
	var congAfter map[string]any
	w.call("GET", cong, userA, "", 200, &congAfter)
	assert.Equal(t, congBefore["name"], congAfter["name"])
	var tokensAfter []any
	w.call("GET", "/auth/tokens", userA, "", 200, &tokensAfter)
	assert.Len(t, tokensAfter, len(tokensBefore))
}

// TestInvalidUnicodeInStringInputsIsRefusedAndNothingStored: raw bytes
// that are not UTF-8 (an encoded surrogate among them) and \u escapes of
// lone surrogates are string_unicode at the string, as README promises —
// not stored as U+FFFD — in values and keys, nested or not; a surrogate
// pair is a character like any other.
func TestInvalidUnicodeInStringInputsIsRefusedAndNothingStored(t *testing.T) {
	w := newWorld(t)
	co := "/companies/" + w.adaCo
	cong := "/conglomerates/" + w.adaCong
	cases := []struct {
		method, path, body string
		loc                []any
	}{
		{"POST", cong + "/companies", "{\"name\":\"Bad\xffCo\"}", []any{"body", "name"}},
		{"POST", cong + "/companies", "{\"name\":\"Bad\xed\xa0\x80Co\"}", []any{"body", "name"}}, // U+D800 encoded
		{"POST", cong + "/companies", `{"name":"Bad\ud800Co"}`, []any{"body", "name"}},
		{"POST", cong + "/companies", `{"name":"Bad\uDC00"}`, []any{"body", "name"}},
		{"POST", cong + "/companies", `{"name":"Bad\ud83d"}`, []any{"body", "name"}},
		{"POST", cong + "/companies", `{"name":"Bad\ud83d\u0041"}`, []any{"body", "name"}},
		{"POST", cong + "/companies", `{"name":"Fine","mission":"x\ud800"}`, []any{"body", "mission"}},
		{"PUT", co, `{"idea":"\udfff idea"}`, []any{"body", "idea"}},
		{"PATCH", cong, "{\"name\":\"Ada\xc3Holdings\"}", []any{"body", "name"}},
		{"POST", "/auth/tokens", `{"name":"ci\ud800"}`, []any{"body", "name"}},
		{"POST", cong + "/companies", `{"name":"Fine","x\ud800":1}`, []any{"body", "x\ufffd"}},
		{"POST", cong + "/companies", `{"name":"Fine","extra":{"list":[1,"ok",["\udc00"]]}}`, []any{"body", "extra", "list", 2.0, 0.0}},
	}
	var congBefore map[string]any
	w.call("GET", cong, userA, "", 200, &congBefore)
	for _, c := range cases {
		rec := w.do(c.method, c.path, userA, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s %s %q: %s", c.method, c.path, c.body, rec.Body.String())
		d := detail(t, rec.Body.Bytes())
		assert.Equal(t, c.loc, d["loc"], "%q", c.body)
		assert.Equal(t, "string_unicode", d["type"], "%q", c.body)
	}
	assert.Equal(t, []string{"Ada Shop"}, w.companyNames(w.adaCong, userA), "no company created or renamed")
	var got map[string]any
	w.call("GET", co, userA, "", 200, &got)
	assert.Equal(t, "", got["idea"])
	var congAfter map[string]any
	w.call("GET", cong, userA, "", 200, &congAfter)
	assert.Equal(t, congBefore["name"], congAfter["name"])

	// A surrogate pair, escaped or raw, and an escaped backslash before a
	// "u" are text.
	var created map[string]any
	w.call("POST", cong+"/companies", userA, `{"name":"Smile \ud83d\ude00 Co","idea":"a \\ud800 b"}`, 201, &created)
	assert.Equal(t, "Smile \U0001F600 Co", created["name"])
	assert.Equal(t, `a \ud800 b`, created["idea"])
	w.call("POST", cong+"/companies", userA, "{\"name\":\"Raw \U0001F600 Co\"}", 201, nil)
}

// TestNULInParametersIsRefused covers query and path parameters.
func TestNULInParametersIsRefused(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		method, path, cred string
		loc                []any
	}{
		{"GET", "/auth/login?redirect_url=%2F%00", anon, []any{"query", "redirect_url"}},
		{"GET", "/auth/login?ref=a%00b", anon, []any{"query", "ref"}},
		{"POST", "/admin/user-auth/" + w.adaCo + "/disable?reason=abuse%00report", admin, []any{"query", "reason"}},
		{"GET", "/companies/%00", userA, []any{"path", "company_id"}},
	}
	for _, c := range cases {
		rec := w.do(c.method, c.path, c.cred, "")
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s %s: %s", c.method, c.path, rec.Body.String())
		d := detail(t, rec.Body.Bytes())
		assert.Equal(t, c.loc, d["loc"], c.path)
		assert.Equal(t, "string_nul", d["type"], c.path)
	}
}

// TestControlCharactersRefusedInSingleLineFields: names and handles are one
// line; an idea may have line breaks and tabs but no other control
// character.
func TestControlCharactersRefusedInSingleLineFields(t *testing.T) {
	w := newWorld(t)
	cong := "/conglomerates/" + w.adaCong
	for _, body := range []string{
		`{"name":"Line\nbreak"}`, `{"name":"Tab\there"}`, `{"name":"Bell\u0007"}`,
		`{"name":"Del\u007f"}`, `{"name":"C1\u0085"}`, `{"name":"Esc\u001b[31m"}`,
	} {
		rec := w.do("POST", cong+"/companies", userA, body)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s: %s", body, rec.Body.String())
		d := detail(t, rec.Body.Bytes())
		assert.Equal(t, []any{"body", "name"}, d["loc"])
		assert.Equal(t, "string_control_character", d["type"])
	}
	rec := w.do("PATCH", cong, userA, `{"name":"Two\r\nLines"}`)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	rec = w.do("POST", "/auth/tokens", userA, `{"name":"ci\u0001"}`)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	rec = w.do("POST", cong+"/companies", userA, `{"name":"Bell","idea":"ring\u0007"}`)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	assert.Equal(t, []any{"body", "idea"}, detail(t, rec.Body.Bytes())["loc"])
	assert.Equal(t, []string{"Ada Shop"}, w.companyNames(w.adaCong, userA))

	var co map[string]any
	w.call("POST", cong+"/companies", userA, `{"name":"Multi Line","idea":"first\nsecond\r\n\tindented","mission":"a\nb"}`, 201, &co)
	assert.Equal(t, "first\nsecond\r\n\tindented", co["idea"])
	w.call("POST", cong+"/companies", userA, `{"name":"Ünïcode ✓ 会社"}`, 201, nil)
}

// TestEveryOperationRefusesNULInEachStringInput walks the OpenAPI document:
// for every operation, every string parameter and every string property of
// its JSON body in turn carries a NUL, and the answer is a 422 naming that
// input, never a server error.
func TestEveryOperationRefusesNULInEachStringInput(t *testing.T) {
	w := newWorld(t)
	oapi := w.api.OpenAPI()
	registry := oapi.Components.Schemas
	var checked int
	for path, item := range oapi.Paths {
		for method, op := range operations(item) {
			cred := userA
			if adminOnly, _ := op.Metadata["admin-only"].(bool); adminOnly {
				cred = admin
			}
			// A valid value for every path parameter; the NUL goes in one slot.
			fill := func(nulIn string) string {
				p := path
				for _, param := range op.Parameters {
					if param.In != "path" {
						continue
					}
					v := w.adaCo
					if param.Name == nulIn {
						v = "%00"
					}
					p = strings.ReplaceAll(p, "{"+param.Name+"}", v)
				}
				return p
			}
			send := func(target, body string, header http.Header, loc []any) {
				t.Helper()
				rec := w.doWith(method, target, cred, body, header)
				where := method + " " + target + " " + body
				require.Less(t, rec.Code, 500, "%s: %s", where, rec.Body.String())
				require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s: %s", where, rec.Body.String())
				d := detail(t, rec.Body.Bytes())
				want, _ := json.Marshal(loc) // array indexes decode as numbers
				got, _ := json.Marshal(d["loc"])
				assert.JSONEq(t, string(want), string(got), where)
				assert.Equal(t, "string_nul", d["type"], where)
				checked++
			}
			for _, param := range op.Parameters {
				if param.Schema == nil || param.Schema.Type != "string" {
					continue
				}
				switch param.In {
				case "path":
					send(fill(param.Name), "", nil, []any{"path", param.Name})
				case "query":
					send(fill("")+"?"+url.Values{param.Name: {"a\x00b"}}.Encode(), "", nil, []any{"query", param.Name})
				case "header":
					if param.Name == "Authorization" {
						continue // the bearer itself
					}
					send(fill(""), "", http.Header{param.Name: {"a\x00b"}}, []any{"header", param.Name})
				}
			}
			if op.RequestBody == nil || op.RequestBody.Content["application/json"] == nil {
				continue
			}
			for _, field := range stringPaths(registry, op.RequestBody.Content["application/json"].Schema, nil) {
				body := nest(field, "a\x00b")
				raw, err := json.Marshal(body)
				require.NoError(t, err)
				send(fill(""), string(raw), nil, append([]any{"body"}, field...))
			}
		}
	}
	t.Logf("%d inputs carried a NUL", checked)
	assert.Greater(t, checked, 30, "the walk reached the routes")
}

func operations(item *huma.PathItem) map[string]*huma.Operation {
	ops := map[string]*huma.Operation{}
	for method, op := range map[string]*huma.Operation{
		http.MethodGet: item.Get, http.MethodPost: item.Post, http.MethodPut: item.Put,
		http.MethodPatch: item.Patch, http.MethodDelete: item.Delete,
	} {
		if op != nil {
			ops[method] = op
		}
	}
	return ops
}

// stringPaths lists the paths of the string properties of a JSON schema;
// an array item is reached at index 0.
func stringPaths(registry huma.Registry, s *huma.Schema, prefix []any) [][]any {
	if s == nil {
		return nil
	}
	if s.Ref != "" {
		s = registry.SchemaFromRef(s.Ref)
	}
	var out [][]any
	switch {
	case s.Type == "string" && s.Format != "binary":
		out = append(out, prefix)
	case s.Type == "array":
		out = append(out, stringPaths(registry, s.Items, append(append([]any{}, prefix...), 0))...)
	case s.Type == "object":
		for name, p := range s.Properties {
			out = append(out, stringPaths(registry, p, append(append([]any{}, prefix...), name))...)
		}
	}
	return out
}

// nest builds the JSON value that holds v at path.
func nest(path []any, v any) any {
	if len(path) == 0 {
		return v
	}
	inner := nest(path[1:], v)
	if _, isIndex := path[0].(int); isIndex {
		return []any{inner}
	}
	return map[string]any{path[0].(string): inner}
}

// TestArchiveWithNullBody: the archive body is optional, and null is no body.
func TestArchiveWithNullBody(t *testing.T) {
	w := newWorld(t)
	w.call("DELETE", "/companies/"+w.adaCo, userA, `null`, 204, nil)
	w.call("GET", "/companies/"+w.adaCo, userA, "", 404, nil)
	w.call("DELETE", "/companies/"+w.adaCo, userA, " null\n", 204, nil)
	// A required body stays required.
	rec := w.do("POST", "/auth/tokens", userA, `null`)
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
}

// TestServiceRuleOnAParameterIsReportedWhereItWasSent: a field refused by a
// service rule (not by the schema) is located as the client sent it.
func TestServiceRuleOnAParameterIsReportedWhereItWasSent(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		method, path, cred string
		loc                []any
	}{
		{"GET", "/auth/login?redirect_url=" + url.QueryEscape("https://elsewhere.example/"), anon, []any{"query", "redirect_url"}},
		{"POST", "/admin/user-auth/" + w.adaCo + "/disable?reason=" + url.QueryEscape("      "), admin, []any{"query", "reason"}},
	}
	for _, c := range cases {
		rec := w.do(c.method, c.path, c.cred, "")
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s %s: %s", c.method, c.path, rec.Body.String())
		d := detail(t, rec.Body.Bytes())
		assert.Equal(t, c.loc, d["loc"], c.path)
		assert.Equal(t, "value_error", d["type"])
	}
	// A body field keeps its body location.
	rec := w.do("POST", "/conglomerates/"+w.adaCong+"/companies", userA, `{"name":"   "}`)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	assert.Equal(t, []any{"body", "name"}, detail(t, rec.Body.Bytes())["loc"])
}

// TestIntegerFieldsTakeIntegralNumbersInAnySpelling: 1e1 is 10 (as in
// Pydantic's lax mode); a fraction or a number too large for the field is
// a 422 at the field, in words that name no Go type.
func TestIntegerFieldsTakeIntegralNumbersInAnySpelling(t *testing.T) {
	w := newWorld(t)
	var tok map[string]any
	w.call("POST", "/auth/tokens", userA, `{"name":"exp","expires_in_days":1e1}`, 201, &tok)
	require.NotNil(t, tok["expires_at"], "body: %v", tok)
	w.call("POST", "/auth/tokens", userA, `{"name":"dec","expires_in_days":30.0}`, 201, nil)
	w.call("PATCH", "/conglomerates/"+w.adaCong, userA, `{"daily_credit_cap":2.5E3}`, 200, &tok)
	assert.EqualValues(t, 2500, tok["daily_credit_cap"])

	cases := []struct {
		body, typ string
	}{
		{`{"name":"x","expires_in_days":1.5}`, "int_from_float"},
		{`{"name":"x","expires_in_days":1e30}`, "int_parsing_size"},
		{`{"name":"x","expires_in_days":99999999999999999999}`, "int_parsing_size"},
	}
	for _, c := range cases {
		rec := w.do("POST", "/auth/tokens", userA, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s: %s", c.body, rec.Body.String())
		d := detail(t, rec.Body.Bytes())
		assert.Equal(t, []any{"body", "expires_in_days"}, d["loc"], c.body)
		assert.Equal(t, c.typ, d["type"], c.body)
		assert.NotContains(t, d["msg"], "Go ", c.body)
		assert.NotContains(t, rec.Body.String(), "unmarshal", c.body)
	}
}

// TestOversizedIntegersNameTheFieldsRange: a number beyond what the field
// can hold is told the field's range (its minimum and maximum), not the
// range of the Go type that holds it.
func TestOversizedIntegersNameTheFieldsRange(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		method, path, body string
		loc                []any
		msg                string
	}{
		{"POST", "/auth/tokens", `{"name":"x","expires_in_days":1e30}`, []any{"body", "expires_in_days"}, "Input should be an integer from 1 to 365"},
		{"POST", "/auth/tokens", `{"name":"x","expires_in_days":-99999999999999999999}`, []any{"body", "expires_in_days"}, "Input should be an integer from 1 to 365"},
		{"PATCH", "/conglomerates/" + w.adaCong, `{"daily_credit_cap":9223372036854775808}`, []any{"body", "daily_credit_cap"}, "Input should be an integer from 0 to 1000000000"},
	}
	for _, c := range cases {
		rec := w.do(c.method, c.path, userA, c.body)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s: %s", c.body, rec.Body.String())
		d := detail(t, rec.Body.Bytes())
		assert.Equal(t, c.loc, d["loc"], c.body)
		assert.Equal(t, "int_parsing_size", d["type"], c.body)
		assert.Equal(t, c.msg, d["msg"], c.body)
		assert.NotContains(t, rec.Body.String(), "9223372036854775807", c.body)
	}
}

// TestNonCanonicalUUIDsAreCanonicalised: an id spelled upper-case, without
// dashes, in braces or as a URN is the same id — so another tenant's
// company is a 403, not a 404.
func TestNonCanonicalUUIDsAreCanonicalised(t *testing.T) {
	w := newWorld(t)
	spellings := func(id string) []string {
		return []string{strings.ToUpper(id), strings.ReplaceAll(id, "-", ""), "%7B" + id + "%7D", "urn:uuid:" + id, "URN:UUID:" + strings.ToUpper(id)}
	}
	for _, s := range spellings(w.adaCo) {
		var co map[string]any
		w.call("GET", "/companies/"+s, userA, "", 200, &co)
		assert.Equal(t, w.adaCo, co["id"], s)
	}
	for _, s := range spellings(w.bobCo) {
		w.call("GET", "/companies/"+s, userA, "", 403, nil)
		w.call("PUT", "/companies/"+s, userA, `{"name":"Mine"}`, 403, nil)
		w.call("DELETE", "/companies/"+s, userA, "", 403, nil)
	}
	for _, s := range spellings(w.adaCong) {
		w.call("GET", "/conglomerates/"+s, userB, "", 403, nil)
		w.call("GET", "/conglomerates/"+s, userA, "", 200, nil)
	}
	rec := w.do("GET", "/companies/"+strings.ToUpper(w.adaCo)+"x", userA, "")
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	d := detail(t, rec.Body.Bytes())
	assert.Equal(t, []any{"path", "company_id"}, d["loc"])
	assert.Equal(t, "uuid_parsing", d["type"])
}

// TestInputCheckHoldsForEveryContentTypeHumaReads: huma reads the body of a
// JSON operation as JSON whatever suffix the Content-Type carries ("json",
// "x+json", an empty suffix), so the edge check may not trust the header.
func TestInputCheckHoldsForEveryContentTypeHumaReads(t *testing.T) {
	w := newWorld(t)
	path := "/conglomerates/" + w.adaCong + "/companies"
	for _, ct := range []string{"application/json", "json", "application/json+", "x+application/json", "text/plain+", "text/plain", ""} {
		rec := w.doWith("POST", path, userA, `{"name":"Nul\u0000Co"}`, http.Header{"Content-Type": {ct}})
		assert.NotEqual(t, http.StatusCreated, rec.Code, "Content-Type %q: %s", ct, rec.Body.String())
		assert.Less(t, rec.Code, 500, "Content-Type %q: %s", ct, rec.Body.String())
	}
	var list map[string]any
	w.call("GET", path, userA, "", 200, &list)
	for _, c := range list["companies"].([]any) {
		assert.NotContains(t, c.(map[string]any)["name"], "\x00")
	}
}

// TestHugeNumberLiteralsAreRefusedWithoutExpandingThem: a 20-byte literal
// such as 1e600000000 must not become a 2-billion-bit integer.
func TestHugeNumberLiteralsAreRefusedWithoutExpandingThem(t *testing.T) {
	w := newWorld(t)
	cases := []struct{ lit, typ string }{
		{"1e600000000", "int_parsing_size"},
		{"-1e600000000", "int_parsing_size"},
		{"1e99999999999999999999", "int_parsing_size"},
		{"1e-600000000", "int_from_float"},
		{"0.5e-99999999999999999999", "int_from_float"},
		{"1" + strings.Repeat("0", 70), "int_parsing_size"},
	}
	for _, c := range cases {
		rec := w.do("POST", "/auth/tokens", userA, `{"name":"x","expires_in_days":`+c.lit+`}`)
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s: %s", c.lit, rec.Body.String())
		assert.Equal(t, c.typ, detail(t, rec.Body.Bytes())["type"], c.lit)
	}
	// Integral spellings with a leading-zero mantissa or a zero are still
	// numbers: 0.00003e6 is 30, 0e999999999 is 0.
	w.call("POST", "/auth/tokens", userA, `{"name":"ok","expires_in_days":0.00003e6}`, 201, nil)
	w.call("PATCH", "/conglomerates/"+w.adaCong, userA, `{"daily_credit_cap":0e999999999}`, 200, nil)
}
