// Package oauth is the use cases of the OAuth 2.1 authorization server
// the assistant connector trusts: client registration (dynamic, metadata
// documents, pre-registered), the authorization request's rules, consent,
// codes, opaque access tokens, revocation, token introspection for the
// connector, the authorization server's own sign-in sessions and the
// account's connected assistants. The HTTP adapter is oauth/ (and
// api/ for the connections); both only parse, call these and render.
package oauth

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/service/identity"
	"holdco/store"
)

// Scope is the one scope granted: the user's full access (rule 5).
const Scope = "nanocorp"

// Prefixes of the opaque secrets the authorization server hands out.
const (
	TokenPrefix   = "hco_at_v1_"
	sessionPrefix = "hco_as_v1_"
)

// Lifetimes and limits (spec, Limits; the rest chosen here, see
// docs/oauth.md).
const (
	CodeTTL = 2 * time.Minute
	// MaxLiveTokens per user per client: the next one revokes the oldest.
	MaxLiveTokens = 100
	// IntrospectCacheTTL is the longest a revocation or an account
	// deletion made on another replica goes unnoticed by the connector
	// (on the replica that made it, at once).
	IntrospectCacheTTL = service.CredentialCacheTTL
	SessionTTL         = 12 * time.Hour
	consentRequestTTL  = 30 * time.Minute
	// ConsentVersion is the consent page's version: raising it asks every
	// user again (rule 10).
	ConsentVersion = 1
)

// Config is the authorization server's settings.
type Config struct {
	// Issuer is the authorization server's bare origin.
	Issuer string
	// Resource is the connector's URL, the only resource tokens are for.
	Resource string
	// Clients are the pre-registered clients.
	Clients []PreregisteredClient
	// Fetcher fetches client ID metadata documents; nil: the production
	// fetcher (public addresses only, system roots).
	Fetcher *Fetcher
}

// Service is the authorization server's use cases.
type Service struct {
	cfg           Config
	store         *store.Store
	identity      *identity.Service
	logger        *slog.Logger
	now           func() time.Time
	sign          service.Signer
	fetcher       *Fetcher
	preregistered map[string]Client
	tokens        *service.Cache[string, *service.Principal] // by token hash; nil: a miss
	lastSweep     atomic.Int64
}

// New builds the use cases. id signs users in (it may be nil where no one
// signs in, e.g. a process that only introspects).
func New(core *service.Core, id *identity.Service, cfg Config) (*Service, error) {
	cfg.Issuer = strings.TrimRight(cfg.Issuer, "/")
	cfg.Resource = strings.TrimRight(cfg.Resource, "/")
	pre, err := checkPreregistered(cfg.Clients)
	if err != nil {
		return nil, fmt.Errorf("HOLDCO_OAUTH_CLIENTS: %w", err)
	}
	f := cfg.Fetcher
	if f == nil {
		f = &Fetcher{}
	}
	now := core.Clock()
	return &Service{cfg: cfg, store: core.Store(), identity: id, logger: core.Logger(), now: now, sign: core.Signer(),
		fetcher: f, preregistered: pre,
		tokens: core.PrincipalCache(service.CacheMaxEntries)}, nil
}

// Issuer is the authorization server's issuer (its bare origin).
func (s *Service) Issuer() string { return s.cfg.Issuer }

// Resource is the connector URL tokens are bound to.
func (s *Service) Resource() string { return s.cfg.Resource }

// Endpoint paths on the issuer's origin.
const (
	AuthorizePath    = "/oidc/authorize"
	ConsentPath      = "/oidc/consent"
	SwitchPath       = "/oidc/switch"
	CallbackPath     = "/oidc/callback"
	TokenPath        = "/oidc/token"
	RegisterPath     = "/oidc/register"
	RevokePath       = "/oidc/revoke"
	MetadataPath     = "/.well-known/oauth-authorization-server"
	ProtectedResPath = "/.well-known/oauth-protected-resource"
)

// ServerMetadata is the RFC 8414 document. offline_access is accepted but
// not advertised: clients that see it add prompt=consent, which rule 7
// refuses.
type ServerMetadata struct {
	Issuer                                 string   `json:"issuer"`
	AuthorizationEndpoint                  string   `json:"authorization_endpoint"`
	TokenEndpoint                          string   `json:"token_endpoint"`
	RegistrationEndpoint                   string   `json:"registration_endpoint"`
	RevocationEndpoint                     string   `json:"revocation_endpoint"`
	ResponseTypesSupported                 []string `json:"response_types_supported"`
	ResponseModesSupported                 []string `json:"response_modes_supported"`
	GrantTypesSupported                    []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported          []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported      []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported []string `json:"revocation_endpoint_auth_methods_supported"`
	ScopesSupported                        []string `json:"scopes_supported"`
	ClientIDMetadataDocumentSupported      bool     `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssParameter      bool     `json:"authorization_response_iss_parameter_supported"`
	ServiceDocumentation                   string   `json:"service_documentation,omitempty"`
}

// Metadata is the authorization server metadata (RFC 8414).
func (s *Service) Metadata() ServerMetadata {
	iss := s.cfg.Issuer
	none := []string{"none"}
	return ServerMetadata{
		Issuer: iss, AuthorizationEndpoint: iss + AuthorizePath, TokenEndpoint: iss + TokenPath,
		RegistrationEndpoint: iss + RegisterPath, RevocationEndpoint: iss + RevokePath,
		ResponseTypesSupported: []string{"code"}, ResponseModesSupported: []string{"query"},
		GrantTypesSupported: []string{"authorization_code"}, CodeChallengeMethodsSupported: []string{"S256"},
		TokenEndpointAuthMethodsSupported: none, RevocationEndpointAuthMethodsSupported: none,
		ScopesSupported: []string{Scope}, ClientIDMetadataDocumentSupported: true, AuthorizationResponseIssParameter: true,
	}
}

// ProtectedResourceMetadata is the connector's RFC 9728 document, for the
// connector to serve at <connector URL>/.well-known/oauth-protected-resource.
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// ResourceMetadata is what the connector advertises about itself.
func (s *Service) ResourceMetadata() ProtectedResourceMetadata {
	return ProtectedResourceMetadata{Resource: s.cfg.Resource, AuthorizationServers: []string{s.cfg.Issuer},
		ScopesSupported: []string{Scope}, BearerMethodsSupported: []string{"header"}, ResourceName: "holdco"}
}

// sweep deletes expired codes and unused registrations at most once a
// minute per replica.
func (s *Service) sweep(ctx context.Context) {
	now := s.now()
	last := s.lastSweep.Load()
	if now.Unix()-last < 60 || !s.lastSweep.CompareAndSwap(last, now.Unix()) {
		return
	}
	if _, err := s.store.OAuth().DeleteExpiredOAuthCodes(ctx, now.Add(-time.Hour)); err != nil {
		s.logger.WarnContext(ctx, "oauth: sweep expired codes", "error", err)
	}
	if _, err := s.store.OAuth().DeleteUnusedOAuthClients(ctx, now.Add(-UnusedClientTTL)); err != nil {
		s.logger.WarnContext(ctx, "oauth: sweep unused clients", "error", err)
	}
}

func errNotSignedIn() *models.Error {
	return models.Errorf(models.CodeUnauthenticated, "Sign in to the authorization server first.")
}
