package local_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/blob/blobtest"
	"holdco/providers/blob/local"
)

var _ blobtest.Store = (*local.Store)(nil)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func newServed(t *testing.T) (*local.Store, *httptest.Server) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s, err := local.New(t.TempDir(), testKey, srv.URL)
	require.NoError(t, err)
	mux.Handle(local.PathPrefix, s.Handler())
	return s, srv
}

func TestContract(t *testing.T) {
	s, srv := newServed(t)
	blobtest.Run(t, s, srv.Client())
}

func TestSignedURLs(t *testing.T) {
	ctx := context.Background()
	s, srv := newServed(t)
	key := blobtest.Key()
	_, err := s.Put(ctx, key, strings.NewReader("<script>alert(1)</script>"), -1, "text/html")
	require.NoError(t, err)
	good, err := s.DownloadURL(ctx, key, "page.html", "text/html", time.Minute)
	require.NoError(t, err)
	fetch := func(u string) (*http.Response, string) {
		resp, err := srv.Client().Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}

	resp, _ := fetch(good)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	assert.Contains(t, resp.Header.Get("Content-Security-Policy"), "sandbox")
	assert.NotContains(t, resp.Header.Get("Content-Security-Policy"), "allow-")
	assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment;"))

	tamper := func(param, value string) string {
		u, _ := url.Parse(good)
		q := u.Query()
		q.Set(param, value)
		u.RawQuery = q.Encode()
		return u.String()
	}
	for name, u := range map[string]string{
		"no signature":  strings.Split(good, "?")[0],
		"other type":    tamper("ct", "text/plain"),
		"other name":    tamper("fn", "x.html"),
		"later expiry":  tamper("exp", "99999999999"),
		"bad signature": tamper("sig", "AAAA"),
		"other key":     strings.Replace(good, key, blobtest.Key(), 1),
	} {
		resp, body := fetch(u)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, name)
		assert.Equal(t, "This download link is invalid or has expired.\n", body, name)
	}

	later := s.WithClock(func() time.Time { return time.Now().Add(2 * time.Minute) })
	rec := httptest.NewRecorder()
	later.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, good, nil))
	assert.Equal(t, http.StatusForbidden, rec.Code, "expired")

	require.NoError(t, s.Delete(ctx, key))
	resp, body := fetch(good)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.NotContains(t, body, key)
}

func TestShortSigningKeyRefused(t *testing.T) {
	_, err := local.New(t.TempDir(), []byte("short"), "http://sites.test")
	require.Error(t, err)
}

// TestListLeavesOutStrayFiles: a file holdco would never have stored is
// not listed.
func TestListLeavesOutStrayFiles(t *testing.T) {
	dir := t.TempDir()
	s, err := local.New(dir, testKey, "http://sites.test")
	require.NoError(t, err)
	run := "runs/" + uuid.NewString() + "/"
	_, err = s.Put(context.Background(), run+"trace.jsonl", strings.NewReader("ok\n"), 3, "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "objects", filepath.FromSlash(run), "Notes.TXT"), []byte("by hand"), 0o600))
	got, err := s.List(context.Background(), run)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, run+"trace.jsonl", got[0].Key)
}

// TestSweepPartialDeletesOnlyStaleTemporaryFiles: the temporary files a
// crash left in tmp/ go once last written before the cut-off; a file being
// written, a finished blob and a file holdco did not write stay.
func TestSweepPartialDeletesOnlyStaleTemporaryFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := local.New(dir, testKey, "http://sites.test")
	require.NoError(t, err)
	n, err := s.SweepPartial(ctx, time.Now())
	require.NoError(t, err)
	assert.Equal(t, 0, n, "no directory yet")

	key := blobtest.Key()
	_, err = s.Put(ctx, key, strings.NewReader("blob"), 4, "text/plain")
	require.NoError(t, err)
	tmp := filepath.Join(dir, "tmp")
	stale, fresh, stray := filepath.Join(tmp, "put-111"), filepath.Join(tmp, "put-222"), filepath.Join(tmp, "notes.txt")
	for _, p := range []string{stale, fresh, stray} {
		require.NoError(t, os.WriteFile(p, []byte("partial"), 0o600))
	}
	cutoff := time.Now().Add(-time.Hour)
	old := cutoff.Add(-time.Minute)
	require.NoError(t, os.Chtimes(stale, old, old))
	require.NoError(t, os.Chtimes(stray, old, old))

	n, err = s.SweepPartial(ctx, cutoff)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.NoFileExists(t, stale)
	assert.FileExists(t, fresh, "written after the cut-off: an upload in progress")
	assert.FileExists(t, stray, "not a temporary file of Put")
	ok, err := s.Exists(ctx, key)
	require.NoError(t, err)
	assert.True(t, ok)
}
