package statichost_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/statichost"
)

type domainTable map[string]string

func (d domainTable) CompanyOfDomain(_ context.Context, domain string) (string, error) {
	return d[domain], nil
}

// A company's attached domain serves its site at the root, by Host; the
// listener's own host and unknown hosts keep the path routing.
func TestServesAttachedDomainsByHost(t *testing.T) {
	s := newSite(t, files{"index.html": "<h1>Shop</h1>"})
	host, err := statichost.New(statichost.Options{BaseURL: "http://sites.test", Records: s.st.Sites(), Blobs: s.blobs})
	require.NoError(t, err)
	host.ServeDomains(domainTable{"greenleaf.com": s.companyID})
	h := host.Handler()

	get := func(hostHeader, path string) (int, string, http.Header) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = hostHeader
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Body)
		return rec.Code, string(b), rec.Header()
	}
	code, body, hdr := get("GreenLeaf.com:8083", "/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "<h1>Shop</h1>")
	assert.Contains(t, hdr.Get("Content-Security-Policy"), "sandbox", "still the sites listener's headers")
	code, _, _ = get("greenleaf.com", "/../shop/")
	assert.Equal(t, http.StatusNotFound, code)
	code, body, _ = get("sites.test", "/shop/")
	assert.Equal(t, http.StatusOK, code, "path routing on the listener's host")
	assert.Contains(t, body, "<h1>Shop</h1>")
	code, _, _ = get("other.com", "/")
	assert.Equal(t, http.StatusNotFound, code, "a domain attached to no company")
}
