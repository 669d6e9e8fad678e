package api_test

import (
	"mime"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLoadersAreDocumentedAsJavaScript: the OpenAPI document says what the
// analytics loaders serve — JavaScript, never application/json — and what
// they serve is what it says.
func TestLoadersAreDocumentedAsJavaScript(t *testing.T) {
	w := newWorld(t)
	doc := w.api.OpenAPI()
	for _, c := range []struct{ path, url string }{
		{"/analytics/v1.js", "/analytics/v1.js?c=hca_unknownkey00000000000"},
		{"/beacon/snippet.js", "/beacon/snippet.js?s=no-such-company"},
	} {
		item := doc.Paths[c.path]
		require.NotNil(t, item, c.path)
		require.NotNil(t, item.Get, c.path)
		ok := item.Get.Responses["200"]
		require.NotNil(t, ok, c.path)
		var documented []string
		for ct := range ok.Content {
			documented = append(documented, ct)
		}
		assert.Equal(t, []string{"text/javascript"}, documented, c.path)

		rec := w.do(http.MethodGet, c.url, anon, "")
		require.Equal(t, http.StatusOK, rec.Code, c.path)
		served, _, err := mime.ParseMediaType(rec.Header().Get("Content-Type"))
		require.NoError(t, err)
		assert.True(t, slices.Contains(documented, served), "%s serves %s, documents %v", c.path, served, documented)
	}
}
