package app

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"holdco/config"
	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
)

// siteStatusTTL bounds how long an archived company's site may still be
// served by a sites listener that had it cached.
const siteStatusTTL = 2 * time.Second

// sitesHandler is the sites role: every company's site at /<handle>/, while
// the company is not archived. It needs the store and the local hosting
// adapter's read side only: the site records and the repositories the
// worker wrote under the data dir (a deployment shares that directory
// between its worker and sites processes until a hosting provider of its
// own replaces the local adapter). Nothing of holdco's own (sign-in,
// device approval, the API) is served there.
func (a *App) sitesHandler(ctx context.Context, _, sitesURL string) (http.Handler, error) {
	repos, err := gitrepo.New(filepath.Join(a.cfg.DataDir, "repos"))
	if err != nil {
		return nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	host, err := statichost.New(filepath.Join(a.cfg.DataDir, "sites"), sitesURL, repos)
	if err != nil {
		return nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	// A company's attached domain serves its site at the domain's root.
	host.ServeDomains(a.Store)
	_, blobs, err := a.buildBlobs(ctx, sitesURL)
	if err != nil {
		return nil, err
	}
	return withBlobDownloads(host.Handler(a.Store, siteStatusTTL), blobs), nil
}

// checkSitesOrigin refuses a configuration that would put tenant sites on
// the origin of the API or the frontend, where a tenant's script could read
// sessions and approve device logins.
func checkSitesOrigin(cfg config.Config, publicURL, sitesURL string) error {
	for name, u := range map[string]string{"HOLDCO_PUBLIC_URL": publicURL, "HOLDCO_FRONTEND_URL": cfg.API.FrontendURL} {
		if u != "" && config.SameOrigin(u, sitesURL) {
			return fmt.Errorf("HOLDCO_SITES_PUBLIC_URL: %s shares the origin of %s; tenant sites need an origin of their own", sitesURL, name)
		}
	}
	// The defaults are loopback; an operator's public URLs are checked
	// again here with the API's address filled in.
	return config.CheckSitesHost(sitesURL, publicURL)
}
