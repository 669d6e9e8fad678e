package oauth

import (
	"errors"
	"net/http"
	"net/url"

	"holdco/models"
	"holdco/service/identity"
	authz "holdco/service/oauth"
)

// The session cookie of the authorization server's origin. Over https it
// takes the __Host- prefix (Secure, Path=/, no Domain: this origin only).
func (s *server) cookieName() string {
	if s.secure {
		return "__Host-holdco_oauth_session"
	}
	return "holdco_oauth_session"
}

func (s *server) setSession(w http.ResponseWriter, raw string) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: raw, Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(authz.SessionTTL.Seconds())})
}

func (s *server) clearSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

// setSignInBinding hands the browser the cookie that binds a sign-in to
// it (login CSRF, RFC 9700 §4.7.1); the callback reads it back.
func (s *server) setSignInBinding(w http.ResponseWriter, start identity.SignInStart) {
	http.SetCookie(w, &http.Cookie{Name: identity.SignInCookieName(start.State, s.secure), Value: start.Binding, Path: "/",
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode, MaxAge: int(identity.SignInCookieTTL.Seconds())})
}

// signInBinding reads the binding cookie of the callback's state ("" when
// the browser has none) and clears it: a binding serves one callback.
func (s *server) signInBinding(w http.ResponseWriter, r *http.Request, state string) string {
	name := identity.SignInCookieName(state, s.secure)
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode, MaxAge: -1})
	return c.Value
}

// session is the signed-in user of the request, if any.
func (s *server) session(r *http.Request) (authz.Session, bool, error) {
	c, err := r.Cookie(s.cookieName())
	if err != nil || c.Value == "" {
		return authz.Session{}, false, nil
	}
	sess, err := s.svc.SessionFromCookie(r.Context(), c.Value)
	if models.IsCode(err, models.CodeUnauthenticated) {
		return authz.Session{}, false, nil
	}
	return sess, err == nil, err
}

// authorize is the authorization endpoint: check the request, sign the
// user in on this origin if needed, then issue a code at once when consent
// is current, or show the consent page.
func (s *server) authorize(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	if !s.admit(w, r, authz.LimitAuthorizePerAddr, s.limits.AuthorizePerAddr, clientAddr(r), true) ||
		!s.admit(w, r, authz.LimitAuthorizePerClient, s.limits.AuthorizePerClient, r.URL.Query().Get("client_id"), true) {
		return
	}
	req, err := s.svc.ParseAuthorization(ctx, r.URL.RawQuery)
	if err != nil {
		s.authorizeFailed(w, r, err)
		return
	}
	sess, signedIn, err := s.session(r)
	if err != nil {
		s.authorizeFailed(w, r, err)
		return
	}
	current := false
	if signedIn {
		if current, err = s.svc.ConsentCurrent(ctx, sess.User.ID, req); err != nil {
			s.authorizeFailed(w, r, err)
			return
		}
	}
	switch {
	case req.PromptNone && !current:
		s.authorizeFailed(w, r, s.svc.RefusePromptNone(ctx, req, signedIn))
	case !signedIn:
		start, err := s.svc.BeginSignIn(ctx, authz.AuthorizePath+"?"+r.URL.RawQuery, false)
		if err != nil {
			s.authorizeFailed(w, r, err)
			return
		}
		s.setSignInBinding(w, start)
		http.Redirect(w, r, start.URL, http.StatusFound)
	case current:
		u, err := s.svc.IssueCode(ctx, sess.User.ID, req)
		if err != nil {
			s.authorizeFailed(w, r, err)
			return
		}
		http.Redirect(w, r, u, http.StatusFound)
	default:
		s.renderConsent(w, r, sess, req)
	}
}

func (s *server) renderConsent(w http.ResponseWriter, r *http.Request, sess authz.Session, req authz.AuthorizationRequest) {
	sealed, err := s.svc.ConsentToken(sess, req)
	if err != nil {
		s.authorizeFailed(w, r, err)
		return
	}
	d := consentData{Name: visibleName(req.Client.Name), Verified: req.Client.Verified(), RedirectURI: asciiURL(req.RedirectURI), ReceiverOrigin: origin(req.RedirectURI),
		Email: sess.User.Email, Request: sealed, CSRF: s.svc.CSRFToken(sess)}
	if req.Client.Kind == authz.ClientMetadata {
		if u, err := url.Parse(req.Client.ID); err == nil {
			d.ClientHost = asciiHost(u.Host)
		}
	}
	if port, ok := req.Loopback(); ok {
		d.LoopbackPort = port
	}
	pageHeaders(w, "'self' "+origin(req.RedirectURI))
	w.WriteHeader(http.StatusOK)
	_ = consentPage.Execute(w, d)
}

