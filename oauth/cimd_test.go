package oauth_test

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	authz "holdco/service/oauth"
)

// fixedResolver answers every name with its addresses.
type fixedResolver map[string][]netip.Addr

func (r fixedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// metadataServer serves client ID metadata documents over TLS on
// loopback; the test certificate is valid for example.com.
type metadataServer struct {
	srv     *httptest.Server
	fetches atomic.Int32
	handler atomic.Value // http.HandlerFunc
}

func newMetadataServer(t *testing.T) *metadataServer {
	m := &metadataServer{}
	m.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.fetches.Add(1)
		m.handler.Load().(http.HandlerFunc)(w, r)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *metadataServer) url(path string) string {
	_, port, _ := net.SplitHostPort(m.srv.Listener.Addr().String())
	return "https://example.com:" + port + path
}

func (m *metadataServer) serve(status int, contentType, cacheControl, body string) {
	m.handler.Store(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		if cacheControl != "" {
			w.Header().Set("Cache-Control", cacheControl)
		}
		if status == http.StatusFound {
			w.Header().Set("Location", "https://example.com/elsewhere")
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
}

func (m *metadataServer) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(m.srv.Certificate())
	return p
}

func doc(clientID, extra string) string {
	return `{"client_id":"` + clientID + `","client_name":"Doc Assistant","redirect_uris":["https://doc.example/cb","http://127.0.0.1/cb"]` + extra + `}`
}

// Rule 12a against a local HTTPS server: a test resolver maps example.com
// to loopback and the test allows loopback; production allows public
// addresses only.
func TestClientIDMetadataDocument(t *testing.T) {
	ms := newMetadataServer(t)
	fetcher := &authz.Fetcher{Resolver: fixedResolver{"example.com": addrs("127.0.0.1")}, RootCAs: ms.pool(),
		AllowAddr: func(a netip.Addr) bool { return a.IsLoopback() }, Timeout: 500 * time.Millisecond}
	w := newWorld(t, fetcher, nil)
	id := ms.url("/client.json")
	try := func(clientID string) (int, string) {
		resp := w.authorize(w.browser(), authParams(clientID, "https://doc.example/cb"))
		if resp.StatusCode == http.StatusFound {
			return resp.StatusCode, resp.Header.Get("Location")
		}
		return resp.StatusCode, page(t, resp)
	}
	cases := []struct {
		name                  string
		clientID              string
		status                int
		contentType, cc, body string
		want                  string // in the page when refused
	}{
		{"valid", id, 200, "application/json; charset=utf-8", "", doc(id, ""), ""},
		{"auth methods list with none", id, 200, "application/json", "", doc(id, `,"token_endpoint_auth_methods_supported":["none","private_key_jwt"]`), ""},
		{"auth methods list without none", id, 200, "application/json", "", doc(id, `,"token_endpoint_auth_methods_supported":["private_key_jwt"]`), "none"},
		{"secret auth method", id, 200, "application/json", "", doc(id, `,"token_endpoint_auth_method":"client_secret_post"`), "none"},
		{"client_id differs", id, 200, "application/json", "", doc(id+"x", ""), "equal its URL"},
		{"no client_name", id, 200, "application/json", "", `{"client_id":"` + id + `","redirect_uris":["https://doc.example/cb"]}`, "client_name"},
		{"no redirect_uris", id, 200, "application/json", "", `{"client_id":"` + id + `","client_name":"x"}`, "redirect_uris"},
		{"wrong content type", id, 200, "text/html", "", doc(id, ""), "application/json"},
		{"redirect", id, 302, "application/json", "", "", "redirects"},
		{"not found", id, 404, "application/json", "", "", "404"},
		{"oversized", id, 200, "application/json", "", doc(id, `,"pad":"`+strings.Repeat("x", 70<<10)+`"`), "larger than"},
		{"not json", id, 200, "application/json", "", "{", "not a JSON object"},
		{"query in client_id", id + "?a=1", 200, "application/json", "", doc(id+"?a=1", ""), "no query"},
		{"no path", ms.url(""), 200, "application/json", "", doc(ms.url(""), ""), "with a path"},
		{"root path", ms.url("/"), 200, "application/json", "", doc(ms.url("/"), ""), "with a path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := w.env.SQL.Exec("DELETE FROM oauth_clients") // no cache between cases
			require.NoError(t, err)
			ms.serve(c.status, c.contentType, "no-store", c.body)
			status, out := try(c.clientID)
			if c.want == "" {
				assert.Equal(t, http.StatusFound, status, out)
				assert.True(t, strings.HasPrefix(out, "https://idp.test/"), out)
				return
			}
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Contains(t, out, c.want)
		})
	}
	t.Run("slow", func(t *testing.T) {
		_, _ = w.env.SQL.Exec("DELETE FROM oauth_clients")
		release := make(chan struct{})
		defer close(release)
		// Nothing is answered until the subtest ends: a handler that
		// returned when its request's context ended would answer an empty
		// 200 whenever the server ends that context before the fetcher's
		// deadline (seen once in a Postgres run under load: "not served as
		// application/json" instead of the timeout).
		ms.handler.Store(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
		status, out := try(id)
		assert.Equal(t, http.StatusBadRequest, status)
		assert.Contains(t, out, "did not arrive within")
	})
	t.Run("cached for max-age", func(t *testing.T) {
		_, _ = w.env.SQL.Exec("DELETE FROM oauth_clients")
		ms.serve(200, "application/json", "public, max-age=60", doc(id, ""))
		before := ms.fetches.Load()
		for range 3 {
			status, out := try(id)
			require.Equal(t, http.StatusFound, status, out)
		}
		assert.EqualValues(t, 1, ms.fetches.Load()-before)
		w.env.Clock.Advance(61 * time.Second)
		status, _ := try(id)
		assert.Equal(t, http.StatusFound, status)
		assert.EqualValues(t, 2, ms.fetches.Load()-before)
	})
	t.Run("consent page shows the document's host, not verified", func(t *testing.T) {
		ms.serve(200, "application/json", "", doc(id, ""))
		c := w.browser()
		resp := w.signIn(c, w.authorize(c, authParams(id, "https://doc.example/cb")), "doc@example.com")
		body := page(t, resp)
		assert.Contains(t, body, "Doc Assistant")
		assert.Contains(t, body, "Not verified")
		assert.Contains(t, body, "example.com:")
	})
}

// The production fetcher refuses every address that is not public, after
// resolution, whatever the name; and connects only to the address it
// checked.
func TestMetadataFetchRefusesPrivateAddresses(t *testing.T) {
	ms := newMetadataServer(t)
	ms.serve(200, "application/json", "", "{}")
	for _, c := range []struct {
		name, url string
		resolve   []netip.Addr
	}{
		{"loopback literal", "https://127.0.0.1/x", nil},
		{"loopback name", ms.url("/x"), addrs("127.0.0.1")},
		{"private", ms.url("/x"), addrs("10.1.2.3")},
		{"private 192.168", ms.url("/x"), addrs("192.168.0.10")},
		{"link-local metadata", ms.url("/x"), addrs("169.254.169.254")},
		{"shared address space", ms.url("/x"), addrs("100.100.100.200")},
		{"ipv6 loopback", ms.url("/x"), addrs("::1")},
		{"ipv6 unique local", ms.url("/x"), addrs("fd00:ec2::254")},
		{"ipv4-mapped loopback", ms.url("/x"), addrs("::ffff:127.0.0.1")},
		{"mixed public and private", ms.url("/x"), addrs("93.184.216.34", "10.0.0.1")},
		{"unspecified", ms.url("/x"), addrs("0.0.0.0")},
		{"http", "http://example.com/x", addrs("93.184.216.34")},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := ms.fetches.Load()
			f := &authz.Fetcher{Resolver: fixedResolver{"example.com": c.resolve}, RootCAs: ms.pool()}
			_, _, err := f.Fetch(context.Background(), c.url)
			require.Error(t, err)
			assert.Equal(t, before, ms.fetches.Load(), "no connection was made")
		})
	}
	for _, c := range []struct {
		addr   string
		public bool
	}{{"93.184.216.34", true}, {"2606:2800:220:1:248:1893:25c8:1946", true}, {"8.8.8.8", true},
		{"172.16.0.1", false}, {"198.18.0.1", false}, {"224.0.0.1", false}, {"64:ff9b::a00:1", false}, {"fe80::1", false}} {
		assert.Equal(t, c.public, authz.PublicAddr(netip.MustParseAddr(c.addr)), c.addr)
	}
}
