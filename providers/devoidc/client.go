package devoidc

import (
	"crypto/subtle"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client is a confidential web client of the provider (holdco itself).
type Client struct {
	ID           string
	Secret       string
	RedirectURIs []string
	// PostLogoutRedirectURIs are where end_session may send the browser.
	PostLogoutRedirectURIs []string
}

type client struct {
	Client
	loginPath string
}

var _ op.Client = (*client)(nil)

func (c *client) GetID() string                       { return c.ID }
func (c *client) RedirectURIs() []string              { return c.Client.RedirectURIs }
func (c *client) PostLogoutRedirectURIs() []string    { return c.Client.PostLogoutRedirectURIs }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType         { return []oidc.GrantType{oidc.GrantTypeCode} }
func (c *client) LoginURL(id string) string            { return c.loginPath + "?authRequestID=" + id }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeBearer }
func (c *client) IDTokenLifetime() time.Duration       { return 5 * time.Minute }
func (c *client) DevMode() bool                        { return true } // http redirect URIs on localhost
func (c *client) IsScopeAllowed(string) bool           { return false }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true } // email and name in the ID token
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (c *client) secretMatches(secret string) bool {
	return subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) == 1
}
