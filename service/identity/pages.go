package identity

import (
	"context"
	"strings"

	"holdco/service"
)

// ConsolePath is where holdco serves its web console (the console
// package) when no frontend is configured: pages signed in by the SSO
// cookie alone, so a sign-in that lands there carries no login code.
const ConsolePath = "/console"

// PageSessionCookie carries the session of holdco's own pages (device
// approval, action pages, the console): an opaque id that no REST
// endpoint accepts as a bearer, so a cookie that reaches another listener
// of the same host (cookies ignore ports) is no API credential.
const PageSessionCookie = "holdco_sso"

// FromOwnPage reports whether a browser's form post or fetch comes from a
// page of holdco's own origin. Sec-Fetch-Site decides when the browser
// sends it (every current one does): only "same-origin" passes; a
// sandboxed tenant page (an opaque origin) sends "cross-site", another
// origin of the same site "same-site". A browser without it is judged by
// Origin, which must be holdco's own ("null", a sandboxed or no-referrer
// page, is refused). A request with neither is not a browser's
// cross-site post.
func (s *Service) FromOwnPage(secFetchSite, origin string) bool {
	if secFetchSite != "" {
		return secFetchSite == "same-origin"
	}
	if origin != "" {
		return s.IsOwnOrigin(origin)
	}
	return true
}

// PageCSRFToken is the anti-forgery token of the forms and fetches of
// holdco's own pages for one page session: derived from the session, so
// it needs no storage and dies with the session.
func (s *Service) PageCSRFToken(p service.Principal) string {
	return s.sign.Derive("page-csrf", p.CredentialID)
}

// CheckPageCSRF verifies a token from PageCSRFToken in constant time.
func (s *Service) CheckPageCSRF(p service.Principal, token string) bool {
	return token != "" && service.EqualHash(s.PageCSRFToken(p), token)
}

// LogoutPage ends every web session of the page session's user (the
// cookie's value), as Logout does for a web session token, and returns
// where to send the browser. A cookie that names no live session still
// lands on the login page.
func (s *Service) LogoutPage(ctx context.Context, cookie string) string {
	p, err := s.SessionFromCookie(ctx, cookie)
	if err != nil {
		return s.LoginPageURL("")
	}
	return s.endSessions(ctx, p.UserID)
}

// consolePage reports whether a sign-in's landing page is the console's.
func consolePage(path string) bool {
	return path == ConsolePath || strings.HasPrefix(path, ConsolePath+"/")
}
