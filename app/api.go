package app

import (
	"context"
	"net/http"

	"holdco/api"
	"holdco/console"
	"holdco/oauth"
)

// apiHandler is the api role: the REST adapter on the use-case layer. It
// builds the identity provider and payments (buildService) but no
// provisioning adapter; workflows run on the worker role.
func (a *App) apiHandler(ctx context.Context, publicURL, sitesURL string) (http.Handler, error) {
	svc, mounts, err := a.services(ctx, publicURL, sitesURL)
	if err != nil {
		return nil, err
	}
	a.startAnalyticsWriter(svc.Analytics)
	rest := api.New(api.Deps{
		Logger:         a.logger,
		Service:        svc,
		SecureCookies:  isHTTPS(publicURL),
		Mount:          mounts,
		Health:         a.healthChecks(true),
		TrustedProxies: a.cfg.Analytics.TrustedProxies,
	})
	if a.cfg.API.FrontendURL != "" {
		return rest, nil
	}
	// No frontend: holdco serves its own web console beside the API.
	return console.Wrap(rest, console.New(console.Deps{Service: svc, Logger: a.logger.With("role", string(RoleAPI))})), nil
}

// oauthHandler is the oauth role's listener: the authorization server
// (oauth/) on its own origin, and /health.
func (a *App) oauthHandler(ctx context.Context, publicURL, sitesURL string) (http.Handler, error) {
	svc, _, err := a.services(ctx, publicURL, sitesURL)
	if err != nil {
		return nil, err
	}
	logger := a.logger.With("role", string(RoleOAuth))
	return oauth.New(oauth.Deps{Service: svc.OAuth, Logger: logger, Secure: isHTTPS(a.oauthURL()),
		Health: reservedHandler(a.healthChecks(false), logger)}), nil
}
