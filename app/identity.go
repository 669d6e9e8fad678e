package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/http"
	"strings"

	"holdco/models"
	"holdco/providers/devoidc"
	"holdco/providers/oidcrp"
	"holdco/providers/stripepay"
	"holdco/service"
	"holdco/service/founding"
	"holdco/service/identity"
	oauthsvc "holdco/service/oauth"
	"holdco/service/usecases"
)

// devIdPPath is where the embedded development identity provider is
// mounted on the REST listener when no OIDC_ISSUER is configured.
const devIdPPath = "/dev-idp"

// services builds, once per process, the use cases its roles serve (the
// union of their parts, duty.uses): the api and mcp roles every part, the
// oauth role sign-in alone, the worker the domains its activities call
// (agent turns and their tools, founding, growth, auto top-up); the
// sites role none.
func (a *App) services(ctx context.Context, publicURL, sitesURL string) (*usecases.Services, map[string]http.Handler, error) {
	if a.Service != nil {
		return a.Service, a.mounts, nil
	}
	svc, mounts, err := a.buildService(ctx, a.parts, publicURL, sitesURL)
	if err != nil {
		return nil, nil, err
	}
	a.Service, a.mounts = svc, mounts
	return svc, mounts, nil
}

// buildService builds the parts of the use-case layer and the adapters
// they call, no others: sign-in gets its identity provider (the
// configured one, or the embedded development provider mounted on the
// REST listener, returned in mounts) and the authorization server's
// settings; the domains get payments, blobs, mail, the growth and web
// providers, and the companies' repositories and databases when this
// process opened them.
func (a *App) buildService(ctx context.Context, parts usecases.Parts, publicURL, sitesURL string) (*usecases.Services, map[string]http.Handler, error) {
	cfg := a.cfg
	frontend := cfg.API.FrontendURL
	if frontend == "" {
		frontend = publicURL
	}
	var (
		opts   usecases.Options
		idp    identity.IdentityProvider
		mounts = map[string]http.Handler{}
		err    error
	)
	if parts&usecases.SignIn != 0 {
		if idp, err = a.signIn(ctx, publicURL, frontend, mounts); err != nil {
			return nil, nil, err
		}
		opts.OAuth = a.oauthConfig()
	}
	if parts&usecases.Domains != 0 {
		if err := a.domainOptions(ctx, &opts, sitesURL); err != nil {
			return nil, nil, err
		}
	}
	svc, err := usecases.Build(ctx, parts, service.Config{PublicURL: publicURL, FrontendURL: frontend, SitesURL: sitesURL, SecretKey: []byte(cfg.Identity.SecretKey), CreditPriceCents: cfg.Payments.CreditPriceCents},
		a.Store, idp, a.logger, opts)
	if err != nil {
		return nil, nil, err
	}
	return svc, mounts, nil
}

// signIn is the identity provider users sign in with: the configured one,
// or the embedded development provider (mounted on the REST listener).
func (a *App) signIn(ctx context.Context, publicURL, frontend string, mounts map[string]http.Handler) (identity.IdentityProvider, error) {
	cfg := a.cfg
	callbacks := []string{publicURL + identity.WebCallbackPath, publicURL + identity.CLICallbackPath, a.oauthURL() + oauthsvc.CallbackPath}
	issuer, clientID, secret := cfg.Identity.OIDCIssuer, cfg.Identity.OIDCClientID, cfg.Identity.OIDCClientSecret
	if issuer == "" {
		issuer, clientID = publicURL+devIdPPath, "holdco"
		p, devSecret, err := a.devIdentityProvider(ctx, issuer, clientID, callbacks, frontend)
		if err != nil {
			return nil, fmt.Errorf("embedded identity provider: %w", err)
		}
		secret = devSecret
		mounts[p.Prefix()] = p.Handler()
	}
	return oidcrp.New(oidcrp.Options{Issuer: issuer, ClientID: clientID, ClientSecret: secret, RedirectURIs: callbacks}), nil
}

