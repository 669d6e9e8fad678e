// Package service is the core of holdco's use cases: the settings, the
// principal a request acts as, the authorization step, the credential
// caches, the instance's signer and sealer, and the clock. The use cases
// themselves live by domain beside it (service/identity, service/billing,
// service/companies); REST (api/), the connector and activities call those,
// so every rule — ownership (404 for a missing item, 403 for someone
// else's), credentials, plans, credits — is written once.
package service

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"holdco/store"
)

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

// Core is what every domain's use cases share: settings, the store, the
// logger, the clock, the instance signer and sealer, the authorization
// step and the company-key cache (which the identity, companies and
// account use cases all invalidate). One Core per process; the domain
// services are built on it.
type Core struct {
	cfg    Config
	store  *store.Store
	logger *slog.Logger
	now    func() time.Time
	sign   Signer
	seal   Sealer

	companyKeys *Cache[string, *Principal] // by key hash

	principalsMu sync.Mutex
	principals   []*Cache[string, *Principal] // every credential cache (PrincipalCache)
}

// CredentialCacheTTL is how long a replica keeps a resolved credential
// (of every kind: user keys, web sessions, company keys, admin tokens,
// OAuth access tokens) with its user's and account's rows: the longest a
// revocation, an account deletion or a change of the account made on
// another replica can go unnoticed there. On the replica that made the
// change it takes effect at once.
const CredentialCacheTTL = 5 * time.Second

// Credential cache lifetimes by kind, all CredentialCacheTTL.
const (
	UserKeyCacheTTL = CredentialCacheTTL
	SessionCacheTTL = CredentialCacheTTL
	CacheMaxEntries = 100_000
)

// NewCore checks the settings and reads (or creates) the instance signing
// key. clock nil is the wall clock (UTC).
func NewCore(ctx context.Context, cfg Config, st *store.Store, logger *slog.Logger, clock func() time.Time) (*Core, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if clock == nil {
		clock = func() time.Time { return time.Now().UTC() }
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
	c := &Core{cfg: cfg, store: st, logger: logger, now: clock, sign: Signer{key: key}}
	if c.seal, err = newSealer(c.sign); err != nil {
		return nil, fmt.Errorf("service: sealer: %w", err)
	}
	c.companyKeys = c.PrincipalCache(CacheMaxEntries)
	// A change of an account's row (plan, settings, deletion) drops the
	// principals that carry it, whichever use case made it.
	st.OnAccountChange(c.ForgetAccount)
	return c, nil
}

// signingKey is the configured secret key, or the random one kept in the
// database and shared by every replica.
func signingKey(ctx context.Context, st *store.Store, configured []byte) ([]byte, error) {
	if len(configured) > 0 {
		return configured, nil
	}
	key, err := st.Identity().InstanceSecret(ctx, "signing-key", func() []byte {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return b
	})
	if err != nil {
		return nil, fmt.Errorf("service: signing key: %w", err)
	}
	return key, nil
}

// Config is the checked settings (URLs without a trailing slash).
func (c *Core) Config() Config { return c.cfg }

// Store is the database.
func (c *Core) Store() *store.Store { return c.store }

// Logger is the process logger.
func (c *Core) Logger() *slog.Logger { return c.logger }

// Now is the service clock (UTC).
func (c *Core) Now() time.Time { return c.now() }

// Clock is the service clock as a function.
func (c *Core) Clock() func() time.Time { return c.now }

// Signer signs states and links under the instance key.
func (c *Core) Signer() Signer { return c.sign }

// Sealer encrypts values holdco shows again (company API keys).
func (c *Core) Sealer() Sealer { return c.seal }

// CompanyKeys caches company-key authentications (hits and misses) by key
// hash; rotating, archiving and account deletion drop entries.
func (c *Core) CompanyKeys() *Cache[string, *Principal] { return c.companyKeys }

// PrincipalCache makes a credential cache (by the credential's hash or
// id; a nil value is a cached miss) whose entries live
// CredentialCacheTTL, and registers it so that ForgetUser and
// ForgetAccount reach it.
func (c *Core) PrincipalCache(maxEntries int) *Cache[string, *Principal] {
	cache := NewCache[string, *Principal](CredentialCacheTTL, maxEntries, c.now)
	c.principalsMu.Lock()
	c.principals = append(c.principals, cache)
	c.principalsMu.Unlock()
	return cache
}

// ForgetUser drops every cached principal of the user, whatever the
// credential (account deletion, sign-out everywhere).
func (c *Core) ForgetUser(userID string) {
	c.forget(func(p *Principal) bool { return p != nil && p.UserID == userID })
}

// ForgetAccount drops every cached principal acting in the account
// (conglomerate): its row changed (plan, settings) or it is gone.
func (c *Core) ForgetAccount(conglomerateID string) {
	c.forget(func(p *Principal) bool { return p != nil && p.ConglomerateID == conglomerateID })
}

func (c *Core) forget(match func(*Principal) bool) {
	c.principalsMu.Lock()
	caches := slices.Clone(c.principals)
	c.principalsMu.Unlock()
	for _, cache := range caches {
		cache.DeleteWhere(match)
	}
}
