package statichost_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/blob/local"
	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
	"holdco/store"
	"holdco/testenv"
)

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// files is a tree to commit on main.
type files map[string]string

// site is one company's site: its repository (the worker's), the blob
// store and database every process shares, and a host serving them.
type site struct {
	base      string
	host      *statichost.Host
	st        *store.Store
	repos     *gitrepo.Store
	blobs     *local.Store
	companyID string
}

func newSite(t *testing.T, src files) *site {
	t.Helper()
	ctx := context.Background()
	st := testenv.NewStore(t)
	_, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	require.NoError(t, err)
	co, err := st.Companies().CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: "Shop", Handle: "shop"})
	require.NoError(t, err)
	repos, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	_, err = repos.Ensure(ctx, co.ID, "Shop", "", false)
	require.NoError(t, err)
	blobs, err := local.New(t.TempDir(), bytes.Repeat([]byte("k"), 32), "http://sites.test")
	require.NoError(t, err)
	s := &site{st: st, repos: repos, blobs: blobs, companyID: co.ID}
	var handler http.Handler
	// The address is known before the server serves, so an early
	// connection never finds the handler unset.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	s.base = "http://" + srv.Listener.Addr().String()
	s.host = s.newHost(t, repos)
	handler = s.host.Handler()
	srv.Start()
	s.commit(t, src)
	_, err = s.host.Ensure(ctx, co.ID, "shop")
	require.NoError(t, err)
	return s
}

// newHost is another process's host on the same database and blobs (src
// nil: a sites process, which deploys nothing).
func (s *site) newHost(t *testing.T, src statichost.Source) *statichost.Host {
	t.Helper()
	o := statichost.Options{BaseURL: s.base, Records: s.st.Sites(), Blobs: s.blobs, EnvKey: bytes.Repeat([]byte("e"), 32)}
	if src != nil {
		o.Source = src
	}
	h, err := statichost.New(o)
	require.NoError(t, err)
	return h
}

func (s *site) commit(t *testing.T, src files) string {
	t.Helper()
	var changes []gitrepo.Change
	for p, c := range src {
		changes = append(changes, gitrepo.Change{Path: p, Content: []byte(c)})
	}
	id, err := s.repos.Commit(context.Background(), s.companyID, changes, "edit", "agent")
	require.NoError(t, err)
	return id
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

func serve(h http.Handler, method, path string, header map[string]string) answer {
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Header(), rec.Body.String()}
}

func assertSandboxed(t *testing.T, a answer, what string) {
	t.Helper()
	assert.Equal(t, "sandbox allow-scripts allow-forms allow-popups", a.header.Get("Content-Security-Policy"), what)
	assert.NotContains(t, a.header.Get("Content-Security-Policy"), "allow-same-origin", what)
	assert.Equal(t, "nosniff", a.header.Get("X-Content-Type-Options"), what)
}

func TestPublishServeAndCheck(t *testing.T) {
	ctx := context.Background()
	s := newSite(t, files{"index.html": "<h1>Shop</h1>", "README.md": "# Shop"})
	assert.Equal(t, s.base+"/shop/", s.host.SiteURL("shop"))
	require.NoError(t, s.host.Check(ctx, s.companyID, "shop"))

	a := fetch(t, "GET", s.base+"/shop/")
	assert.Equal(t, 200, a.code)
	assert.Contains(t, a.header.Get("Content-Type"), "text/html")
	assert.Equal(t, "<h1>Shop</h1>", a.body)
	assertSandboxed(t, a, "/shop/")
	a = fetch(t, "GET", s.base+"/shop/README.md")
	assert.Equal(t, 200, a.code)
	assert.Contains(t, a.header.Get("Content-Type"), "text/plain")
	for _, p := range []string{"/nope/", "/shop/missing.css", "/shop/../../etc/passwd", "/shop/%2e%2e/x", "/Bad!/"} {
		assert.Equal(t, 404, fetch(t, "GET", s.base+p).code, p)
	}

	// The deploy is in the blob store under immutable keys; the
	// repository is not read to serve.
	keys, err := s.blobs.List(ctx, "sites/"+s.companyID+"/")
	require.NoError(t, err)
	assert.Len(t, keys, 3, "two files and one manifest")
	require.NoError(t, s.repos.Delete(ctx, s.companyID))
	assert.Equal(t, 200, fetch(t, "GET", s.base+"/shop/").code, "served without the repository")
	assert.Error(t, s.host.Check(ctx, s.companyID, "shop"), "the check reads main")

	require.NoError(t, s.host.Delete(ctx, s.companyID))
	assert.Error(t, s.host.Check(ctx, s.companyID, "shop"))
	assert.Equal(t, 404, fetch(t, "GET", s.base+"/shop/").code, "unpublished")
}

