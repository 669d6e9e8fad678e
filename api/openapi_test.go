package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenAPIDocument checks the served document is OpenAPI 3.1 with the
// interface version, that every $ref resolves, and that every documented 422
// is an HTTPValidationError.
func TestOpenAPIDocument(t *testing.T) {
	r := newTestRouter(t, nil)
	rec, doc := do(t, r, http.MethodGet, "/openapi.json", "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "3.1.0", doc["openapi"])
	assert.Equal(t, "0.1.0", doc["info"].(map[string]any)["version"])
	paths := doc["paths"].(map[string]any)
	require.Contains(t, paths, "/health")

	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	require.Contains(t, schemas, "HTTPValidationError")
	require.Contains(t, schemas, "ErrorBody")
	var refs []string
	collectRefs(doc, &refs)
	require.NotEmpty(t, refs)
	for _, ref := range refs {
		name, ok := strings.CutPrefix(ref, "#/components/schemas/")
		require.True(t, ok, "unexpected ref %s", ref)
		assert.Contains(t, schemas, name, "dangling $ref %s", ref)
	}

	put := paths["/widgets/{id}"].(map[string]any)["put"].(map[string]any)
	resp422 := put["responses"].(map[string]any)["422"].(map[string]any)
	raw, _ := json.Marshal(resp422)
	assert.Contains(t, string(raw), "#/components/schemas/HTTPValidationError")

	docs := httptest.NewRecorder()
	r.ServeHTTP(docs, httptest.NewRequest(http.MethodGet, "/docs", nil))
	assert.Equal(t, http.StatusOK, docs.Code)
	assert.Contains(t, docs.Body.String(), "/openapi")
}

func collectRefs(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && k == "$ref" {
				*out = append(*out, s)
			}
			collectRefs(val, out)
		}
	case []any:
		for _, val := range x {
			collectRefs(val, out)
		}
	}
}
