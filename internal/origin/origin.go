// Package origin compares web origins: one rule for the configuration's
// checks and the sign-in's redirects.
package origin

import (
	"net/url"
	"strings"
)

// Same reports whether two absolute URLs have the same scheme and host
// (with port); a browser lets pages of one origin read each other.
func Same(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(hostWithPort(ua), hostWithPort(ub))
}

func hostWithPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Hostname() + ":443"
	case "http":
		return u.Hostname() + ":80"
	}
	return u.Host
}
