package identity

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"

	"holdco/internal/origin"
	"holdco/models"
	"holdco/service"
)

// Paths of holdco's own callbacks, registered with the identity provider.
const (
	WebCallbackPath = "/auth/callback"
	CLICallbackPath = "/auth/cli/callback"
	loginStateTTL   = 10 * time.Minute
	// LoginCodeTTL is how long the frontend has to exchange the one-time
	// code sign-in hands it.
	LoginCodeTTL = 60 * time.Second
)

// Sealing purposes: a state signed for one flow never opens in another.
const (
	purposeWebLogin = "web-login"
	purposeCLILogin = "cli-login"
)

type webLoginState struct {
	service.Expiring
	Nonce       string `json:"n"`
	Binding     string `json:"b"` // hash of the browser binding cookie's value
	RedirectURL string `json:"r"`
	Ref         string `json:"ref,omitempty"`
}

// BeginWebLogin starts a browser sign-in: the identity provider URL and
// the cookie that binds the sign-in to this browser (binding.go).
// redirectURL (where the frontend wants to land afterwards) must be on the
// frontend's or holdco's own origin.
func (s *Service) BeginWebLogin(ctx context.Context, redirectURL, ref, screenHint string) (SignInStart, error) {
	target, err := s.safeRedirect(redirectURL)
	if err != nil {
		return SignInStart{}, err
	}
	binding, hash := newBinding()
	st := webLoginState{Expiring: service.Expiring{Exp: s.now().Add(loginStateTTL).Unix()}, Nonce: service.NewSecret(16), Binding: hash, RedirectURL: target, Ref: ref}
	state, err := s.sign.Seal(purposeWebLogin, st)
	if err != nil {
		return SignInStart{}, err
	}
	u, err := s.idpAuthURL(ctx, WebCallbackPath, s.idpVerifier(purposeWebLogin, st.Nonce, binding), state, screenHint)
	if err != nil {
		return SignInStart{}, err
	}
	return SignInStart{URL: u, Binding: binding, State: state}, nil
}

// idpAuthURL builds the provider URL with the S256 challenge of holdco's
// PKCE verifier towards the provider.
func (s *Service) idpAuthURL(ctx context.Context, callbackPath, verifier, state, screenHint string) (string, error) {
	params := map[string]string{}
	if screenHint == "sign-up" || screenHint == "sign-in" {
		params["screen_hint"] = screenHint
	}
	u, err := s.idp.AuthURL(ctx, s.cfg.PublicURL+callbackPath, state, service.PKCEChallenge(verifier), params)
	if err != nil {
		return "", models.Errorf(models.CodeUpstreamUnavailable, "The sign-in provider cannot be reached right now; retry shortly.").Wrap(err)
	}
	return u, nil
}

// idpVerifier derives holdco's PKCE verifier towards the provider from the
// state's nonce and, for a browser sign-in, the binding cookie's value, so
// no row is needed to finish the flow and the state alone does not finish
// it.
func (s *Service) idpVerifier(purpose, nonce, binding string) string {
	if binding != "" {
		nonce += "." + binding
	}
	return s.sign.Derive("idp-pkce:"+purpose, nonce)
}

// WebLoginResult is what the browser callback hands the browser.
type WebLoginResult struct {
	// Cookie is the SSO cookie of holdco's own pages (HttpOnly): an opaque
	// page session id that no REST endpoint accepts as a bearer. It never
	// appears in a URL.
	Cookie string
	// RedirectURL is the frontend address with ?login_code=, a one-time
	// code the frontend exchanges for its own session token.
	RedirectURL string
}