// TestDeployIsAtomicAndRollsBack: every commit deployed is a deploy of
// its own; a sites process switches when the row says so, and a rollback
// is a switch to an earlier deploy without exporting again.
func TestDeployIsAtomicAndRollsBack(t *testing.T) {
	ctx := context.Background()
	s := newSite(t, files{"index.html": "v1", "logo.svg": "<svg/>"})
	v1, err := s.repos.Head(ctx, s.companyID)
	require.NoError(t, err)
	sites := s.newHost(t, nil).Handler() // another process, no repository
	assert.Equal(t, "v1", serve(sites, "GET", "/shop/", nil).body)
	etag := serve(sites, "GET", "/shop/", nil).header.Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, http.StatusNotModified, serve(sites, "GET", "/shop/", map[string]string{"If-None-Match": etag}).code)

	s.commit(t, files{"index.html": "v2"})
	require.NoError(t, s.host.PublishHead(ctx, s.companyID))
	assert.Equal(t, "v2", serve(sites, "GET", "/shop/", nil).body, "the switch is seen (no TTL here)")
	assert.Equal(t, "<svg/>", serve(sites, "GET", "/shop/logo.svg", nil).body)
	keys, err := s.blobs.List(ctx, "sites/"+s.companyID+"/")
	require.NoError(t, err)
	assert.Len(t, keys, 5, "unchanged files are stored once: 3 objects, 2 manifests")

	d, err := s.host.Deploy(ctx, s.companyID, v1)
	require.NoError(t, err)
	assert.Equal(t, v1, d.CommitID)
	assert.Equal(t, "v1", serve(sites, "GET", "/shop/", nil).body, "rolled back")
	again, err := s.blobs.List(ctx, "sites/"+s.companyID+"/")
	require.NoError(t, err)
	assert.Len(t, again, 5, "a rollback exports nothing")

	_, err = s.newHost(t, nil).Deploy(ctx, s.companyID, v1)
	assert.ErrorIs(t, err, statichost.ErrNoSource, "a sites process deploys nothing")
}

func TestSiteServesDirectoryIndexes(t *testing.T) {
	s := newSite(t, files{"index.html": "<h1>home</h1>", "sub/index.html": "<h1>sub</h1>", "sub/app.js": "x()"})
	base := s.base
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
	s := newSite(t, files{"index.html": "<h1>home</h1>"})
	for _, p := range []string{"/shop/missing.css", "/shop/nope/", "/unknown/", "/", "/Bad!/"} {
		a := fetch(t, "GET", s.base+p)
		assert.Equal(t, http.StatusNotFound, a.code, p)
		assert.Contains(t, a.header.Get("Content-Type"), "text/html", p)
		assert.Contains(t, a.body, "<h1>Page not found</h1>", p)
		assertSandboxed(t, a, p)
	}
	a := fetch(t, "POST", s.base+"/shop/")
	assert.Equal(t, http.StatusMethodNotAllowed, a.code)
	assertSandboxed(t, a, "POST")
	a = fetch(t, "HEAD", s.base+"/shop/missing.css")
	assert.Equal(t, http.StatusNotFound, a.code)
	assert.Empty(t, a.body)
}

