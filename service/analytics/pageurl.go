package analytics

import (
	"net/url"
	"strings"
)

// pageURL is what capture keeps of a URL: its path (unescaped), its host
// without the port, and its raw query.
type pageURL struct{ path, host, rawQuery string }

// parsePageURL reads s as url.Parse does and returns its Path, Hostname()
// and RawQuery; a URL url.Parse refuses is the zero pageURL. The URLs
// browsers send (http or https, a plain host, a path without escapes or
// characters outside ASCII) are read here without url.Parse's
// allocations; any other is handed to url.Parse. TestParsePageURLMatchesURLParse
// and FuzzParsePageURLMatchesURLParse hold the two to the same answers.
func parsePageURL(s string) pageURL {
	if p, ok := plainPageURL(s); ok {
		return p
	}
	u, err := url.Parse(s)
	if err != nil {
		return pageURL{}
	}
	return pageURL{path: u.Path, host: u.Hostname(), rawQuery: u.RawQuery}
}

// plainPageURL reads the URLs whose parse has no special case: false hands
// s to url.Parse.
func plainPageURL(s string) (pageURL, bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return pageURL{}, false // control characters (an error) and text outside ASCII: url.Parse decides
		}
	}
	// The fragment goes first, as in url.Parse; one with an escape is
	// checked there.
	rest, frag, _ := strings.Cut(s, "#")
	if strings.IndexByte(frag, '%') >= 0 {
		return pageURL{}, false
	}
	var p pageURL
	rest, p.rawQuery, _ = strings.Cut(rest, "?")
	switch {
	case rest == "":
		return p, true
	case strings.HasPrefix(rest, "https://"):
		rest = rest[len("https://"):]
	case strings.HasPrefix(rest, "http://"):
		rest = rest[len("http://"):]
	case rest[0] == '/' && !strings.HasPrefix(rest, "//"):
		// A path alone.
		if !plainPath(rest) {
			return pageURL{}, false
		}
		p.path = rest
		return p, true
	default:
		return pageURL{}, false
	}
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	host, port, hasPort := strings.Cut(authority, ":")
	if host == "" || !plainHost(host) || hasPort && (port == "" || !digits(port)) || !plainPath(path) {
		return pageURL{}, false
	}
	p.host, p.path = host, path
	return p, true
}

// plainHost: letters, digits and . - _ ~ only (no user info, no IPv6
// brackets, no escapes).
func plainHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// plainPath: a path without escapes (what url.Parse unescapes or refuses)
// and without a space (which it keeps but escapes back).
func plainPath(p string) bool {
	return strings.IndexByte(p, '%') < 0 && strings.IndexByte(p, ' ') < 0
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