// CompleteWebLogin handles the provider's redirect to /auth/callback.
// binding is the value of the browser's SignInCookieName(state) cookie
// ("" when it sent none): a callback opened in another browser is refused
// before the code is exchanged.
func (s *Service) CompleteWebLogin(ctx context.Context, code, state, binding string) (WebLoginResult, error) {
	var st webLoginState
	if err := s.sign.Open(purposeWebLogin, state, &st); err != nil {
		return WebLoginResult{}, models.Errorf(models.CodeBadRequest, "The sign-in state is missing or was tampered with; start the sign-in again.")
	}
	if st.Expired(s.now()) {
		return WebLoginResult{}, models.Errorf(models.CodeBadRequest, "The sign-in took too long; start it again.")
	}
	if err := checkBinding(st.Binding, binding, "start the sign-in again."); err != nil {
		return WebLoginResult{}, err
	}
	id, err := s.idp.Exchange(ctx, s.cfg.PublicURL+WebCallbackPath, code, s.idpVerifier(purposeWebLogin, st.Nonce, binding))
	if err != nil {
		return WebLoginResult{}, models.Errorf(models.CodeBadRequest, "The sign-in provider did not accept the sign-in; start it again.").Wrap(err)
	}
	user, err := s.signIn(ctx, id)
	if err != nil {
		return WebLoginResult{}, err
	}
	cookie, err := s.issuePageSession(ctx, user.ID)
	if err != nil {
		return WebLoginResult{}, err
	}
	target, err := url.Parse(st.RedirectURL)
	if err != nil {
		return WebLoginResult{}, err
	}
	if !s.exchangesLoginCode(target) {
		// holdco's other pages (device approval, action links) use the
		// SSO cookie; a live code in their address would only wait there
		// to be copied.
		return WebLoginResult{Cookie: cookie, RedirectURL: target.String()}, nil
	}
	// A URL is seen by history, extensions and whatever script runs on the
	// page it opens, so it carries only a code that is spent within a
	// minute, never the 30-day token itself.
	// The code is bound to this browser: it is stored under a hash of the
	// code and the SSO cookie this response sets, so only a request that
	// carries that cookie can spend it. An attacker's own code sent to
	// someone else (a link to the landing page with it) signs nobody in
	// as the attacker: their browser has another cookie or none (login
	// CSRF, RFC 9700 §4.7.1, as the callback's binding cookie is).
	loginCode := service.NewSecret(32)
	if err := s.store.Identity().CreateWebLoginCode(ctx, &models.WebLoginCode{
		CodeHash: loginCodeHash(loginCode, cookie), UserID: user.ID, ExpiresAt: s.now().Add(LoginCodeTTL),
	}); err != nil {
		return WebLoginResult{}, err
	}
	q := target.Query()
	q.Set("login_code", loginCode)
	target.RawQuery = q.Encode()
	return WebLoginResult{Cookie: cookie, RedirectURL: target.String()}, nil
}

// actionPagesPath is where holdco serves the connector's link-only
// actions (billing.DashboardPath with ?action=, api/actionpages.go).
const actionPagesPath = "/dashboard"

// exchangesLoginCode reports whether the page a sign-in lands on may trade
// ?login_code= for a session: every page but holdco's own pages that
// authenticate with the SSO cookie alone (device approval, the action
// pages). The frontend's pages and holdco's landing page exchange it; a
// frontend served on holdco's origin keeps working.
func (s *Service) exchangesLoginCode(target *url.URL) bool {
	if !sameOrigin(target, s.cfg.PublicURL) {
		return true
	}
	switch {
	case target.Path == DevicePagePath:
		return false
	case target.Path == actionPagesPath && target.Query().Get("action") != "":
		return false
	case consolePage(target.Path):
		return false
	}
	return true
}

// WebSession is a web session token handed out by the login code exchange.
type WebSession struct {
	Token     string
	ExpiresAt time.Time
}

func errBadLoginCode() *models.Error {
	return models.Errorf(models.CodeBadRequest, "The login code is unknown, expired, already used or from a sign-in in another browser; sign in again.")
}

// loginCodeHash is the stored form of a login code bound to the SSO
// cookie (holdco_sso) set with it.
func loginCodeHash(code, cookie string) string { return service.HashSecret(code + "\x00" + cookie) }

// ExchangeLoginCode trades the one-time code of a browser sign-in for a
// web session token. cookie is the SSO cookie the request carries: the
// code is spent only with the cookie its sign-in set (the browser that
// signed in), and the first such attempt uses it up. A code with another
// cookie, or none, is unknown: it stays spendable by its own browser.
func (s *Service) ExchangeLoginCode(ctx context.Context, code, cookie string) (WebSession, error) {
	if code == "" || cookie == "" {
		return WebSession{}, errBadLoginCode()
	}
	now := s.now()
	c, err := s.store.Identity().ConsumeWebLoginCode(ctx, loginCodeHash(code, cookie), now)
	if errors.Is(err, models.ErrNotFound) {
		return WebSession{}, errBadLoginCode()
	}
	if err != nil {
		return WebSession{}, err
	}
	if now.After(c.ExpiresAt) {
		return WebSession{}, errBadLoginCode()
	}
	if _, err := s.store.Identity().GetUser(ctx, c.UserID); errors.Is(err, models.ErrNotFound) {
		return WebSession{}, errBadLoginCode() // the account was deleted meanwhile
	} else if err != nil {
		return WebSession{}, err
	}
	token, exp, err := s.issueWebSessionUntil(ctx, c.UserID)
	if err != nil {
		return WebSession{}, err
	}
	return WebSession{Token: token, ExpiresAt: exp}, nil
}

