package devoidc

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// requestTTL bounds how long a sign-in (and its code) may take.
const requestTTL = 10 * time.Minute

// authRequest is one authorization request while the user signs in.
type authRequest struct {
	id        string
	req       oidc.AuthRequest
	userID    string
	authTime  time.Time
	done      bool
	createdAt time.Time
}

var _ op.AuthRequest = (*authRequest)(nil)

func (a *authRequest) GetID() string          { return a.id }
func (a *authRequest) GetACR() string         { return "" }
func (a *authRequest) GetAMR() []string       { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string  { return []string{a.req.ClientID} }
func (a *authRequest) GetAuthTime() time.Time { return a.authTime }
func (a *authRequest) GetClientID() string    { return a.req.ClientID }
func (a *authRequest) GetNonce() string       { return a.req.Nonce }
func (a *authRequest) GetRedirectURI() string { return a.req.RedirectURI }
func (a *authRequest) GetResponseMode() oidc.ResponseMode {
	return a.req.ResponseMode
}
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.req.ResponseType }
func (a *authRequest) GetScopes() []string                { return a.req.Scopes }
func (a *authRequest) GetState() string                   { return a.req.State }
func (a *authRequest) GetSubject() string                 { return a.userID }
func (a *authRequest) Done() bool                         { return a.done }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.req.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.req.CodeChallenge, Method: a.req.CodeChallengeMethod}
}

type accessToken struct {
	subject, clientID string
	scopes            []string
	expires           time.Time
}

// storage is the op.Storage of the development provider: sign-ins, codes
// and tokens in memory (they live minutes), users in Users.
type storage struct {
	users   Users
	clients map[string]*client
	key     *ecdsa.PrivateKey
	keyID   string

	mu       sync.Mutex
	requests map[string]*authRequest
	codes    map[string]string // code → request id
	tokens   map[string]accessToken
}

var _ op.Storage = (*storage)(nil)

var errNotFound = errors.New("devoidc: not found")

func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(time.Now())
	a := &authRequest{id: uuid.NewString(), req: *req, createdAt: time.Now()}
	s.requests[a.id] = a
	return a, nil
}

// sweep drops sign-ins and tokens that expired; called with mu held.
func (s *storage) sweep(now time.Time) {
	for id, a := range s.requests {
		if now.Sub(a.createdAt) > requestTTL {
			delete(s.requests, id)
		}
	}
	for code, id := range s.codes {
		if _, ok := s.requests[id]; !ok {
			delete(s.codes, code)
		}
	}
	for id, t := range s.tokens {
		if now.After(t.expires) {
			delete(s.tokens, id)
		}
	}
}

func (s *storage) request(id string) (*authRequest, error) {
	a, ok := s.requests[id]
	if !ok || time.Since(a.createdAt) > requestTTL {
		return nil, fmt.Errorf("%w: auth request %s", errNotFound, id)
	}
	return a, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.request(id)
}

func (s *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.codes[code]
	if !ok {
		return nil, fmt.Errorf("%w: code", errNotFound)
	}
	return s.request(id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest runs when a code is redeemed: the request and its code
// go, so a code works once.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// completeLogin marks the sign-in done for userID.
func (s *storage) completeLogin(id, userID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.request(id)
	if err != nil {
		return err
	}
	a.userID, a.done, a.authTime = userID, true, time.Now()
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	clientID := ""
	if a, ok := req.(*authRequest); ok {
		clientID = a.GetClientID()
	}
	id := uuid.NewString()
	exp := time.Now().Add(5 * time.Minute)
	s.tokens[id] = accessToken{subject: req.GetSubject(), clientID: clientID, scopes: req.GetScopes(), expires: exp}
	return id, exp, nil
}

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errors.New("devoidc: refresh tokens are not supported")
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, errors.New("devoidc: refresh tokens are not supported")
}

// TerminateSession has nothing to end: the provider keeps no browser
// session, every sign-in asks for the password.
func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(_ context.Context, tokenOrID, _, _ string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tokens, tokenOrID)
	return nil
}

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

// signingKey is an ECDSA P-256 key (ES256): made in microseconds at start,
// unlike an RSA key.
type signingKey struct {
	id  string
	key *ecdsa.PrivateKey
}

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k signingKey) Key() any                                    { return k.key }
func (k signingKey) ID() string                                  { return k.id }

type publicKey struct{ signingKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.ES256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	return signingKey{id: s.keyID, key: s.key}, nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.ES256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{signingKey{id: s.keyID, key: s.key}}}, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	c, ok := s.clients[id]
	if !ok {
		return nil, fmt.Errorf("%w: client %q", errNotFound, id)
	}
	return c, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c, ok := s.clients[id]
	if !ok || !c.secretMatches(secret) {
		return errors.New("devoidc: invalid client credentials")
	}
	return nil
}

func (s *storage) SetUserinfoFromScopes(ctx context.Context, info *oidc.UserInfo, userID, _ string, scopes []string) error {
	return s.fillUserinfo(ctx, info, userID, scopes)
}

func (s *storage) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, tokenID, subject, _ string) error {
	s.mu.Lock()
	t, ok := s.tokens[tokenID]
	s.mu.Unlock()
	if !ok || time.Now().After(t.expires) || t.subject != subject {
		return errors.New("devoidc: token is invalid or expired")
	}
	return s.fillUserinfo(ctx, info, subject, t.scopes)
}

func (s *storage) fillUserinfo(ctx context.Context, info *oidc.UserInfo, userID string, scopes []string) error {
	u, err := s.users.UserByID(ctx, userID)
	if err != nil {
		return err
	}
	info.Subject = u.ID
	for _, scope := range scopes {
		switch scope {
		case oidc.ScopeEmail:
			info.Email, info.EmailVerified = u.Email, true
		case oidc.ScopeProfile:
			info.Name = u.Name
		}
	}
	return nil
}

func (s *storage) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	var info oidc.UserInfo
	if err := s.SetUserinfoFromToken(ctx, &info, tokenID, subject, ""); err != nil {
		return err
	}
	resp.SetUserInfo(&info)
	resp.ClientID = clientID
	resp.Active = true
	return nil
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("devoidc: JWT client authentication is not supported")
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("devoidc: JWT profile grant is not supported")
}

func (s *storage) Health(context.Context) error { return nil }
