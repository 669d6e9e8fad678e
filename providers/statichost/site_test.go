package statichost_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/statichost"
)

// files is a published branch in memory.
type files map[string]string

func (f files) ReadFile(_ context.Context, _, name string) ([]byte, error) {
	if b, ok := f[name]; ok {
		return []byte(b), nil
	}
	return nil, os.ErrNotExist
}

// statuses is a SiteStatus the test flips.
type statuses struct {
	mu      sync.Mutex
	offline map[string]bool
}

func (s *statuses) SiteOnline(_ context.Context, companyID string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.offline[companyID], nil
}

func (s *statuses) archive(companyID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offline[companyID] = true
}

func newSite(t *testing.T, src files) (base string, host *statichost.Host, companyID string, st *statuses) {
	base, host, companyID, st, _ = newSiteIn(t, src)
	return base, host, companyID, st
}

func newSiteIn(t *testing.T, src files) (base string, host *statichost.Host, companyID string, st *statuses, root string) {
	t.Helper()
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	root = t.TempDir()
	host, err := statichost.New(root, srv.URL, src)
	require.NoError(t, err)
	st = &statuses{offline: map[string]bool{}}
	handler = host.Handler(st, 0)
	companyID = uuid.NewString()
	_, err = host.Ensure(context.Background(), companyID, "shop")
	require.NoError(t, err)
	return srv.URL, host, companyID, st, root
}

type answer struct {
	code   int
	header http.Header
	body   string
}

func fetch(t *testing.T, method, u string) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	require.NoError(t, err)
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func assertSandboxed(t *testing.T, a answer, what string) {
	t.Helper()
	assert.Equal(t, "sandbox allow-scripts allow-forms allow-popups", a.header.Get("Content-Security-Policy"), what)
	assert.NotContains(t, a.header.Get("Content-Security-Policy"), "allow-same-origin", what)
	assert.Equal(t, "nosniff", a.header.Get("X-Content-Type-Options"), what)
}

func TestSiteServesDirectoryIndexes(t *testing.T) {
	base, _, _, _ := newSite(t, files{"index.html": "<h1>home</h1>", "sub/index.html": "<h1>sub</h1>", "sub/app.js": "x()"})
	a := fetch(t, "GET", base+"/shop/sub/")
	assert.Equal(t, 200, a.code)
	assert.Equal(t, "<h1>sub</h1>", a.body)
	assert.Contains(t, a.header.Get("Content-Type"), "text/html")
	assertSandboxed(t, a, "sub/")

	a = fetch(t, "GET", base+"/shop/sub")
	assert.Equal(t, http.StatusMovedPermanently, a.code)
	assert.Equal(t, "/shop/sub/", a.header.Get("Location"))
	a = fetch(t, "GET", base+"/shop")
	assert.Equal(t, http.StatusMovedPermanently, a.code)
	assert.Equal(t, "/shop/", a.header.Get("Location"))

	a = fetch(t, "GET", base+"/shop/sub/app.js")
	assert.Equal(t, 200, a.code)
	assert.Contains(t, a.header.Get("Content-Type"), "javascript")
	for _, p := range []string{"/shop/sub//app.js", "/shop/./sub/", "/shop/sub/../index.html"} {
		assert.Equal(t, 404, fetch(t, "GET", base+p).code, p)
	}
}

func TestSiteNotFoundIsASmallHTMLPage(t *testing.T) {
	base, _, _, _ := newSite(t, files{"index.html": "<h1>home</h1>"})
	for _, p := range []string{"/shop/missing.css", "/shop/nope/", "/unknown/", "/", "/Bad!/"} {
		a := fetch(t, "GET", base+p)
		assert.Equal(t, http.StatusNotFound, a.code, p)
		assert.Contains(t, a.header.Get("Content-Type"), "text/html", p)
		assert.Contains(t, a.body, "<h1>Page not found</h1>", p)
		assertSandboxed(t, a, p)
	}
	a := fetch(t, "POST", base+"/shop/")
	assert.Equal(t, http.StatusMethodNotAllowed, a.code)
	assertSandboxed(t, a, "POST")
	a = fetch(t, "HEAD", base+"/shop/missing.css")
	assert.Equal(t, http.StatusNotFound, a.code)
	assert.Empty(t, a.body)
}

func TestArchivedCompanySiteIsOffline(t *testing.T) {
	base, _, companyID, st := newSite(t, files{"index.html": "<h1>home</h1>"})
	require.Equal(t, 200, fetch(t, "GET", base+"/shop/").code)
	st.archive(companyID)
	for _, p := range []string{"/shop/", "/shop/index.html", "/shop"} {
		a := fetch(t, "GET", base+p)
		assert.Equal(t, http.StatusGone, a.code, p)
		assert.Contains(t, a.header.Get("Content-Type"), "text/html", p)
		assert.NotContains(t, a.body, "home", p)
		assertSandboxed(t, a, p)
	}
}

type brokenStatus struct{}

func (brokenStatus) SiteOnline(context.Context, string) (bool, error) {
	return false, errors.New("database down")
}

func TestSiteStatusFailureIsNotServed(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host, err := statichost.New(t.TempDir(), srv.URL, files{"index.html": "home"})
	require.NoError(t, err)
	mux.Handle("/", host.Handler(brokenStatus{}, 0))
	_, err = host.Ensure(context.Background(), uuid.NewString(), "shop")
	require.NoError(t, err)
	a := fetch(t, "GET", srv.URL+"/shop/")
	assert.Equal(t, http.StatusServiceUnavailable, a.code)
	assert.NotContains(t, a.body, "database down")
}

func TestSiteEnvironmentIsPrivate(t *testing.T) {
	base, host, companyID, _, root := newSiteIn(t, files{"index.html": "home"})
	ctx := context.Background()
	require.NoError(t, host.Configure(ctx, companyID, "shop", map[string]string{"HOLDCO_API_KEY": "svc_c_v1_secret", "HOLDCO_API_URL": "http://api.test"}))
	env, err := host.Env("shop")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"HOLDCO_API_KEY": "svc_c_v1_secret", "HOLDCO_API_URL": "http://api.test"}, env)

	require.NoError(t, host.Configure(ctx, companyID, "shop", map[string]string{"HOLDCO_API_KEY": "svc_c_v1_new"}))
	env, err = host.Env("shop")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"HOLDCO_API_KEY": "svc_c_v1_new"}, env, "replaced, not merged")

	for _, p := range []string{"/shop.env", "/shop/.env", "/shop/../shop.env", "/shop/%2e%2e/shop.env"} {
		a := fetch(t, "GET", base+p)
		assert.NotContains(t, a.body, "svc_c_v1_", p)
	}
	assert.Error(t, host.Configure(ctx, uuid.NewString(), "shop", map[string]string{"A": "b"}), "another company's site")
	assert.Error(t, host.Configure(ctx, companyID, "shop", map[string]string{"A": "b\nHOLDCO_API_KEY=x"}), "no injected lines")

	matches, err := filepath.Glob(filepath.Join(root, "*.env"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	info, err := os.Stat(matches[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "owner only")
}
