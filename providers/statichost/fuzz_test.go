package statichost_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"holdco/models"
	"holdco/providers/blob/local"
	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
	"holdco/testenv"
)

// recordingBlobs is the shared blob store; it records every key a
// request opens.
type recordingBlobs struct {
	statichost.Blobs
	mu     sync.Mutex
	opened []string
}

func (b *recordingBlobs) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	b.mu.Lock()
	b.opened = append(b.opened, key)
	b.mu.Unlock()
	return b.Blobs.Open(ctx, key)
}

type oneDomain struct{ company string }

func (d oneDomain) CompanyOfDomain(_ context.Context, host string) (string, error) {
	if host == "shop.example" {
		return d.company, nil
	}
	return "", nil
}

// FuzzSitePath resolves arbitrary request paths and hosts on the sites
// listener: every file read is a clean relative path of the company the
// path's handle (or the request's attached domain) names, never of another
// company and never outside its tree; a redirect stays under the site's
// base; the answer is one of the handler's statuses, with the sandbox
// policy on it.
func FuzzSitePath(f *testing.F) {
	for _, p := range []string{"/ada/", "/ada", "/ada/index.html", "/ada/../bob/secret", "/ada/docs", "/ada/%2e%2e/bob/", "/ada/a//b",
		"/bob/x/./y", "/ada/\\\\evil", "/ada/..%2fbob", "//ada/", "/ada/.env", "/ada/docs/", "/%00/", "/ada/a%00b", "/nobody/x"} {
		f.Add(p, "sites.test", "GET")
	}
	f.Add("/docs", "shop.example", "GET")
	f.Add("/../ada/", "SHOP.example.:80", "HEAD")
	f.Add("/ada/", "sites.test", "POST")
	// Two companies' sites (ada, bob) deployed from their repositories to
	// the blob store every sites process shares.
	ctx := context.Background()
	st := testenv.NewStore(f)
	_, cong, err := st.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "ada@example.com", NormalizedEmail: "ada@example.com", Name: "Ada"}, "Ada's")
	if err != nil {
		f.Fatal(err)
	}
	repos, err := gitrepo.New(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	lb, err := local.New(f.TempDir(), bytes.Repeat([]byte("k"), 32), "http://sites.test")
	if err != nil {
		f.Fatal(err)
	}
	blobs := &recordingBlobs{Blobs: lb}
	h, err := statichost.New(statichost.Options{BaseURL: "http://sites.test", Records: st.Sites(), Blobs: blobs, Source: repos})
	if err != nil {
		f.Fatal(err)
	}
	companyOf := map[string]string{}
	for handle, tree := range map[string]map[string]string{
		"ada": {"index.html": "a", "docs/index.html": "d", "README.md": "r", "\\\\evil/index.html": "e"},
		"bob": {"index.html": "b", "secret": "s", "docs/index.html": "d"},
	} {
		co, err := st.Companies().CreateCompany(ctx, st.SystemConglomerateScope(cong.ID), models.Company{Name: handle, Handle: handle})
		if err != nil {
			f.Fatal(err)
		}
		if _, err := repos.Ensure(ctx, co.ID, handle, "", false); err != nil {
			f.Fatal(err)
		}
		var changes []gitrepo.Change
		for p, c := range tree {
			changes = append(changes, gitrepo.Change{Path: p, Content: []byte(c)})
		}
		if _, err := repos.Commit(ctx, co.ID, changes, "site", "agent"); err != nil {
			f.Fatal(err)
		}
		if _, err := h.Ensure(ctx, co.ID, handle); err != nil {
			f.Fatal(err)
		}
		companyOf[handle] = co.ID
	}
	h.ServeDomains(oneDomain{company: companyOf["bob"]})
	handler := h.Handler()
	f.Fuzz(func(t *testing.T, rawPath, host, method string) {
		u, err := url.ParseRequestURI(rawPath)
		if err != nil || u.Host != "" || !strings.HasPrefix(rawPath, "/") {
			return // not a request line a server would route
		}
		if method == "" || strings.ContainsAny(method, " \t\r\n/") || strings.ContainsAny(host, " \t\r\n/") {
			return
		}
		r := httptest.NewRequest("GET", "http://sites.test/", nil)
		r.Method, r.URL, r.RequestURI, r.Host = method, u, rawPath, host
		blobs.mu.Lock()
		blobs.opened = nil
		blobs.mu.Unlock()
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, r)

		domainHost := strings.TrimSuffix(hostOnly(strings.ToLower(host)), ".")
		base, want := "", ""
		if domainHost == "shop.example" {
			base, want = "/", companyOf["bob"]
		} else {
			handle, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
			base = "/" + handle + "/"
			want = companyOf[handle]
		}
		blobs.mu.Lock()
		opened := slices.Clone(blobs.opened)
		blobs.mu.Unlock()
		for _, key := range opened {
			// Deploys live under sites/<company>/: a request reads only
			// its own company's manifest and files (immutable keys, never
			// a path built from the request).
			if want == "" || !strings.HasPrefix(key, "sites/"+want+"/") || path.Clean(key) != key {
				t.Fatalf("%s %s (host %q) opened %q (want company %q)", method, rawPath, host, key, want)
			}
		}
		switch rec.Code {
		case http.StatusOK, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusGone:
		case http.StatusMovedPermanently:
			loc := rec.Header().Get("Location")
			if !strings.HasPrefix(loc, base) || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") {
				t.Fatalf("%s redirects to %q, outside %s", rawPath, loc, base)
			}
		default:
			t.Fatalf("%s %s: status %d", method, rawPath, rec.Code)
		}
		if rec.Header().Get("Content-Security-Policy") != statichost.SiteHeaders["Content-Security-Policy"] {
			t.Fatalf("%s: no sandbox policy", rawPath)
		}
	})
}

func hostOnly(h string) string {
	if hh, _, err := net.SplitHostPort(h); err == nil {
		return hh
	}
	return h
}
