package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// SameHost reports whether two absolute URLs name the same host, whatever
// their schemes and ports: a browser sends a host's cookies to every port
// of it, and counts two ports of one host as one site (SameSite cookies
// go along with requests between them).
func SameHost(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil || ua.Hostname() == "" {
		return false
	}
	return strings.EqualFold(strings.TrimSuffix(ua.Hostname(), "."), strings.TrimSuffix(ub.Hostname(), "."))
}

// IsLoopbackURL reports whether the URL's host is localhost or a loopback
// address: a development layout on one machine, where only its own user's
// browser reaches the listeners.
func IsLoopbackURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}

// CheckSitesHost refuses a sites URL on the API's host (any port) outside
// loopback: the API's cookies would reach the tenant sites' listener, and
// the two would be one site for the browser. Tenant sites need a host of
// their own, best a registrable domain of its own (docs/auth.md, Origins).
func CheckSitesHost(sitesURL, apiURL string) error {
	if sitesURL == "" || apiURL == "" || !SameHost(sitesURL, apiURL) || IsLoopbackURL(sitesURL) {
		return nil
	}
	return &Error{"HOLDCO_SITES_PUBLIC_URL", fmt.Sprintf("%s is on the host of HOLDCO_PUBLIC_URL (%s): cookies ignore ports, so holdco's cookies would reach tenant sites; serve the sites on a host of their own (see docs/auth.md, Origins)", sitesURL, apiURL)}
}
