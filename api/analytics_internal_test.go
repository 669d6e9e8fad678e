package api

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

// X-Forwarded-For names the client only when the peer is a trusted proxy;
// the nearest untrusted hop wins, so a client cannot pose as another by
// sending the header itself.
func TestClientIPTrustsOnlyConfiguredProxies(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32")}
	for _, c := range []struct {
		peer, xff, want string
		trusted         []netip.Prefix
	}{
		{"203.0.113.5:4000", "", "203.0.113.5", trusted},
		{"203.0.113.5:4000", "8.8.8.8", "203.0.113.5", trusted},              // untrusted peer: header ignored
		{"10.1.2.3:4000", "8.8.8.8", "8.8.8.8", trusted},                     // trusted proxy
		{"10.1.2.3:4000", "1.1.1.1, 8.8.8.8, 192.0.2.7", "8.8.8.8", trusted}, // chain of proxies; 1.1.1.1 is the client's claim
		{"10.1.2.3:4000", "garbage", "10.1.2.3", trusted},
		{"10.1.2.3:4000", "8.8.8.8", "10.1.2.3", nil}, // no proxy configured
		{"[::ffff:10.1.2.3]:4000", "8.8.4.4", "8.8.4.4", trusted},
	} {
		r := httptest.NewRequest("POST", "/analytics/e/", nil)
		r.RemoteAddr = c.peer
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		assert.Equal(t, c.want, clientIP(r, c.trusted).String(), "%s via %q", c.peer, c.xff)
	}
}
