package app

import (
	"context"
	"net/http"

	"holdco/api"
	"holdco/mcp"
	"holdco/service/connector"
)

// mcpHandler is the mcp role's listener: the connector for AI assistants
// at the root path of its own origin, with GET /health and the protected
// resource metadata beside it.
// Bearer tokens are the authorization server's access tokens
// (service/oauth's Introspect); nothing else is accepted.
func (a *App) mcpHandler(ctx context.Context, publicURL, sitesURL string) (http.Handler, error) {
	svc, _, err := a.services(ctx, publicURL, sitesURL)
	if err != nil {
		return nil, err
	}
	conn := connector.New(connector.Deps{Core: svc.Core, Companies: svc.Companies, Billing: svc.Billing, Turns: svc.Turns,
		Files: svc.Files, Sales: svc.Sales, Tools: svc.Tools, Founding: svc.Founding})
	return mcp.New(mcp.Deps{
		Connector:           conn,
		Tokens:              svc.OAuth,
		PublicURL:           a.mcpURL(),
		AuthorizationServer: a.oauthURL(),
		Health:              reservedHandler(a.healthChecks(true), a.logger.With("role", string(RoleMCP))),
		Logger:              a.logger.With("role", string(RoleMCP)),
		Version:             api.Version,
	}), nil
}
