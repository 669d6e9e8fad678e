package oauth

import (
	"context"
	"errors"
	"strings"

	"holdco/models"
	"holdco/service"
	"holdco/service/identity"
)

// Session is a sign-in on the authorization server's origin (its own
// cookie; never the REST API's).
type Session struct {
	ID   string
	User models.User
}

// BeginSignIn returns where the browser signs in (the identity provider),
// coming back to the authorization server's callback and then to returnTo,
// a path of the authorization endpoint, with the cookie that binds the
// sign-in to the browser (identity.SignInStart: the adapter sets it).
func (s *Service) BeginSignIn(ctx context.Context, returnTo string, switchAccount bool) (identity.SignInStart, error) {
	if s.identity == nil {
		return identity.SignInStart{}, models.Errorf(models.CodeUpstreamUnavailable, "Sign-in is not available on this process.")
	}
	if !strings.HasPrefix(returnTo, AuthorizePath+"?") {
		returnTo = AuthorizePath
	}
	return s.identity.BeginAuthServerLogin(ctx, s.cfg.Issuer+CallbackPath, returnTo, switchAccount)
}

// CompleteSignIn finishes the sign-in: a new session (its raw cookie
// value) and the path to return to. binding is the browser's binding
// cookie of this state (identity.SignInCookieName); without the right one
// nobody is signed in.
func (s *Service) CompleteSignIn(ctx context.Context, code, state, binding string) (cookie, returnTo string, err error) {
	if s.identity == nil {
		return "", "", models.Errorf(models.CodeUpstreamUnavailable, "Sign-in is not available on this process.")
	}
	user, returnTo, err := s.identity.CompleteAuthServerLogin(ctx, s.cfg.Issuer+CallbackPath, code, state, binding)
	if err != nil {
		return "", "", err
	}
	if !strings.HasPrefix(returnTo, AuthorizePath+"?") {
		returnTo = AuthorizePath
	}
	raw, hash := service.NewCredential(sessionPrefix)
	now := s.now()
	if err := s.store.OAuth().CreateOAuthSession(ctx, &models.OAuthSession{TokenHash: hash, UserID: user.ID, CreatedAt: now, ExpiresAt: now.Add(SessionTTL)}); err != nil {
		return "", "", err
	}
	return raw, returnTo, nil
}

// SessionFromCookie authenticates the authorization server's cookie.
func (s *Service) SessionFromCookie(ctx context.Context, raw string) (Session, error) {
	if !strings.HasPrefix(raw, sessionPrefix) || len(raw) > 100 {
		return Session{}, errNotSignedIn()
	}
	hash := service.HashSecret(raw)
	sess, err := s.store.OAuth().GetOAuthSessionByHash(ctx, hash)
	if errors.Is(err, models.ErrNotFound) {
		return Session{}, errNotSignedIn()
	}
	if err != nil {
		return Session{}, err
	}
	if sess.RevokedAt != nil || !s.now().Before(sess.ExpiresAt) || !service.EqualHash(sess.TokenHash, hash) {
		return Session{}, errNotSignedIn()
	}
	user, err := s.store.Identity().GetUser(ctx, sess.UserID)
	if errors.Is(err, models.ErrNotFound) {
		return Session{}, errNotSignedIn()
	}
	if err != nil {
		return Session{}, err
	}
	return Session{ID: sess.ID, User: user}, nil
}

// EndSession signs the authorization server's session out (switch
// account).
func (s *Service) EndSession(ctx context.Context, sess Session) error {
	return s.store.OAuth().RevokeOAuthSession(ctx, sess.ID, s.now())
}

// consentForm is what the consent page's form carries, sealed: the
// request as received, tied to the session that saw the page.
type consentForm struct {
	service.Expiring
	SessionID string `json:"s"`
	Query     string `json:"q"`
}

const purposeConsent = "oauth-consent"

// ConsentToken seals the request shown on the consent page to the session.
func (s *Service) ConsentToken(sess Session, req AuthorizationRequest) (string, error) {
	return s.sign.Seal(purposeConsent, consentForm{Expiring: service.Expiring{Exp: s.now().Add(consentRequestTTL).Unix()}, SessionID: sess.ID, Query: req.Query})
}

// CSRFToken is the consent form's anti-forgery token of a session.
func (s *Service) CSRFToken(sess Session) string { return s.sign.Derive("oauth-csrf", sess.ID) }

// OpenConsent checks a submitted consent form (the sealed request and the
// CSRF token against the session) and returns the request, checked again
// by every rule.
func (s *Service) OpenConsent(ctx context.Context, sess Session, sealed, csrf string) (AuthorizationRequest, error) {
	var f consentForm
	if err := s.sign.Open(purposeConsent, sealed, &f); err != nil || f.SessionID != sess.ID || !service.EqualHash(csrf, s.CSRFToken(sess)) {
		return AuthorizationRequest{}, pageError(ErrInvalidRequest, "This consent form is not valid for your session; start again from the assistant.")
	}
	if f.Expired(s.now()) {
		return AuthorizationRequest{}, pageError(ErrInvalidRequest, "This consent page expired; start again from the assistant.")
	}
	return s.ParseAuthorization(ctx, f.Query)
}

// OpenSwitch checks a switch-account form and returns the request's query
// to come back to after signing in again.
func (s *Service) OpenSwitch(sess Session, sealed, csrf string) (string, error) {
	var f consentForm
	if err := s.sign.Open(purposeConsent, sealed, &f); err != nil || f.SessionID != sess.ID || !service.EqualHash(csrf, s.CSRFToken(sess)) {
		return "", pageError(ErrInvalidRequest, "This form is not valid for your session; start again from the assistant.")
	}
	return AuthorizePath + "?" + f.Query, nil
}