// signIn finds the user behind a provider identity or signs them up: a new
// user gets a conglomerate whose 3-day trial starts now. A mailbox that
// belonged to a deleted account cannot sign up again.
func (s *Service) signIn(ctx context.Context, id models.Identity) (models.User, error) {
	user, err := s.store.Identity().GetUserBySubject(ctx, id.Issuer, id.Subject)
	if err == nil {
		return user, nil
	}
	if !errors.Is(err, models.ErrNotFound) {
		return models.User{}, err
	}
	mailbox := NormalizeMailbox(id.Email)
	deleted, err := s.store.Identity().MailboxOfDeletedUser(ctx, mailbox)
	if err != nil {
		return models.User{}, err
	}
	if deleted {
		return models.User{}, models.Errorf(models.CodeForbidden, "An account with this email address was deleted; it cannot sign up again.").With("reason", ReasonAccountDeleted)
	}
	name := strings.TrimSpace(id.Name)
	if name == "" {
		name, _, _ = strings.Cut(id.Email, "@")
	}
	issuer, subject := id.Issuer, id.Subject
	user, _, err = s.store.Identity().CreateUserWithConglomerate(ctx, models.User{
		Email: id.Email, NormalizedEmail: mailbox, Name: name, Issuer: &issuer, Subject: &subject,
	}, name+"'s conglomerate")
	if errors.Is(err, models.ErrDuplicate) {
		// A concurrent first sign-in of the same identity won the race.
		return s.store.Identity().GetUserBySubject(ctx, id.Issuer, id.Subject)
	}
	return user, err
}

// safeRedirect accepts a relative path or an absolute URL on the frontend's
// or holdco's origin; anything else would make sign-in an open redirect.
// Tenant sites are never a target, even if an operator configured them on
// one of those origins: their scripts are not holdco's.
func (s *Service) safeRedirect(raw string) (string, error) {
	target := s.cfg.FrontendURL + "/"
	if raw != "" {
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			return "", models.Errorf(models.CodeInvalidArgument, "redirect_url is not a URL.").WithField("redirect_url")
		case !u.IsAbs() && u.Host == "" && strings.HasPrefix(u.Path, "/") && !strings.HasPrefix(raw, "//"):
			target = s.cfg.FrontendURL + u.RequestURI()
		case u.IsAbs() && u.Opaque == "" && u.User == nil && (sameOrigin(u, s.cfg.FrontendURL) || sameOrigin(u, s.cfg.PublicURL)):
			u.Fragment = ""
			target = u.String()
		default:
			return "", models.Errorf(models.CodeInvalidArgument, "redirect_url must be a page of %s or of holdco.", s.cfg.FrontendURL).WithField("redirect_url")
		}
	}
	t, err := url.Parse(target)
	if err != nil || (s.cfg.SitesURL != "" && sameOrigin(t, s.cfg.SitesURL)) || underSites(t.Path) {
		return "", models.Errorf(models.CodeInvalidArgument, "redirect_url must be a page of %s or of holdco, not a company site.", s.cfg.FrontendURL).WithField("redirect_url")
	}
	return target, nil
}

// IsOwnOrigin reports whether a browser's Origin header names holdco's own
// origin (the public URL); "null" (a sandboxed page) and every other origin
// do not.
func (s *Service) IsOwnOrigin(origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.IsAbs() && u.Path == "" && sameOrigin(u, s.cfg.PublicURL)
}

// legacySitesPath is where company sites were once served on the API's
// origin; a sign-in never lands there.
const legacySitesPath = "/sites"

// underSites reports whether a browser would open p under legacySitesPath:
// as it reads the path, with dot segments resolved and '\' as '/'
// (/./sites/x, /a/../sites, /.\sites).
func underSites(p string) bool {
	p = path.Clean("/" + strings.ReplaceAll(p, "\\", "/"))
	return p == legacySitesPath || strings.HasPrefix(p, legacySitesPath+"/")
}

// sameOrigin reports whether u has the scheme and host (default port
// filled in) of the absolute URL base: one rule with the start-up check
// that keeps the sites origin apart (origin.Same).
func sameOrigin(u *url.URL, base string) bool { return origin.Same(u.String(), base) }

