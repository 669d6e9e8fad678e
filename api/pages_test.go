package api_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/service/identity"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (w *world) page(method, path, sso string, form url.Values) *httptest.ResponseRecorder {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	req.AddCookie(&http.Cookie{Name: "holdco_sso", Value: sso})
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	return rec
}

// TestDevicePageDatabaseFailureIs500: with the database gone, the approval
// page answers 500 and logs the failure (not 404 "no such code" or 409
// "already answered"); the user's code is not in the log.
func TestDevicePageDatabaseFailureIs500(t *testing.T) {
	w := newWorld(t)
	sso := w.sso[userA]
	start, err := w.svc.Identity.StartDevice(context.Background(), "192.0.2.1")
	require.NoError(t, err)
	rec := w.page(http.MethodGet, "/auth/cli/device?user_code="+start.UserCode, sso, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	principal, err := w.svc.Identity.SessionFromCookie(context.Background(), sso)
	require.NoError(t, err)
	csrf := w.svc.Identity.DeviceCSRFToken(principal, start.UserCode)

	// A refusal of the service keeps its own status.
	rec = w.page(http.MethodGet, "/auth/cli/device?user_code=BCDF-GHJK", sso, nil)
	assert.Equal(t, http.StatusNotFound, rec.Code)

	require.NoError(t, w.store.Close())
	rec = w.page(http.MethodGet, "/auth/cli/device?user_code="+start.UserCode, sso, nil)
	assert.Equal(t, http.StatusInternalServerError, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "Something went wrong")
	assert.NotContains(t, rec.Body.String(), "closed")

	rec = w.page(http.MethodPost, "/auth/cli/device", sso, url.Values{"user_code": {start.UserCode}, "csrf": {csrf}, "decision": {"approve"}})
	assert.Equal(t, http.StatusInternalServerError, rec.Code, rec.Body.String())

	logs := w.logs.String()
	assert.Contains(t, logs, "page failed")
	assert.NotContains(t, logs, start.UserCode)
}

// TestSSOCookieIsNoBearer: the cookie a browser sign-in sets opens
// holdco's pages but is refused as a REST bearer (401), and a REST bearer
// does not open the pages.
func TestSSOCookieIsNoBearer(t *testing.T) {
	w := newWorld(t)
	req := httptest.NewRequest(http.MethodGet, "/auth/me", nil)
	req.Header.Set("Authorization", "Bearer "+w.sso[userA])
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnauthorized, rec.Code, rec.Body.String())

	rec = w.page(http.MethodGet, "/auth/cli/device", w.sso[userA], nil)
	assert.Equal(t, http.StatusOK, rec.Code, "the cookie opens the approval page")
	rec = w.page(http.MethodGet, "/auth/cli/device", w.creds[userA], nil)
	assert.Equal(t, http.StatusFound, rec.Code, "a bearer is no page session: sign in first")
}

// TestDeviceStartAnswers429WithRetryAfter: a hundred starts in a row from
// one address get DeviceStartsPerMinute device codes, then 429 with
// Retry-After.
func TestDeviceStartAnswers429WithRetryAfter(t *testing.T) {
	w := newWorld(t)
	ok, limited := 0, 0
	for range 100 {
		rec := w.do(http.MethodPost, "/auth/cli/device/start", anon, "")
		switch rec.Code {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			limited++
			assert.NotEmpty(t, rec.Header().Get("Retry-After"))
			assert.Contains(t, rec.Body.String(), `"rate_limited"`)
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	}
	// Windows are whole minutes: the run may straddle two of them.
	assert.GreaterOrEqual(t, ok, identity.DeviceStartsPerMinute)
	assert.LessOrEqual(t, ok, 2*identity.DeviceStartsPerMinute)
	assert.Equal(t, 100, ok+limited)
}
