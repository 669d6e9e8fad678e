package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"holdco/models"
	"holdco/service"
)

// AuthorizationRequest is an authorization request that passed every rule
// (2–9): the client, the redirect URI as sent, and what the code will be
// bound to.
type AuthorizationRequest struct {
	Client        Client
	RedirectURI   string
	State         string
	CodeChallenge string
	Resource      string
	Scope         string
	PromptNone    bool
	// Query is the request as received; the consent form and sign-in
	// carry it and parse it again.
	Query string
}

// Loopback reports the port of a redirect to this computer (http on a
// loopback host), or "" for a redirect elsewhere.
func (r AuthorizationRequest) Loopback() (port string, ok bool) {
	u, err := url.Parse(r.RedirectURI)
	if err != nil || u.Scheme != "http" || !isLoopbackHost(u.Hostname()) {
		return "", false
	}
	port = u.Port()
	if port == "" {
		port = "80"
	}
	return port, true
}

// maxAuthorizeQuery bounds an authorization request (it travels in the
// sign-in state and the consent form).
const maxAuthorizeQuery = 16 << 10

// params the authorization endpoint reads; each may appear once.
var authorizeParams = []string{"client_id", "redirect_uri", "response_type", "response_mode", "state", "code_challenge",
	"code_challenge_method", "scope", "resource", "prompt", "max_age", "nonce"}

// ParseAuthorization checks an authorization request (rules 2–9). Errors
// before the client and redirect URI are known are never redirected; later
// ones are, unless the client registered itself and no user has approved
// the redirect URI yet (rule 8).
func (s *Service) ParseAuthorization(ctx context.Context, rawQuery string) (AuthorizationRequest, error) {
	if len(rawQuery) > maxAuthorizeQuery {
		return AuthorizationRequest{}, pageError(ErrInvalidRequest, "The authorization request is too long.")
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return AuthorizationRequest{}, pageError(ErrInvalidRequest, "The authorization request's query is malformed.")
	}
	for k, v := range q {
		if len(v) > 1 && slices.Contains(authorizeParams, k) {
			if k == "resource" {
				return AuthorizationRequest{}, pageError(ErrInvalidTarget, "Name one resource: the connector.")
			}
			return AuthorizationRequest{}, pageError(ErrInvalidRequest, fmt.Sprintf("%s appears more than once.", k))
		}
		for _, one := range v {
			if service.CheckText(one, false) != nil {
				return AuthorizationRequest{}, pageError(ErrInvalidRequest, fmt.Sprintf("%s holds characters that are not allowed.", k))
			}
		}
	}
	client, err := s.resolveClient(ctx, q.Get("client_id"))
	if err != nil {
		var oe *Error
		if errors.As(err, &oe) {
			return AuthorizationRequest{}, authorizeError(oe)
		}
		return AuthorizationRequest{}, err
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" {
		return AuthorizationRequest{}, pageError(ErrInvalidRequest, "redirect_uri is required.")
	}
	if _, ok := client.matchRedirect(redirect); !ok {
		return AuthorizationRequest{}, pageError(ErrInvalidRequest, "redirect_uri is not one of the client's registered redirect URIs.")
	}
	req := AuthorizationRequest{Client: client, RedirectURI: redirect, State: q.Get("state"), Query: rawQuery}
	refuse := func(code, description string) (AuthorizationRequest, error) {
		e := &AuthorizeError{Code: code, Description: description, RedirectURI: redirect, State: req.State}
		ok, err := s.mayRedirect(ctx, client, redirect)
		if err != nil {
			return AuthorizationRequest{}, err
		}
		e.Redirect = ok
		return AuthorizationRequest{}, e
	}
	switch rt := q.Get("response_type"); {
	case rt == "":
		return refuse(ErrInvalidRequest, "response_type is required (code).")
	case rt != "code":
		return refuse(ErrUnsupportedResponseType, "Only response_type=code is supported.")
	}
	if rm, ok := q["response_mode"]; ok && rm[0] != "query" {
		return refuse(ErrInvalidRequest, "response_mode must be query.")
	}
	if req.State == "" {
		return refuse(ErrInvalidRequest, "state is required.")
	}
	if q.Get("code_challenge_method") != "S256" {
		return refuse(ErrInvalidRequest, "code_challenge_method=S256 is required (PKCE).")
	}
	if req.CodeChallenge = q.Get("code_challenge"); !service.ValidChallenge(req.CodeChallenge) {
		return refuse(ErrInvalidRequest, "code_challenge must be an S256 challenge (43 characters of base64url).")
	}
	for _, sc := range strings.Fields(q.Get("scope")) {
		if sc != Scope && sc != "openid" && sc != "offline_access" {
			return refuse(ErrInvalidScope, fmt.Sprintf("Unknown scope %q; the scope is %s.", sc, Scope))
		}
	}
	req.Scope = Scope
	res, ok := s.checkResource(q.Get("resource"))
	if !ok {
		return refuse(ErrInvalidTarget, res)
	}
	req.Resource = res
	if _, ok := q["max_age"]; ok {
		return refuse(ErrInvalidRequest, "max_age is not supported.")
	}
	if p, ok := q["prompt"]; ok {
		if p[0] != "none" {
			return refuse(ErrInvalidRequest, "prompt may only be none.")
		}
		req.PromptNone = true
	}
	return req, nil
}