func TestArchivedCompanySiteIsOffline(t *testing.T) {
	ctx := context.Background()
	s := newSite(t, files{"index.html": "<h1>home</h1>"})
	require.Equal(t, 200, fetch(t, "GET", s.base+"/shop/").code)
	sc, err := s.st.SystemCompanyScope(ctx, s.companyID)
	require.NoError(t, err)
	_, err = s.st.Companies().ArchiveCompany(ctx, sc, time.Now())
	require.NoError(t, err)
	for _, p := range []string{"/shop/", "/shop/index.html", "/shop"} {
		a := fetch(t, "GET", s.base+p)
		assert.Equal(t, http.StatusGone, a.code, p)
		assert.Contains(t, a.header.Get("Content-Type"), "text/html", p)
		assert.NotContains(t, a.body, "home", p)
		assertSandboxed(t, a, p)
	}
}

// brokenRecords answers every read with an error (the database is down).
type brokenRecords struct{ statichost.Records }

func (brokenRecords) SiteByHandle(context.Context, string) (models.SiteState, error) {
	return models.SiteState{}, errors.New("database down")
}

func TestSiteRecordFailureIsNotServed(t *testing.T) {
	s := newSite(t, files{"index.html": "home"})
	h, err := statichost.New(statichost.Options{BaseURL: s.base, Records: brokenRecords{s.st.Sites()}, Blobs: s.blobs})
	require.NoError(t, err)
	a := serve(h.Handler(), "GET", "/shop/", nil)
	assert.Equal(t, http.StatusServiceUnavailable, a.code)
	assert.NotContains(t, a.body, "database down")
}

func TestSiteEnvironmentIsPrivate(t *testing.T) {
	s := newSite(t, files{"index.html": "home"})
	ctx := context.Background()
	require.NoError(t, s.host.Configure(ctx, s.companyID, "shop", map[string]string{"HOLDCO_API_KEY": "svc_c_v1_secret", "HOLDCO_API_URL": "http://api.test"}))
	other := s.newHost(t, nil) // another worker: only the database is shared
	env, err := other.Env(ctx, s.companyID)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"HOLDCO_API_KEY": "svc_c_v1_secret", "HOLDCO_API_URL": "http://api.test"}, env)

	require.NoError(t, other.Configure(ctx, s.companyID, "shop", map[string]string{"HOLDCO_API_KEY": "svc_c_v1_new"}))
	env, err = s.host.Env(ctx, s.companyID)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"HOLDCO_API_KEY": "svc_c_v1_new"}, env, "replaced, not merged")

	for _, p := range []string{"/shop.env", "/shop/.env", "/shop/../shop.env", "/shop/%2e%2e/shop.env"} {
		a := fetch(t, "GET", s.base+p)
		assert.NotContains(t, a.body, "svc_c_v1_", p)
	}
	assert.Error(t, s.host.Configure(ctx, uuid.NewString(), "shop", map[string]string{"A": "b"}), "another company's site")
	assert.Error(t, s.host.Configure(ctx, s.companyID, "shop", map[string]string{"A": "b\nHOLDCO_API_KEY=x"}), "no injected lines")

	sealed, err := s.st.Sites().SiteEnv(ctx, s.companyID)
	require.NoError(t, err)
	assert.NotContains(t, string(sealed), "svc_c_v1_new", "sealed at rest")
	wrongKey, err := statichost.New(statichost.Options{BaseURL: s.base, Records: s.st.Sites(), Blobs: s.blobs, EnvKey: bytes.Repeat([]byte("x"), 32)})
	require.NoError(t, err)
	_, err = wrongKey.Env(ctx, s.companyID)
	assert.Error(t, err, "another instance key cannot open it")
}
