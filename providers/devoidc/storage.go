package devoidc

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// authRequest is one authorization request while the user signs in.
type authRequest struct{ Request }

var _ op.AuthRequest = (*authRequest)(nil)

func (a *authRequest) GetID() string          { return a.ID }
func (a *authRequest) GetACR() string         { return "" }
func (a *authRequest) GetAMR() []string       { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string  { return []string{a.Auth.ClientID} }
func (a *authRequest) GetAuthTime() time.Time { return a.AuthTime }
func (a *authRequest) GetClientID() string    { return a.Auth.ClientID }
func (a *authRequest) GetNonce() string       { return a.Auth.Nonce }
func (a *authRequest) GetRedirectURI() string { return a.Auth.RedirectURI }
func (a *authRequest) GetResponseMode() oidc.ResponseMode {
	return a.Auth.ResponseMode
}
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.Auth.ResponseType }
func (a *authRequest) GetScopes() []string                { return a.Auth.Scopes }
func (a *authRequest) GetState() string                   { return a.Auth.State }
func (a *authRequest) GetSubject() string                 { return a.UserID }
func (a *authRequest) Done() bool                         { return a.Request.Done }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	if a.Auth.CodeChallenge == "" {
		return nil
	}
	return &oidc.CodeChallenge{Challenge: a.Auth.CodeChallenge, Method: a.Auth.CodeChallengeMethod}
}

// storage is the op.Storage of the development provider: sign-ins, codes
// and tokens in State (the database in holdco, so every process shares
// them), users in Users.
type storage struct {
	users   Users
	state   State
	clients map[string]*client
	key     *ecdsa.PrivateKey
	keyID   string
	now     func() time.Time
}

var _ op.Storage = (*storage)(nil)

var errNotFound = errors.New("devoidc: not found")

func (s *storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	r := Request{ID: uuid.NewString(), Auth: *req, ExpiresAt: s.now().Add(requestTTL).UTC()}
	if err := s.state.CreateRequest(ctx, r); err != nil {
		return nil, err
	}
	return &authRequest{r}, nil
}

func (s *storage) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	r, err := s.state.Request(ctx, id)
	if err != nil {
		return nil, err
	}
	return &authRequest{r}, nil
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	r, err := s.state.RequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	return &authRequest{r}, nil
}

func (s *storage) SaveAuthCode(ctx context.Context, id, code string) error {
	return s.state.SetCode(ctx, id, code)
}

// DeleteAuthRequest runs when a code is redeemed: the request and its code
// go, so a code works once. Of two exchanges of one code at once (on two
// processes), the one that finds the request gone fails.
func (s *storage) DeleteAuthRequest(ctx context.Context, id string) error {
	ok, err := s.state.DeleteRequest(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: auth request %s (its code was redeemed)", errNotFound, id)
	}
	return nil
}

// completeLogin marks the sign-in done for userID.
func (s *storage) completeLogin(ctx context.Context, id, userID string) error {
	return s.state.Complete(ctx, id, userID, s.now().UTC())
}

func (s *storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	clientID := ""
	if a, ok := req.(*authRequest); ok {
		clientID = a.GetClientID()
	}
	t := Token{ID: uuid.NewString(), Subject: req.GetSubject(), ClientID: clientID, Scopes: req.GetScopes(), ExpiresAt: s.now().Add(tokenTTL).UTC()}
	if err := s.state.CreateToken(ctx, t); err != nil {
		return "", time.Time{}, err
	}
	return t.ID, t.ExpiresAt, nil
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

func (s *storage) RevokeToken(ctx context.Context, tokenOrID, _, _ string) *oidc.Error {
	if err := s.state.DeleteToken(ctx, tokenOrID); err != nil {
		return oidc.ErrServerError().WithParent(err)
	}
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
	t, err := s.state.Token(ctx, tokenID)
	if errors.Is(err, errNotFound) || err == nil && t.Subject != subject {
		return errors.New("devoidc: token is invalid or expired")
	}
	if err != nil {
		return err
	}
	return s.fillUserinfo(ctx, info, subject, t.Scopes)
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
