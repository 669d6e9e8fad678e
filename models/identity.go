package models

// Identity is what an identity provider asserts about a signed-in user.
// The service receives it from its IdentityProvider; each provider adapter
// (providers/oidcrp) converts its own claims into it.
type Identity struct {
	Issuer        string
	Subject       string
	Email         string
	EmailVerified bool
	Name          string
}
