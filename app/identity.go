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

// services builds the use-case layer once per process: the api role
// serves it, the worker's activities (agent turns, their tools) call it.
func (a *App) services(ctx context.Context, publicURL, sitesURL string) (*usecases.Services, map[string]http.Handler, error) {
	if a.Service != nil {
		return a.Service, a.mounts, nil
	}
	svc, mounts, err := a.buildService(ctx, publicURL, sitesURL)
	if err != nil {
		return nil, nil, err
	}
	a.Service, a.mounts = svc, mounts
	return svc, mounts, nil
}

// buildService wires the use-case layer to its identity provider: the
// configured one, or the embedded development provider mounted on the REST
// listener (returned in mounts).
func (a *App) buildService(ctx context.Context, publicURL, sitesURL string) (*usecases.Services, map[string]http.Handler, error) {
	cfg := a.cfg
	frontend := cfg.API.FrontendURL
	if frontend == "" {
		frontend = publicURL
	}
	callbacks := []string{publicURL + identity.WebCallbackPath, publicURL + identity.CLICallbackPath, a.oauthURL() + oauthsvc.CallbackPath}
	issuer, clientID, secret := cfg.Identity.OIDCIssuer, cfg.Identity.OIDCClientID, cfg.Identity.OIDCClientSecret
	mounts := map[string]http.Handler{}
	if issuer == "" {
		// Both ends live in this process, so the client secret is made
		// fresh at every start.
		issuer, clientID, secret = publicURL+devIdPPath, "holdco", randomSecret()
		p, err := devoidc.New(ctx, devoidc.Options{
			Issuer:    issuer,
			Clients:   []devoidc.Client{{ID: clientID, Secret: secret, RedirectURIs: callbacks, PostLogoutRedirectURIs: []string{frontend + "/login"}}},
			Users:     devoidc.StoredUsers{Rows: a.Store},
			Attempts:  devoidc.StoredAttempts{Rows: devAttemptRows{a.Store}},
			Logger:    a.logger,
			CryptoKey: sha256.Sum256([]byte(secret)),
		})
		if err != nil {
			return nil, nil, fmt.Errorf("embedded identity provider: %w", err)
		}
		mounts[p.Prefix()] = p.Handler()
	}
	idp := oidcrp.New(oidcrp.Options{Issuer: issuer, ClientID: clientID, ClientSecret: secret, RedirectURIs: callbacks})
	opts := usecases.Options{Temporal: a.Temporal, AgentRunEvery: cfg.LLM.RunEvery, FoundingLimits: founding.Limits{BusinessLimit: cfg.Founding.BusinessLimit,
		InterviewsPerDay: cfg.Founding.InterviewsPerDay, PlatformCompanies: cfg.Founding.PlatformCompanies, DenyTerms: cfg.Founding.DenyTerms}, OAuth: a.oauthConfig(), Analytics: a.analyticsOptions()}
	if a.repos != nil {
		opts.Repository = repoTools{repos: a.repos}
	}
	if a.dbs != nil {
		opts.Database = dbTools{dbs: a.dbs}
	}
	var err error
	if opts.Research, opts.Images, err = toolProviders(cfg.Tools); err != nil {
		return nil, nil, err
	}
	if pc := cfg.Payments; pc.Enabled() {
		pay, err := stripepay.New(stripepay.Config{SecretKey: pc.StripeSecretKey, ConnectSecretKey: pc.StripeConnectSecretKey,
			WebhookSecret: pc.StripeWebhookSecret, ConnectWebhookSecret: pc.StripeConnectWebhookSecret, APIBase: pc.StripeAPIBase,
			PlanPrices:  map[models.Plan]string{models.PlanFounder: pc.StripeFounderPriceID, models.PlanHosting: pc.StripeHostingPriceID},
			PlanCredits: map[models.Plan]int64{models.PlanFounder: pc.FounderMonthlyCredits}})
		if err != nil {
			return nil, nil, fmt.Errorf("STRIPE_SECRET_KEY: %w", err)
		}
		opts.Payments = pay
		if pay.SalesConfigured() {
			opts.Sales = pay
		}
	}
	blobs, _, err := a.buildBlobs(ctx, sitesURL)
	if err != nil {
		return nil, nil, err
	}
	opts.Blobs = blobs
	opts.FileLimits = a.fileLimits()
	mailCfg, sender, bodies, err := mailOptions(cfg)
	if err != nil {
		return nil, nil, err
	}
	opts.Mail, opts.MailSender, opts.MailBodies = mailCfg, sender, bodies
	if opts.Registrar, opts.Ads, err = a.growthProviders(); err != nil {
		return nil, nil, err
	}
	opts.TLDs = cfg.Growth.TLDs
	svc, err := usecases.New(ctx, service.Config{PublicURL: publicURL, FrontendURL: frontend, SitesURL: sitesURL, SecretKey: []byte(cfg.Identity.SecretKey), CreditPriceCents: cfg.Payments.CreditPriceCents},
		a.Store, idp, a.logger, opts)
	if err != nil {
		return nil, nil, err
	}
	return svc, mounts, nil
}

func randomSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

// isHTTPS reports whether cookies must be marked Secure.
func isHTTPS(u string) bool { return strings.HasPrefix(u, "https://") }
