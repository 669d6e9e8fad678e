package app

import (
	"context"
	"net/http"

	"holdco/api"
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
	return api.New(api.Deps{
		Logger:         a.logger,
		Service:        svc,
		SecureCookies:  isHTTPS(publicURL),
		Mount:          mounts,
		Health:         a.healthChecks(true),
		TrustedProxies: a.cfg.Analytics.TrustedProxies,
	}), nil
}

// mcpHandler is the mcp role's listener. The connector for AI assistants
// lands on it in its own issue; until then it answers /health only.
func (a *App) mcpHandler(context.Context, string, string) (http.Handler, error) {
	return reservedHandler(a.healthChecks(true), a.logger.With("role", string(RoleMCP))), nil
}

// oauthHandler is the oauth role's listener. The authorization server
// lands on it in its own issue; until then it answers /health only.
func (a *App) oauthHandler(context.Context, string, string) (http.Handler, error) {
	return reservedHandler(a.healthChecks(false), a.logger.With("role", string(RoleOAuth))), nil
}
