package app

import (
	oauthsvc "holdco/service/oauth"
)

// oauthConfig is the authorization server's settings: its issuer, the
// connector URL its tokens are bound to, and the pre-registered clients.
func (a *App) oauthConfig() oauthsvc.Config {
	cfg := oauthsvc.Config{Issuer: a.oauthURL(), Resource: a.mcpURL()}
	for _, c := range a.cfg.OAuth.Clients {
		cfg.Clients = append(cfg.Clients, oauthsvc.PreregisteredClient{ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs, ApplicationType: c.ApplicationType})
	}
	return cfg
}