// Logout ends every web session of the token's user. It returns where to
// send the browser: the provider's logout (when it has one), which returns
// to the frontend login page, or that page directly. A bad token still lands
// on the login page.
func (s *Service) Logout(ctx context.Context, token string) string {
	login := s.LoginPageURL("")
	claims, err := s.parseWebJWT(token, true)
	if err != nil {
		return login
	}
	return s.endSessions(ctx, claims.Subject)
}

// endSessions revokes every web session of the user and returns where the
// browser goes next: the provider's logout, else the login page.
func (s *Service) endSessions(ctx context.Context, userID string) string {
	login := s.LoginPageURL("")
	if err := s.store.Identity().RevokeWebSessionsOfUser(ctx, userID, s.now()); err != nil {
		s.logger.ErrorContext(ctx, "logout: revoke sessions", "error", err)
		return login
	}
	s.sessions.DeleteWhere(func(p *service.Principal) bool { return p != nil && p.UserID == userID })
	if end := s.idp.EndSessionURL(ctx, s.cfg.PublicURL+WebCallbackPath, login); end != "" {
		return end
	}
	return login
}

// LogoutClearsCookie decides whether a GET /auth/logout may clear the
// browser's SSO cookie. Any page can send a browser to a GET, so a
// navigation from elsewhere (a tenant site, say) must not sign the user
// out of holdco's pages: the cookie is cleared when the request comes from
// holdco's own page or the browser's address bar (fromOwnPage), when the
// token (expired or not) was issued to the cookie's own user, or when the
// cookie holds no live session anyway (nothing to protect). token is the
// logout's ?token=, cookie the SSO cookie's value.
func (s *Service) LogoutClearsCookie(ctx context.Context, token, cookie string, fromOwnPage bool) bool {
	if fromOwnPage || cookie == "" {
		return true
	}
	p, err := s.SessionFromCookie(ctx, cookie)
	if err != nil {
		return true
	}
	claims, err := s.parseWebJWT(token, true)
	return err == nil && claims.Subject == p.UserID
}

// SessionFromCookie authenticates the SSO cookie of holdco's own pages
// (device approval, action pages): an opaque page session id, looked up in
// the database on every request so that a logout on any replica ends it at
// once. A web session JWT (a REST bearer) is not a page session.
func (s *Service) SessionFromCookie(ctx context.Context, cookie string) (service.Principal, error) {
	if !strings.HasPrefix(cookie, pageSessionPrefix) || len(cookie) > 100 {
		return service.Principal{}, service.ErrUnauthenticated()
	}
	hash := service.HashSecret(cookie)
	sess, err := s.store.Identity().GetWebSessionByCookieHash(ctx, hash)
	if errors.Is(err, models.ErrNotFound) {
		return service.Principal{}, service.ErrUnauthenticated()
	}
	if err != nil {
		return service.Principal{}, err
	}
	if !sess.Live(s.now()) || sess.CookieHash == nil || !service.EqualHash(*sess.CookieHash, hash) {
		return service.Principal{}, service.ErrUnauthenticated()
	}
	p, err := s.sessionPrincipal(ctx, sess)
	if err != nil {
		return service.Principal{}, err
	}
	if p == nil {
		return service.Principal{}, service.ErrUnauthenticated()
	}
	return *p, nil
}

// LoginURL is holdco's sign-in start for a page of holdco's (a path on
// the API's origin) that needs a session.
func (s *Service) LoginURL(returnTo string) string {
	if strings.HasPrefix(returnTo, "/") && !strings.HasPrefix(returnTo, "//") {
		returnTo = s.cfg.PublicURL + returnTo
	}
	return fmt.Sprintf("%s/auth/login?redirect_url=%s", s.cfg.PublicURL, url.QueryEscape(returnTo))
}

// ReasonAccountDeleted tells sign-in pages why a sign-in was refused.
const ReasonAccountDeleted = "account_deleted"

// LoginPageURL is the frontend login page, with ?error= when reason is set.
func (s *Service) LoginPageURL(reason string) string {
	u := s.cfg.FrontendURL + "/login"
	if reason != "" {
		u += "?error=" + url.QueryEscape(reason)
	}
	return u
}

// RefusalReason is the short reason of a failed sign-in for ?error=.
func RefusalReason(err error) string {
	var de *models.Error
	if errors.As(err, &de) {
		if r, ok := de.Extra["reason"].(string); ok {
			return r
		}
	}
	return "sign_in_failed"
}
