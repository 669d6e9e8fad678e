package api

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
)

// TestRoutersLogToTheirOwnLogger: huma's error hooks are process-wide, but
// an unexpected error is logged by the router that served the request, even
// when two routers with different loggers serve at once.
func TestRoutersLogToTheirOwnLogger(t *testing.T) {
	var logsA, logsB bytes.Buffer
	a, b := newTestRouter(t, &logsA), newTestRouter(t, &logsB)
	// A router built later leaves the hooks alone: a stand-in (behaving
	// the same) is still in place after it.
	hooked := huma.NewError
	standIn := func(status int, msg string, errs ...error) huma.StatusError { return hooked(status, msg, errs...) }
	huma.NewError = standIn
	_ = newTestRouter(t, nil)
	assert.Equal(t, funcAddr(standIn), funcAddr(huma.NewError), "hooks are installed once, not per router")
	huma.NewError = hooked

	boom := func(r *Router, n int, wg *sync.WaitGroup) {
		defer wg.Done()
		for range n {
			req := httptest.NewRequest(http.MethodPut, "/widgets/7f1d3c1e-8a7b-4c52-9d5e-2b1f0c3a4d5e", strings.NewReader(`{"name":"boom","count":1}`))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, req)
			assert.Equal(t, http.StatusInternalServerError, rec.Code)
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go boom(a, 5, &wg)
	go boom(b, 3, &wg)
	wg.Wait()
	assert.Equal(t, 5, strings.Count(logsA.String(), "database exploded"), logsA.String())
	assert.Equal(t, 3, strings.Count(logsB.String(), "database exploded"), logsB.String())
}

// funcAddr identifies a function value (functions are not comparable).
func funcAddr(f func(int, string, ...error) huma.StatusError) string { return fmt.Sprintf("%p", f) }
