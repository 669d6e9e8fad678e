package service

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"holdco/models"
	"holdco/providers/oidcrp"
)

// Paths of holdco's own callbacks, registered with the identity provider.
const (
	WebCallbackPath = "/auth/callback"
	CLICallbackPath = "/auth/cli/callback"
	loginStateTTL   = 10 * time.Minute
)

// Sealing purposes: a state signed for one flow never opens in another.
const (
	purposeWebLogin = "web-login"
	purposeCLILogin = "cli-login"
)

type webLoginState struct {
	expiring
	Nonce       string `json:"n"`
	RedirectURL string `json:"r"`
	Ref         string `json:"ref,omitempty"`
}

// BeginWebLogin returns the identity provider URL that starts a browser
// sign-in. redirectURL (where the frontend wants to land afterwards) must be
// on the frontend's or holdco's own origin.
func (s *Service) BeginWebLogin(ctx context.Context, redirectURL, ref, screenHint string) (string, error) {
	target, err := s.safeRedirect(redirectURL)
	if err != nil {
		return "", err
	}
	st := webLoginState{expiring: expiring{Exp: s.now().Add(loginStateTTL).Unix()}, Nonce: newSecret(16), RedirectURL: target, Ref: ref}
	state, err := s.sign.Seal(purposeWebLogin, st)
	if err != nil {
		return "", err
	}
	return s.idpAuthURL(ctx, WebCallbackPath, purposeWebLogin, state, st.Nonce, screenHint)
}

// idpAuthURL builds the provider URL. holdco's PKCE verifier towards the
// provider is derived from the signed state's nonce, so no cookie or row is
// needed to finish the flow.
func (s *Service) idpAuthURL(ctx context.Context, callbackPath, purpose, state, nonce, screenHint string) (string, error) {
	params := map[string]string{}
	if screenHint == "sign-up" || screenHint == "sign-in" {
		params["screen_hint"] = screenHint
	}
	u, err := s.idp.AuthURL(ctx, s.cfg.PublicURL+callbackPath, state, PKCEChallenge(s.idpVerifier(purpose, nonce)), params)
	if err != nil {
		return "", models.Errorf(models.CodeUpstreamUnavailable, "The sign-in provider cannot be reached right now; retry shortly.").Wrap(err)
	}
	return u, nil
}

func (s *Service) idpVerifier(purpose, nonce string) string {
	return s.sign.derive("idp-pkce:"+purpose, nonce)
}

// WebLoginResult is what the browser callback hands the frontend.
type WebLoginResult struct {
	Token       string // web session JWT
	RedirectURL string // frontend address, with the token in its fragment
}

// CompleteWebLogin handles the provider's redirect to /auth/callback.
func (s *Service) CompleteWebLogin(ctx context.Context, code, state string) (WebLoginResult, error) {
	var st webLoginState
	if err := s.sign.Open(purposeWebLogin, state, &st); err != nil {
		return WebLoginResult{}, models.Errorf(models.CodeBadRequest, "The sign-in state is missing or was tampered with; start the sign-in again.")
	}
	if st.expired(s.now()) {
		return WebLoginResult{}, models.Errorf(models.CodeBadRequest, "The sign-in took too long; start it again.")
	}
	id, err := s.idp.Exchange(ctx, s.cfg.PublicURL+WebCallbackPath, code, s.idpVerifier(purposeWebLogin, st.Nonce))
	if err != nil {
		return WebLoginResult{}, models.Errorf(models.CodeBadRequest, "The sign-in provider did not accept the sign-in; start it again.").Wrap(err)
	}
	user, err := s.signIn(ctx, id)
	if err != nil {
		return WebLoginResult{}, err
	}
	token, err := s.issueWebSession(ctx, user.ID)
	if err != nil {
		return WebLoginResult{}, err
	}
	return WebLoginResult{Token: token, RedirectURL: st.RedirectURL + "#session_token=" + url.QueryEscape(token)}, nil
}

// signIn finds the user behind a provider identity or signs them up: a new
// user gets a conglomerate whose 3-day trial starts now. A mailbox that
// belonged to a deleted account cannot sign up again.
func (s *Service) signIn(ctx context.Context, id oidcrp.Identity) (models.User, error) {
	user, err := s.store.GetUserBySubject(ctx, id.Issuer, id.Subject)
	if err == nil {
		return user, nil
	}
	if !errors.Is(err, models.ErrNotFound) {
		return models.User{}, err
	}
	mailbox := NormalizeMailbox(id.Email)
	deleted, err := s.store.MailboxOfDeletedUser(ctx, mailbox)
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
	user, _, err = s.store.CreateUserWithConglomerate(ctx, models.User{
		Email: id.Email, NormalizedEmail: mailbox, Name: name, Issuer: &issuer, Subject: &subject,
	}, name+"'s conglomerate")
	if errors.Is(err, models.ErrDuplicate) {
		// A concurrent first sign-in of the same identity won the race.
		return s.store.GetUserBySubject(ctx, id.Issuer, id.Subject)
	}
	return user, err
}

// safeRedirect accepts a relative path or an absolute URL on the frontend's
// or holdco's origin; anything else would make sign-in an open redirect.
func (s *Service) safeRedirect(raw string) (string, error) {
	if raw == "" {
		return s.cfg.FrontendURL + "/", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", models.Errorf(models.CodeInvalidArgument, "redirect_url is not a URL.").WithField("redirect_url")
	}
	if !u.IsAbs() && u.Host == "" && strings.HasPrefix(u.Path, "/") && !strings.HasPrefix(raw, "//") {
		return s.cfg.FrontendURL + u.RequestURI(), nil
	}
	for _, allowed := range []string{s.cfg.FrontendURL, s.cfg.PublicURL} {
		a, _ := url.Parse(allowed)
		if u.Scheme == a.Scheme && u.Host == a.Host {
			u.Fragment = ""
			return u.String(), nil
		}
	}
	return "", models.Errorf(models.CodeInvalidArgument, "redirect_url must be on %s.", s.cfg.FrontendURL).WithField("redirect_url")
}

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
	if err := s.store.RevokeWebSessionsOfUser(ctx, claims.Subject, s.now()); err != nil {
		s.logger.ErrorContext(ctx, "logout: revoke sessions", "error", err)
		return login
	}
	s.sessions.DeleteWhere(func(p Principal) bool { return p.UserID == claims.Subject })
	if end := s.idp.EndSessionURL(ctx, s.cfg.PublicURL+WebCallbackPath, login); end != "" {
		return end
	}
	return login
}

// SessionFromCookie authenticates the SSO cookie of holdco's own pages
// (device approval); it is the web session JWT.
func (s *Service) SessionFromCookie(ctx context.Context, token string) (Principal, error) {
	if token == "" || credentialKind(token) != "" {
		return Principal{}, errUnauthenticated
	}
	return s.authenticateWebJWT(ctx, token)
}

// LoginURL is holdco's sign-in start for a page that needs a session.
func (s *Service) LoginURL(returnTo string) string {
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
