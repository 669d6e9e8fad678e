package service

import (
	"context"

	"holdco/models"
	"holdco/store"
)

// CredentialKind names what authenticated a request.
type CredentialKind string

const (
	CredentialWebSession CredentialKind = "web_session"           // web JWT from the browser sign-in
	CredentialSessionKey CredentialKind = "session_key"           // svc_u_v1_ from CLI login
	CredentialPersonal   CredentialKind = "personal_access_token" // svc_u_v1_ from POST /auth/tokens
	CredentialCompanyKey CredentialKind = "company_key"           // svc_c_v1_
	CredentialAdminToken CredentialKind = "admin_token"           // holdco admin create-token
	// CredentialOAuthAccess is an access token of the authorization server
	// (oauth/): it acts as its user, on the connector only; REST never
	// accepts it.
	CredentialOAuthAccess CredentialKind = "oauth_access_token"
)

// Scopes reported by GET /auth/me.
const (
	ScopeConglomerate = "conglomerate"
	ScopeCompany      = "company"
	ScopeAdmin        = "admin"
)

// Principal is who a request acts as.
type Principal struct {
	Credential CredentialKind
	// CredentialID is the web session, API key or admin token row id.
	CredentialID   string
	UserID         string
	ConglomerateID string
	CompanyID      string
	// ClientID is the OAuth client (the assistant) behind an
	// oauth_access_token; empty for every other credential.
	ClientID string
	// User and Account are the user's and the conglomerate's rows as they
	// were when the credential was resolved: cached with it for at most
	// CredentialCacheTTL, and dropped at once on this replica when they
	// change (Core.ForgetUser, Core.ForgetAccount). They answer who the
	// caller is (GET /auth/me) without a read; decisions on billing and
	// ownership read the rows. nil when the credential has none (admin
	// tokens; principals made elsewhere, such as tests).
	User    *models.User
	Account *models.Conglomerate
}

// IsUser reports whether a person (not a company or an operator) acts.
func (p Principal) IsUser() bool {
	switch p.Credential {
	case CredentialWebSession, CredentialSessionKey, CredentialPersonal, CredentialOAuthAccess:
		return true
	}
	return false
}

// IsAdmin reports whether the operator credential acts.
func (p Principal) IsAdmin() bool { return p.Credential == CredentialAdminToken }

// Scope is what the credential reaches: conglomerate, company or admin.
func (p Principal) Scope() string {
	switch {
	case p.IsUser():
		return ScopeConglomerate
	case p.Credential == CredentialCompanyKey:
		return ScopeCompany
	}
	return ScopeAdmin
}

type principalKey struct{}

// WithPrincipal stores the authenticated principal in ctx.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return WithPrincipalRef(ctx, &p)
}

// WithPrincipalRef stores a principal that is never modified afterwards
// (a cached one, shared by the requests of one credential) in ctx without
// copying it.
func WithPrincipalRef(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal in ctx; ok is false for anonymous
// requests.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	if !ok || p == nil {
		return Principal{}, false
	}
	return *p, true
}

// RequireUser returns the acting user principal or the 401/403 that fits.
func RequireUser(ctx context.Context) (Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return p, ErrUnauthenticated()
	}
	if !p.IsUser() {
		return p, models.Errorf(models.CodeForbidden, "This operation needs a user credential; a %s cannot perform it.", p.Credential)
	}
	return p, nil
}

// RequireAdmin returns the operator's scope (what the store's admin-only
// methods take), or the 401/403 that fits unless the operator credential
// acts.
func RequireAdmin(ctx context.Context) (store.AdminScope, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return store.AdminScope{}, ErrUnauthenticated()
	}
	scope, err := store.AuthorizeAdmin(actor(p))
	if err != nil {
		return store.AdminScope{}, models.Errorf(models.CodeForbidden, "This operation needs the admin credential.")
	}
	return scope, nil
}

// ErrUnauthenticated is the answer to a request without a credential.
func ErrUnauthenticated() *models.Error {
	return models.Errorf(models.CodeUnauthenticated, "Sign in first: send Authorization: Bearer <token>.")
}
