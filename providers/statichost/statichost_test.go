package statichost_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
)

type allOnline struct{}

func (allOnline) SiteOnline(context.Context, string) (bool, error) { return true, nil }

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func TestPublishServeAndCheck(t *testing.T) {
	ctx := context.Background()
	repos, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	root := t.TempDir()
	host, err := statichost.New(root, srv.URL+"/sites", repos)
	require.NoError(t, err)
	mux.Handle("/sites/", http.StripPrefix("/sites", host.Handler(allOnline{}, 0)))

	id := uuid.NewString()
	_, err = repos.Ensure(ctx, id, "Shop", "x", true)
	require.NoError(t, err)
	url, err := host.Ensure(ctx, id, "shop")
	require.NoError(t, err)
	assert.Equal(t, srv.URL+"/sites/shop/", url)
	require.NoError(t, host.Check(ctx, id, "shop"))

	get := func(u string) (int, string, string) {
		resp, err := http.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	code, ctype, body := get(url)
	assert.Equal(t, 200, code)
	assert.Contains(t, ctype, "text/html")
	assert.Contains(t, body, "<h1>Shop</h1>")
	code, ctype, _ = get(url + "README.md")
	assert.Equal(t, 200, code)
	assert.Contains(t, ctype, "text/plain")
	for _, p := range []string{"/sites/nope/", "/sites/shop/missing.css", "/sites/shop/../../etc/passwd", "/sites/shop/%2e%2e/x", "/sites/Bad!/"} {
		code, _, _ := get(srv.URL + p)
		assert.Equal(t, 404, code, p)
	}
	// A directory named without its slash redirects: relative links then resolve.
	resp, err := noRedirect.Get(srv.URL + "/sites/shop")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMovedPermanently, resp.StatusCode)

	// Records survive a new host; a deleted repository fails the check.
	again, err := statichost.New(root, srv.URL+"/sites", repos)
	require.NoError(t, err)
	require.NoError(t, again.Check(ctx, id, "shop"))
	require.NoError(t, repos.Delete(ctx, id))
	assert.Error(t, host.Check(ctx, id, "shop"))
	require.NoError(t, host.Delete(ctx, "shop"))
	assert.Error(t, host.Check(ctx, id, "shop"))
}