// checkResource applies rule 4: the connector, with or without a trailing
// slash; absent or empty binds to the connector. ok false: the
// description of the refusal.
func (s *Service) checkResource(r string) (string, bool) {
	if r == "" || r == s.cfg.Resource || r == s.cfg.Resource+"/" {
		return s.cfg.Resource, true
	}
	return "resource must be the connector, " + s.cfg.Resource + ".", false
}

// mayRedirect says whether an error may be sent to the redirect URI:
// always for a pre-registered client, for a self-registered one only once
// a user has approved that redirect URI.
func (s *Service) mayRedirect(ctx context.Context, c Client, redirect string) (bool, error) {
	if c.Verified() {
		return true, nil
	}
	registered, _ := c.matchRedirect(redirect)
	return s.store.OAuth().OAuthRedirectApproved(ctx, c.ID, registered)
}

func pageError(code, description string) *AuthorizeError {
	return &AuthorizeError{Code: code, Description: description}
}

// RefusePromptNone is the answer to prompt=none when the user must sign
// in or consent: login_required or consent_required, redirected when
// allowed (rule 7), else shown on the service page (rule 8).
func (s *Service) RefusePromptNone(ctx context.Context, req AuthorizationRequest, signedIn bool) error {
	code, description := ErrLoginRequired, "The user is not signed in to the authorization server."
	if signedIn {
		code, description = ErrConsentRequired, "The user has not approved this assistant for this redirect URI."
	}
	ok, err := s.mayRedirect(ctx, req.Client, req.RedirectURI)
	if err != nil {
		return err
	}
	return &AuthorizeError{Code: code, Description: description, Redirect: ok, RedirectURI: req.RedirectURI, State: req.State}
}

// Deny is the user's Deny: access_denied, redirected when allowed (rule 8).
func (s *Service) Deny(ctx context.Context, req AuthorizationRequest) error {
	ok, err := s.mayRedirect(ctx, req.Client, req.RedirectURI)
	if err != nil {
		return err
	}
	return &AuthorizeError{Code: ErrAccessDenied, Description: "The user denied access.", Redirect: ok, RedirectURI: req.RedirectURI, State: req.State}
}

// ConsentCurrent reports whether the user approved the client for this
// redirect URI, its current redirect list and this consent page's version
// (rule 10).
func (s *Service) ConsentCurrent(ctx context.Context, userID string, req AuthorizationRequest) (bool, error) {
	c, err := s.store.OAuth().GetOAuthConsent(ctx, userID, req.Client.ID)
	if errors.Is(err, models.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	registered, _ := req.Client.matchRedirect(req.RedirectURI)
	fresh := !c.ApprovedAt.Before(req.Client.CreatedAt) // a new registration under the same id
	return fresh && c.RedirectURI == registered && c.RedirectSet == req.Client.redirectSet() && c.Version == ConsentVersion, nil
}

// Approve records the user's consent (the last approved redirect URI) and
// returns the redirect carrying a fresh code.
func (s *Service) Approve(ctx context.Context, userID string, req AuthorizationRequest) (string, error) {
	registered, _ := req.Client.matchRedirect(req.RedirectURI)
	if err := s.store.OAuth().SaveOAuthConsent(ctx, models.OAuthConsent{UserID: userID, ClientID: req.Client.ID, ClientName: req.Client.Name,
		RedirectURI: registered, RedirectSet: req.Client.redirectSet(), Version: ConsentVersion, ApprovedAt: s.now()}); err != nil {
		return "", err
	}
	return s.IssueCode(ctx, userID, req)
}

// IssueCode mints a single-use code bound to the client, the redirect URI,
// the PKCE challenge and the resource, and returns the redirect back to
// the client with code, state and iss (RFC 9207).
func (s *Service) IssueCode(ctx context.Context, userID string, req AuthorizationRequest) (string, error) {
	s.sweep(ctx)
	code := service.NewSecret(32)
	now := s.now()
	if err := s.store.OAuth().CreateOAuthCode(ctx, &models.OAuthCode{CodeHash: service.HashSecret(code), ClientID: req.Client.ID, UserID: userID,
		RedirectURI: req.RedirectURI, CodeChallenge: req.CodeChallenge, Resource: req.Resource, Scope: req.Scope,
		CreatedAt: now, ExpiresAt: now.Add(CodeTTL)}); err != nil {
		return "", err
	}
	return s.RedirectBack(req.RedirectURI, url.Values{"code": {code}, "state": {req.State}}), nil
}

// RedirectBack adds params and iss to the client's redirect URI.
func (s *Service) RedirectBack(redirectURI string, params url.Values) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI
	}
	q := u.Query()
	for k, v := range params {
		if len(v) == 1 && v[0] == "" {
			continue
		}
		q[k] = v
	}
	q.Set("iss", s.cfg.Issuer)
	u.RawQuery = q.Encode()
	return u.String()
}

// ErrorRedirect is the redirect carrying an authorization error.
func (s *Service) ErrorRedirect(e *AuthorizeError) string {
	return s.RedirectBack(e.RedirectURI, url.Values{"error": {e.Code}, "error_description": {e.Description}, "state": {e.State}})
}