// sessionForm reads a form of the consent page and the session that must
// have posted it; a failure is answered on a page.
func (s *server) sessionForm(w http.ResponseWriter, r *http.Request) (url.Values, authz.Session, bool) {
	form, ferr := readForm(w, r)
	if ferr != nil {
		renderMessage(w, http.StatusBadRequest, messageData{Title: "Something went wrong", Message: ferr.Description, Code: ferr.Code})
		return nil, authz.Session{}, false
	}
	sess, signedIn, err := s.session(r)
	if err != nil {
		s.authorizeFailed(w, r, err)
		return nil, authz.Session{}, false
	}
	if !signedIn {
		renderMessage(w, http.StatusBadRequest, messageData{Title: "Signed out", Message: "You are no longer signed in; start again from the assistant.", Code: authz.ErrInvalidRequest})
		return nil, authz.Session{}, false
	}
	return form, sess, true
}

// consent takes the consent page's Allow or Deny.
func (s *server) consent(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	form, sess, ok := s.sessionForm(w, r)
	if !ok {
		return
	}
	req, err := s.svc.OpenConsent(ctx, sess, form.Get("request"), form.Get("csrf"))
	if err != nil {
		s.authorizeFailed(w, r, err)
		return
	}
	switch form.Get("decision") {
	case "allow":
		u, err := s.svc.Approve(ctx, sess.User.ID, req)
		if err != nil {
			s.authorizeFailed(w, r, err)
			return
		}
		http.Redirect(w, r, u, http.StatusSeeOther)
	case "deny":
		s.authorizeFailed(w, r, s.svc.Deny(ctx, req))
	default:
		renderMessage(w, http.StatusBadRequest, messageData{Title: "Something went wrong", Message: "Choose Allow or Deny.", Code: authz.ErrInvalidRequest})
	}
}

// switchAccount signs the authorization server's session out and sends
// the browser to the identity provider to sign in afresh, then back to the
// same authorization request. The hop goes through a page (not a redirect
// of the form's POST), so the consent page's form-action stays its own
// origin and the client's.
func (s *server) switchAccount(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	form, sess, ok := s.sessionForm(w, r)
	if !ok {
		return
	}
	returnTo, err := s.svc.OpenSwitch(sess, form.Get("request"), form.Get("csrf"))
	if err != nil {
		s.authorizeFailed(w, r, err)
		return
	}
	if err := s.svc.EndSession(ctx, sess); err != nil {
		s.authorizeFailed(w, r, err)
		return
	}
	s.clearSession(w)
	start, err := s.svc.BeginSignIn(ctx, returnTo, true)
	if err != nil {
		s.authorizeFailed(w, r, err)
		return
	}
	s.setSignInBinding(w, start)
	renderMessage(w, http.StatusOK, messageData{Title: "Switch account", Message: "You are signed out of the authorization server. Sign in with the account the assistant should use.", Refresh: start.URL})
}

// callback is the identity provider's redirect back to this origin.
func (s *server) callback(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	q := r.URL.Query()
	if q.Get("error") != "" || q.Get("code") == "" {
		renderMessage(w, http.StatusBadRequest, messageData{Title: "Sign-in did not finish", Message: "The sign-in was cancelled or failed; start again from the assistant.", Code: authz.ErrAccessDenied})
		return
	}
	raw, returnTo, err := s.svc.CompleteSignIn(ctx, q.Get("code"), q.Get("state"), s.signInBinding(w, r, q.Get("state")))
	if err != nil {
		var de *models.Error
		if errors.As(err, &de) && de.Code != models.CodeInternal {
			renderMessage(w, http.StatusBadRequest, messageData{Title: "Sign-in did not finish", Message: de.Detail, Code: string(de.Code)})
			return
		}
		s.authorizeFailed(w, r, err)
		return
	}
	s.setSession(w, raw)
	http.Redirect(w, r, returnTo, http.StatusFound)
}

// authorizeFailed answers a browser request that failed: back to the
// client when the rules allow it (with error, state and iss), otherwise
// on a page of the service.
func (s *server) authorizeFailed(w http.ResponseWriter, r *http.Request, err error) {
	var ae *authz.AuthorizeError
	if errors.As(err, &ae) {
		if ae.Redirect {
			http.Redirect(w, r, s.svc.ErrorRedirect(ae), http.StatusFound)
			return
		}
		title, status := "This authorization request cannot be used", http.StatusBadRequest
		if ae.Code == authz.ErrAccessDenied {
			title, status = "Access denied", http.StatusOK
		}
		renderMessage(w, status, messageData{Title: title, Message: ae.Description + " You can close this window.", Code: ae.Code})
		return
	}
	if models.IsCode(err, models.CodeUpstreamUnavailable) {
		renderMessage(w, http.StatusServiceUnavailable, messageData{Title: "Sign-in unavailable", Message: "The sign-in provider cannot be reached right now; retry shortly.", Code: authz.ErrTemporarilyUnavailable})
		return
	}
	s.logger.ErrorContext(r.Context(), "oauth: authorization failed", "path", r.URL.Path, "error", err)
	renderMessage(w, http.StatusInternalServerError, messageData{Title: "Something went wrong", Message: "The authorization server failed; retry shortly.", Code: authz.ErrServerError})
}
