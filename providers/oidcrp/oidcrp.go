// Package oidcrp signs users in through an external OpenID Connect provider
// (authorization code + PKCE) with zitadel/oidc's relying-party client. Any
// standard provider works; the embedded default uses holdco's development
// provider (providers/devoidc).
package oidcrp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/pkg/client/rp"
	"github.com/zitadel/oidc/v3/pkg/oidc"

	"holdco/models"
)

// Options configure the client.
type Options struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// RedirectURIs are the callback addresses registered with the provider;
	// AuthURL and Exchange name the one a flow uses.
	RedirectURIs []string
	HTTPClient   *http.Client
}

// Client talks to the provider. Discovery runs lazily on first use (and is
// retried after a failure), so holdco starts even while the provider is
// unreachable, and the embedded provider can live on holdco's own listener.
type Client struct {
	o Options

	mu  sync.Mutex
	rps map[string]rp.RelyingParty // by redirect URI
}

// New returns a client; it does not contact the provider yet.
func New(o Options) *Client {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	return &Client{o: o, rps: map[string]rp.RelyingParty{}}
}

// Issuer is the configured issuer URL.
func (c *Client) Issuer() string { return c.o.Issuer }

func (c *Client) relyingParty(ctx context.Context, redirectURI string) (rp.RelyingParty, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.rps[redirectURI]; ok {
		return r, nil
	}
	r, err := rp.NewRelyingPartyOIDC(ctx, c.o.Issuer, c.o.ClientID, c.o.ClientSecret, redirectURI,
		[]string{oidc.ScopeOpenID, oidc.ScopeEmail, oidc.ScopeProfile},
		rp.WithHTTPClient(c.o.HTTPClient),
		rp.WithVerifierOpts(rp.WithIssuedAtOffset(5*time.Second)),
	)
	if err != nil {
		return nil, fmt.Errorf("oidcrp: discover %s: %w", c.o.Issuer, err)
	}
	c.rps[redirectURI] = r
	return r, nil
}

// AuthURL is where the browser goes to sign in. challenge is the S256 PKCE
// challenge of the verifier later passed to Exchange; params are extra
// authorization parameters (for example screen_hint).
func (c *Client) AuthURL(ctx context.Context, redirectURI, state, challenge string, params map[string]string) (string, error) {
	r, err := c.relyingParty(ctx, redirectURI)
	if err != nil {
		return "", err
	}
	opts := []rp.AuthURLOpt{rp.WithCodeChallenge(challenge)}
	for k, v := range params {
		opts = append(opts, rp.AuthURLOpt(rp.WithURLParam(k, v)))
	}
	return rp.AuthURL(state, r, opts...), nil
}

// Exchange redeems the authorization code and verifies the ID token.
func (c *Client) Exchange(ctx context.Context, redirectURI, code, verifier string) (models.Identity, error) {
	r, err := c.relyingParty(ctx, redirectURI)
	if err != nil {
		return models.Identity{}, err
	}
	tokens, err := rp.CodeExchange[*oidc.IDTokenClaims](ctx, code, r, rp.WithCodeVerifier(verifier))
	if err != nil {
		return models.Identity{}, fmt.Errorf("oidcrp: exchange code: %w", err)
	}
	claims := tokens.IDTokenClaims
	if claims == nil || claims.Subject == "" {
		return models.Identity{}, errors.New("oidcrp: the provider returned no ID token subject")
	}
	id := models.Identity{
		Issuer:        claims.Issuer,
		Subject:       claims.Subject,
		Email:         claims.Email,
		EmailVerified: bool(claims.EmailVerified),
		Name:          claims.Name,
	}
	if id.Email == "" {
		// Some providers put profile claims only in userinfo.
		info, err := rp.Userinfo[*oidc.UserInfo](ctx, tokens.AccessToken, tokens.TokenType, claims.Subject, r)
		if err == nil {
			id.Email, id.EmailVerified = info.Email, bool(info.EmailVerified)
			if id.Name == "" {
				id.Name = info.Name
			}
		}
	}
	if id.Email == "" {
		return models.Identity{}, errors.New("oidcrp: the provider did not share an email address (scope email)")
	}
	return id, nil
}

// EndSessionURL is the provider's RP-initiated logout address that returns
// the browser to postLogoutRedirect, or "" when the provider has none.
func (c *Client) EndSessionURL(ctx context.Context, redirectURI, postLogoutRedirect string) string {
	r, err := c.relyingParty(ctx, redirectURI)
	if err != nil || r.GetEndSessionEndpoint() == "" {
		return ""
	}
	u, err := url.Parse(r.GetEndSessionEndpoint())
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("client_id", c.o.ClientID)
	q.Set("post_logout_redirect_uri", postLogoutRedirect)
	u.RawQuery = q.Encode()
	return u.String()
}
