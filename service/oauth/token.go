package oauth

import (
	"context"
	"errors"
	"strings"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// TokenRequest is a POST /oidc/token form. BasicAuth and ClientSecret tell
// whether the request tried to authenticate the client (refused: public
// clients only, rule 3).
type TokenRequest struct {
	GrantType    string
	Code         string
	RedirectURI  string
	ClientID     string
	CodeVerifier string
	Resource     string
	BasicAuth    bool
	ClientSecret bool
}

// TokenResponse is the token endpoint's answer: no expiry, no refresh
// token, no ID token (rules 5 and 13).
type TokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	Scope       string `json:"scope"`
}

// Exchange redeems an authorization code for an access token. A code is
// used up by its first redemption; a second one fails and revokes the
// token the first issued.
func (s *Service) Exchange(ctx context.Context, r TokenRequest) (TokenResponse, error) {
	if r.BasicAuth || r.ClientSecret {
		return TokenResponse{}, oauthError(ErrInvalidRequest, "Only public clients are served: send client_id in the form, without a Basic Authorization header or client_secret.")
	}
	switch r.GrantType {
	case "":
		return TokenResponse{}, oauthError(ErrInvalidRequest, "grant_type is required.")
	case "authorization_code":
	default:
		return TokenResponse{}, oauthError(ErrUnsupportedGrantType, "Only grant_type=authorization_code is supported.")
	}
	for name, v := range map[string]string{"code": r.Code, "redirect_uri": r.RedirectURI, "client_id": r.ClientID, "code_verifier": r.CodeVerifier} {
		if v == "" {
			return TokenResponse{}, oauthError(ErrInvalidRequest, name+" is required.")
		}
	}
	if _, err := s.resolveClient(ctx, r.ClientID); err != nil {
		return TokenResponse{}, err
	}
	var targetErr error
	if r.Resource != "" {
		if msg, ok := s.checkResource(r.Resource); !ok {
			targetErr = oauthError(ErrInvalidTarget, msg)
		}
	}
	raw, hash := service.NewCredential(TokenPrefix)
	now := s.now()
	red, err := s.store.OAuth().RedeemOAuthCode(ctx, service.HashSecret(r.Code), now, func(c models.OAuthCode) error {
		switch {
		case c.ClientID != r.ClientID:
			return oauthError(ErrInvalidGrant, "The code was issued to another client.")
		case c.RedirectURI != r.RedirectURI:
			return oauthError(ErrInvalidGrant, "redirect_uri differs from the authorization request's.")
		case !now.Before(c.ExpiresAt):
			return oauthError(ErrInvalidGrant, "The code has expired; authorize again.")
		case !service.VerifyPKCE(c.CodeChallenge, r.CodeVerifier):
			return oauthError(ErrInvalidGrant, "code_verifier does not match the code_challenge.")
		case targetErr != nil:
			return targetErr
		case r.Resource != "" && strings.TrimRight(r.Resource, "/") != c.Resource:
			return oauthError(ErrInvalidTarget, "resource differs from the authorization request's.")
		}
		return nil
	}, models.OAuthToken{TokenHash: hash, Resource: s.cfg.Resource, Scope: Scope}, MaxLiveTokens)
	s.forget(red.RevokedHashes)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return TokenResponse{}, oauthError(ErrInvalidGrant, "The code is unknown, expired or already used.")
	case errors.Is(err, store.ErrOAuthCodeReplayed):
		s.logger.WarnContext(ctx, "oauth: authorization code replayed; its token is revoked", "client_id", red.Code.ClientID)
		return TokenResponse{}, oauthError(ErrInvalidGrant, "The code is unknown, expired or already used.")
	case err != nil:
		return TokenResponse{}, err
	}
	return TokenResponse{AccessToken: raw, TokenType: "Bearer", Scope: Scope}, nil
}

// forget drops revoked tokens from this replica's cache at once (others
// notice within IntrospectCacheTTL).
func (s *Service) forget(hashes []string) {
	for _, h := range hashes {
		s.tokens.Delete(h)
	}
}

// Revoke is RFC 7009: a token the client holds is revoked; anything else
// well-formed is answered the same way (nil).
func (s *Service) Revoke(ctx context.Context, token, clientID string, basicAuth, clientSecret bool) error {
	if basicAuth || clientSecret {
		return oauthError(ErrInvalidRequest, "Only public clients are served: send client_id in the form, without client authentication.")
	}
	if token == "" {
		return oauthError(ErrInvalidRequest, "token is required.")
	}
	if clientID == "" {
		return oauthError(ErrInvalidRequest, "client_id is required.")
	}
	if !strings.HasPrefix(token, TokenPrefix) {
		return nil
	}
	hash := service.HashSecret(token)
	if _, err := s.store.OAuth().RevokeOAuthToken(ctx, hash, clientID, s.now()); err != nil {
		return err
	}
	s.tokens.Delete(hash)
	return nil
}

func errBadToken() *models.Error {
	return models.Errorf(models.CodeUnauthenticated, "The access token is invalid or revoked; authorize the assistant again.")
}

// Introspect resolves an access token for the connector: the user and
// client it acts for, or unauthenticated for a missing, malformed or
// revoked token, a token for another resource, or a deleted user. Results
// (hits and misses) are cached for IntrospectCacheTTL, so a revocation on
// another replica takes effect within that time.
func (s *Service) Introspect(ctx context.Context, rawToken string) (service.Principal, error) {
	p, err := s.IntrospectRef(ctx, rawToken)
	if err != nil {
		return service.Principal{}, err
	}
	return *p, nil
}

// IntrospectRef is Introspect answering the cached principal itself
// (shared: never modify it), with the user's and account's rows.
func (s *Service) IntrospectRef(ctx context.Context, rawToken string) (*service.Principal, error) {
	if !strings.HasPrefix(rawToken, TokenPrefix) || len(rawToken) > 100 {
		return nil, errBadToken()
	}
	hash := service.HashSecret(rawToken)
	if p, ok := s.tokens.Get(hash); ok {
		if p == nil {
			return nil, errBadToken()
		}
		return p, nil
	}
	p, err := s.lookupToken(ctx, hash)
	if err != nil {
		if models.IsCode(err, models.CodeUnauthenticated) {
			s.tokens.Set(hash, nil)
		}
		return nil, err
	}
	s.tokens.Set(hash, p)
	return p, nil
}

func (s *Service) lookupToken(ctx context.Context, hash string) (*service.Principal, error) {
	t, err := s.store.OAuth().GetOAuthTokenByHash(ctx, hash)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errBadToken()
	}
	if err != nil {
		return nil, err
	}
	if t.RevokedAt != nil || !service.EqualHash(t.TokenHash, hash) || (s.cfg.Resource != "" && t.Resource != s.cfg.Resource) {
		return nil, errBadToken()
	}
	u, err := s.store.Identity().GetUser(ctx, t.UserID)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errBadToken()
	} else if err != nil {
		return nil, err
	}
	p := &service.Principal{Credential: service.CredentialOAuthAccess, CredentialID: t.ID, UserID: t.UserID, ClientID: t.ClientID, User: &u}
	congs, err := s.store.Identity().ListConglomeratesForUser(ctx, t.UserID)
	if err != nil {
		return nil, err
	}
	if len(congs) > 0 {
		p.ConglomerateID = congs[0].ID
		p.Account = &congs[0]
	}
	return p, nil
}
