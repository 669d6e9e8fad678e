package api_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endlessBody is a JSON body that never ends before max bytes: the start
// of an object whose string value goes on. It counts what was read.
type endlessBody struct {
	read, max int64
	prefix    string
}

func (b *endlessBody) Read(p []byte) (int, error) {
	if b.read >= b.max {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > b.max-b.read {
		n = b.max - b.read
	}
	for i := int64(0); i < n; i++ {
		if at := b.read + i; at < int64(len(b.prefix)) {
			p[i] = b.prefix[at]
		} else {
			p[i] = 'a'
		}
	}
	atomic.AddInt64(&b.read, n)
	return int(n), nil
}

// oversized is larger than any route's limit (the largest is a file
// upload: HOLDCO_BLOB_MAX_FILE_BYTES, 25 MiB).
const oversized = 64 << 20

// TestEveryRouteBoundsItsBody walks every route of the router (each
// OpenAPI operation and each route of the gin engine, from the
// authorization matrix) as ada with a body larger than any limit, sent
// without a length. No route answers 5xx or reads more than its limit
// (a route that read on would read the whole body); every operation that
// takes a body and would serve ada answers 413 too_large.
func TestEveryRouteBoundsItsBody(t *testing.T) {
	lines, err := readMatrix(matrixFile)
	require.NoError(t, err)
	w := newMatrixWorld(t)
	routes := servedRoutes(t, w.router)
	ops := map[string]*huma.Operation{}
	for _, item := range w.router.API.OpenAPI().Paths {
		for _, op := range []*huma.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op != nil {
				ops[op.OperationID] = op
			}
		}
	}
	userCol := slices.Index(credentialNames, userA)
	// Rows that end credentials run last, so the others meet ada signed in.
	var rows, fresh []*matrixRow
	for _, l := range lines {
		if l.row != nil && l.row.fresh {
			fresh = append(fresh, l.row)
		} else if l.row != nil {
			rows = append(rows, l.row)
		}
	}
	walked := 0
	for _, r := range append(rows, fresh...) {
		var rt *route
		for i := range routes {
			if routes[i].key == r.op && routes[i].path == r.templatePath() {
				rt = &routes[i]
			}
		}
		if rt == nil {
			continue // TestAuthorizationMatrix reports it
		}
		method := rt.method
		if method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions {
			method = http.MethodPost // a GET route is asked with POST's body too: 405 or it ignores the body
		}
		path, err := r.concretePath(w.fixture)
		require.NoError(t, err)
		body := &endlessBody{max: oversized, prefix: `{"name":"`}
		req := httptest.NewRequest(method, path, body)
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+w.creds[userA])
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, req)
		walked++
		what := fmt.Sprintf("%s %s (%s)", method, path, r.op)
		assert.Less(t, rec.Code, 500, "%s: %s", what, rec.Body.String())
		limit := int64(oversized / 2)
		if op := ops[r.op]; op != nil && op.Method == method {
			limit = 2*max(op.MaxBodyBytes, 1<<20) + 64<<10
			if op.RequestBody != nil && userCol < len(r.want) && r.want[userCol] < 400 {
				assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, "%s: %s", what, rec.Body.String())
				assert.Contains(t, rec.Body.String(), "too_large", what)
			}
		}
		assert.LessOrEqual(t, atomic.LoadInt64(&body.read), limit, "%s read %d bytes of the body", what, body.read)
	}
	require.Greater(t, walked, 100, "the walk reached the routes")
}

// TestEveryHTMLPageCarriesSecurityHeaders asks every route of the router
// with GET, anonymous and as ada; every HTML answer (holdco's pages, the
// docs, the action and domain pages, their errors) forbids framing
// (frame-ancestors and X-Frame-Options), sniffing, and sends a referrer
// policy under which the browser still names holdco's origin on the
// pages' own form posts (same-origin; no-referrer makes it send Origin:
// null, which the device approval refuses).
func TestEveryHTMLPageCarriesSecurityHeaders(t *testing.T) {
	lines, err := readMatrix(matrixFile)
	require.NoError(t, err)
	w := newMatrixWorld(t)
	pages := 0
	for _, l := range lines {
		r := l.row
		if r == nil || r.fresh || r.body != "" {
			continue
		}
		path, err := r.concretePath(w.fixture)
		require.NoError(t, err)
		for _, cred := range []string{anon, userA} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Header.Set("Accept", "text/html")
			if b := w.creds[cred]; b != "" {
				req.Header.Set("Authorization", "Bearer "+b)
			}
			if sso := w.sso[cred]; sso != "" {
				req.AddCookie(&http.Cookie{Name: "holdco_sso", Value: sso})
			}
			rec := httptest.NewRecorder()
			w.handler.ServeHTTP(rec, req)
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || rec.Code/100 == 3 {
				continue // not a page (a redirect's body is never shown)
			}
			pages++
			h := rec.Header()
			what := fmt.Sprintf("GET %s as %s (%d)", path, cred, rec.Code)
			csp := h.Get("Content-Security-Policy")
			assert.Contains(t, csp, "frame-ancestors 'none'", what)
			assert.Contains(t, csp, "default-src 'none'", what)
			assert.Equal(t, "DENY", h.Get("X-Frame-Options"), what)
			assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), what)
			assert.Equal(t, "same-origin", h.Get("Referrer-Policy"), what)
		}
	}
	require.Greater(t, pages, 3, "the walk met holdco's pages")
}
