// Package service holds holdco's use cases. REST (api/), the connector and
// the authorization server call it, so every rule — ownership (404 for a
// missing item, 403 for someone else's), credentials, plans — is written
// once, here.
package service

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"holdco/models"
	"holdco/store"
)

// IdentityProvider is the upstream OpenID Connect provider users sign in
// with (providers/oidcrp).
type IdentityProvider interface {
	Issuer() string
	AuthURL(ctx context.Context, redirectURI, state, challenge string, params map[string]string) (string, error)
	Exchange(ctx context.Context, redirectURI, code, verifier string) (models.Identity, error)
	EndSessionURL(ctx context.Context, redirectURI, postLogoutRedirect string) string
}

// Config holds the service's settings.
type Config struct {
	// PublicURL is where holdco's REST API is reached by browsers and the
	// CLI, e.g. http://localhost:8080; callbacks are built from it.
	PublicURL string
	// FrontendURL is the web app; sign-in returns there and logout lands on
	// its login page.
	FrontendURL string
	// SitesURL is where tenant sites are served; sign-in never returns
	// there.
	SitesURL string
	// SecretKey signs web session JWTs and login state. Empty: a random key
	// kept in the database and shared by every replica.
	SecretKey []byte
	// CreditPriceCents is the price of one credit in US cents (0: the
	// default).
	CreditPriceCents int64
}

// Service is the use-case layer.
type Service struct {
	cfg    Config
	store  *store.Store
	idp    IdentityProvider
	logger *slog.Logger
	now    func() time.Time
	sign   signer

	seal     sealer
	payments Payments
	temporal client.Client
	outbox   *ProvisioningOutbox

	userKeys    *ttlCache[string, Principal] // by token hash
	sessions    *ttlCache[string, Principal] // by web session id
	adminKeys   *ttlCache[string, Principal] // by token hash
	companyKeys *ttlCache[string, Principal] // by key hash
}

// Options are optional dependencies (tests inject a clock).
type Options struct {
	Clock func() time.Time
	// Payments is the payment provider; nil when payments are not
	// configured (payment links are then null with a reason).
	Payments Payments
	// Temporal starts and signals workflows; nil disables provisioning.
	Temporal client.Client
}

// Credential cache lifetimes: the longest a revocation made on another
// replica can go unnoticed. A revocation through this replica takes effect
// at once.
const (
	userKeyCacheTTL = 30 * time.Second
	sessionCacheTTL = 10 * time.Second
	cacheMaxEntries = 100_000
)

// New builds the service. It reads (or creates) the instance signing key.
func New(ctx context.Context, cfg Config, st *store.Store, idp IdentityProvider, logger *slog.Logger, opts Options) (*Service, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = func() time.Time { return time.Now().UTC() }
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	cfg.FrontendURL = strings.TrimRight(cfg.FrontendURL, "/")
	cfg.SitesURL = strings.TrimRight(cfg.SitesURL, "/")
	if cfg.FrontendURL == "" {
		cfg.FrontendURL = cfg.PublicURL
	}
	for name, u := range map[string]string{"public URL": cfg.PublicURL, "frontend URL": cfg.FrontendURL} {
		if p, err := url.Parse(u); err != nil || p.Scheme == "" || p.Host == "" {
			return nil, fmt.Errorf("service: %s %q is not an absolute URL", name, u)
		}
	}
	key, err := signingKey(ctx, st, cfg.SecretKey)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, store: st, idp: idp, logger: logger, now: opts.Clock, sign: signer{key: key},
		payments: opts.Payments, temporal: opts.Temporal}
	s.outbox = &ProvisioningOutbox{Store: st, Temporal: opts.Temporal, Logger: logger}
	if s.seal, err = newSealer(s.sign); err != nil {
		return nil, fmt.Errorf("service: sealer: %w", err)
	}
	s.companyKeys = newTTLCache[string, Principal](CompanyKeyCacheTTL, cacheMaxEntries, s.now)
	s.userKeys = newTTLCache[string, Principal](userKeyCacheTTL, cacheMaxEntries, s.now)
	s.sessions = newTTLCache[string, Principal](sessionCacheTTL, cacheMaxEntries, s.now)
	s.adminKeys = newTTLCache[string, Principal](userKeyCacheTTL, 1000, s.now)
	return s, nil
}

// signingKey is the configured secret key, or the random one kept in the
// database and shared by every replica.
func signingKey(ctx context.Context, st *store.Store, configured []byte) ([]byte, error) {
	if len(configured) > 0 {
		return configured, nil
	}
	key, err := st.InstanceSecret(ctx, "signing-key", func() []byte {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return b
	})
	if err != nil {
		return nil, fmt.Errorf("service: signing key: %w", err)
	}
	return key, nil
}

// Now is the service clock (UTC).
func (s *Service) Now() time.Time { return s.now() }
