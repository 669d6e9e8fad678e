package api_test

import (
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/api"
)

// TestDocsAreServedFromTheBinary: /docs loads Stoplight Elements from
// holdco's own origin (nothing from a CDN, so it works offline), and the
// embedded files are @stoplight/elements's published build of the pinned
// version (the registry's SHA-384 integrity of 9.0.15).
func TestDocsAreServedFromTheBinary(t *testing.T) {
	r := api.New(api.Deps{})
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docs", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	page := rec.Body.String()
	assert.NotRegexp(t, `(?i)(src|href)="(https?:)?//`, page, "no asset from another origin")
	assert.Contains(t, page, "/openapi.yaml")
	csp := rec.Header().Get("Content-Security-Policy")
	assert.Contains(t, csp, "script-src 'self'")
	assert.NotContains(t, csp, "unpkg")

	want := map[string]string{
		"web-components.min.js": "sha384-xjOcq9PZ/k+pGtPS/xcsCRXGjKKfTlIa4H1IYEnC+97jNa6sAMWTNrV6hY08W3GL",
		"styles.min.css":        "sha384-iVQBHadsD+eV0M5+ubRCEVXrXEBj+BqcuwjUwPoVJc0Pb1fmrhYSAhL+BFProHdV",
	}
	refs := regexp.MustCompile(`(?:src|href)="(/docs/assets/[^"]+)"`).FindAllStringSubmatch(page, -1)
	require.Len(t, refs, 2)
	for _, ref := range refs {
		path := ref[1]
		name := regexp.MustCompile(`[^/]+$`).FindString(path)
		// Plain, for a client that takes no gzip.
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusOK, rec.Code, path)
		assert.Empty(t, rec.Header().Get("Content-Encoding"))
		sum := sha512.Sum384(rec.Body.Bytes())
		assert.Equal(t, want[name], "sha384-"+base64.StdEncoding.EncodeToString(sum[:]), name)
		assert.Contains(t, rec.Header().Get("Cache-Control"), "immutable")

		// Gzipped, as browsers ask.
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br")
		rec = httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
		zr, err := gzip.NewReader(rec.Body)
		require.NoError(t, err)
		plain, err := io.ReadAll(zr)
		require.NoError(t, err)
		sum = sha512.Sum384(plain)
		assert.Equal(t, want[name], "sha384-"+base64.StdEncoding.EncodeToString(sum[:]), name)
	}
	rec = httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docs/assets/elements-"+api.ElementsVersion+"/other.js", nil))
	assert.Equal(t, http.StatusNotFound, rec.Code)
}
