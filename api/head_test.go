package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHEADWhereverGETIsServed: every GET operation of the API, and the
// pages beside it, answer HEAD with GET's status and headers and no body
// (RFC 9110 §9.3.2); a route without GET still refuses HEAD with 405.
func TestHEADWhereverGETIsServed(t *testing.T) {
	w := newWorld(t)
	srv := httptest.NewServer(w.handler)
	t.Cleanup(srv.Close)
	param := regexp.MustCompile(`\{[^}]+\}`)
	send := func(method, path string) (*http.Response, string) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+w.creds[userA])
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	paths := []string{"/docs", "/", "/auth/cli/device"}
	for path, item := range w.api.OpenAPI().Paths {
		if item.Get == nil || strings.HasPrefix(path, "/auth/logout") {
			continue
		}
		paths = append(paths, param.ReplaceAllStringFunc(path, func(p string) string {
			if strings.Contains(p, "company_id") {
				return w.adaCo
			}
			if strings.Contains(p, "conglomerate_id") {
				return w.adaCong
			}
			return "00000000-0000-4000-8000-000000000000"
		}))
	}
	require.Greater(t, len(paths), 40)
	for _, path := range paths {
		get, _ := send(http.MethodGet, path)
		head, body := send(http.MethodHead, path)
		assert.NotEqual(t, http.StatusMethodNotAllowed, head.StatusCode, path)
		assert.Equal(t, get.StatusCode, head.StatusCode, path)
		assert.Equal(t, get.Header.Get("Content-Type"), head.Header.Get("Content-Type"), path)
		assert.Empty(t, body, path)
	}

	resp, body := send(http.MethodHead, "/auth/session")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "POST only")
	assert.Empty(t, body)
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/auth/session", nil))
	assert.Contains(t, rec.Body.String(), "Method HEAD is not allowed")
}
