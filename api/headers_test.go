package api_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryRouteEnforcesItsHeaderSchemas walks every operation of the API:
// each header parameter with an enum, a pattern or a length bound refuses
// a value outside it with 422 at the header, before the handler runs.
func TestEveryRouteEnforcesItsHeaderSchemas(t *testing.T) {
	w := newWorld(t)
	const someID = "00000000-0000-4000-8000-000000000000"
	checked := 0
	for path, item := range w.api.OpenAPI().Paths {
		for method, oper := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete} {
			if oper == nil {
				continue
			}
			url := path
			for _, p := range oper.Parameters {
				if p.In == "path" {
					url = strings.ReplaceAll(url, "{"+p.Name+"}", someID)
				}
			}
			for _, p := range oper.Parameters {
				if p.In != "header" || p.Schema == nil {
					continue
				}
				var bad string
				switch {
				case len(p.Schema.Enum) > 0:
					bad = "not-one-of-them"
				case p.Schema.Pattern != "":
					re := regexp.MustCompile(p.Schema.Pattern)
					for _, c := range []string{"a b", "~ ~", "x", "0", "AAAA"} {
						if !re.MatchString(c) {
							bad = c
							break
						}
					}
				case p.Schema.MaxLength != nil:
					bad = strings.Repeat("a", *p.Schema.MaxLength+1)
				default:
					continue
				}
				require.NotEmpty(t, bad, "%s %s %s: no value outside %q", method, path, p.Name, p.Schema.Pattern)
				checked++
				rec := w.doWith(method, url, userA, "", http.Header{http.CanonicalHeaderKey(p.Name): {bad}})
				require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s %s with %s: %q: %s", method, path, p.Name, bad, rec.Body.String())
				d := detail(t, rec.Body.Bytes())
				assert.Equal(t, []any{"header", p.Name}, d["loc"], "%s %s", method, path)
			}
		}
	}
	assert.Positive(t, checked, "the API declares headers with schemas")
}