// domainOptions are the domains' providers and settings.
func (a *App) domainOptions(ctx context.Context, opts *usecases.Options, sitesURL string) error {
	cfg := a.cfg
	opts.Temporal, opts.AgentRunEvery, opts.Analytics = a.Temporal, cfg.LLM.RunEvery, a.analyticsOptions()
	opts.FoundingLimits = founding.Limits{BusinessLimit: cfg.Founding.BusinessLimit, InterviewsPerDay: cfg.Founding.InterviewsPerDay,
		PlatformCompanies: cfg.Founding.PlatformCompanies, DenyTerms: cfg.Founding.DenyTerms}
	if a.repos != nil {
		opts.Repository = a.repos
	}
	if a.dbs != nil {
		opts.Database = dbTools{dbs: a.dbs}
	}
	var err error
	if opts.Research, opts.Images, err = toolProviders(cfg.Tools); err != nil {
		return err
	}
	if pc := cfg.Payments; pc.Enabled() {
		pay, err := stripepay.New(stripepay.Config{SecretKey: pc.StripeSecretKey, ConnectSecretKey: pc.StripeConnectSecretKey,
			WebhookSecret: pc.StripeWebhookSecret, ConnectWebhookSecret: pc.StripeConnectWebhookSecret, APIBase: pc.StripeAPIBase,
			PlanPrices:  map[models.Plan]string{models.PlanFounder: pc.StripeFounderPriceID, models.PlanHosting: pc.StripeHostingPriceID},
			PlanCredits: map[models.Plan]int64{models.PlanFounder: pc.FounderMonthlyCredits}})
		if err != nil {
			return fmt.Errorf("STRIPE_SECRET_KEY: %w", err)
		}
		opts.Payments = pay
		if pay.SalesConfigured() {
			opts.Sales = pay
		}
	}
	blobs, _, err := a.buildBlobs(ctx, sitesURL)
	if err != nil {
		return err
	}
	opts.Blobs, opts.FileLimits = blobs, a.fileLimits()
	if opts.Mail, opts.MailSender, opts.MailBodies, err = mailOptions(cfg); err != nil {
		return err
	}
	if opts.Registrar, opts.Ads, err = a.growthProviders(); err != nil {
		return err
	}
	opts.TLDs = cfg.Growth.TLDs
	return nil
}

// devIdentityProvider builds the embedded development identity provider.
// Every API process behind one public URL serves the same issuer: the
// client secret (and the key encrypting codes and tokens derived from it)
// and the ID-token signing key are instance secrets in the database, and
// sign-ins in progress, codes and access tokens are database rows, so a
// sign-in started on one process finishes on any other.
func (a *App) devIdentityProvider(ctx context.Context, issuer, clientID string, callbacks []string, frontend string) (*devoidc.Provider, string, error) {
	secret, err := a.Store.Identity().InstanceSecret(ctx, "dev-idp-client-secret", func() []byte { return []byte(randomSecret()) })
	if err != nil {
		return nil, "", err
	}
	var keyErr error
	der, err := a.Store.Identity().InstanceSecret(ctx, "dev-idp-signing-key", func() []byte {
		der, err := devoidc.NewSigningKey()
		keyErr = err
		return der
	})
	if err != nil {
		return nil, "", err
	}
	if keyErr != nil {
		return nil, "", keyErr
	}
	key, err := devoidc.ParseSigningKey(der)
	if err != nil {
		return nil, "", err
	}
	p, err := devoidc.New(ctx, devoidc.Options{
		Issuer:     issuer,
		Clients:    []devoidc.Client{{ID: clientID, Secret: string(secret), RedirectURIs: callbacks, PostLogoutRedirectURIs: []string{frontend + "/login"}}},
		Users:      devoidc.StoredUsers{Rows: a.Store.Identity()},
		Attempts:   devoidc.StoredAttempts{Rows: devAttemptRows{a.Store}},
		State:      devoidc.StoredState{Rows: a.Store.Identity()},
		SigningKey: key,
		Logger:     a.logger,
		CryptoKey:  sha256.Sum256(secret),
	})
	return p, string(secret), err
}

func randomSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

// isHTTPS reports whether cookies must be marked Secure.
func isHTTPS(u string) bool { return strings.HasPrefix(u, "https://") }
