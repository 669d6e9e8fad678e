package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"holdco/api"
	"holdco/config"
	"holdco/internal/origin"
)

// siteStatusTTL bounds how long a sites process serves a site's row as it
// read it: a deploy switch, an archive or an unpublish is seen by every
// sites process within it.
const siteStatusTTL = 2 * time.Second

// Probe paths of the sites listener. A handle never starts with "_", so
// no company's site is shadowed (like the blob downloads' /_blob/).
const (
	sitesLivePath  = "/_health"
	sitesReadyPath = "/_ready"
)

// sitesHandler is the sites role: every company's site at /<handle>/, while
// the company is not archived, from its current deploy. It needs the
// database (the sites' rows) and the blob store (the deploys) only, never
// a worker's disk: any number of sites processes on any machines serve
// every site alike. Nothing of holdco's own (sign-in, device approval, the
// API) is served there.
func (a *App) sitesHandler(ctx context.Context, _, sitesURL string) (http.Handler, error) {
	blobs, localBlobs, err := a.buildBlobs(ctx, sitesURL)
	if err != nil {
		return nil, err
	}
	host, err := a.buildHost(ctx, sitesURL, blobs, nil)
	if err != nil {
		return nil, err
	}
	// A company's attached domain serves its site at the domain's root.
	host.ServeDomains(a.Store.Growth())
	sites := withBlobDownloads(host.Handler(), localBlobs)
	ready := api.HealthHandler(append(a.healthChecks(false), api.HealthCheck{Name: "blobs", Check: func(ctx context.Context) error {
		_, err := blobs.Exists(ctx, "sites/ready-probe")
		return err
	}}), a.logger.With("role", string(RoleSites)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case sitesLivePath:
			live(w)
		case sitesReadyPath:
			ready.ServeHTTP(w, r)
		default:
			sites.ServeHTTP(w, r)
		}
	}), nil
}

// live is a liveness answer: the process serves requests.
func live(w http.ResponseWriter) {
	b, _ := json.Marshal(map[string]string{"status": "ok", "version": api.Version})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// checkSitesOrigin refuses a configuration that would put tenant sites on
// the origin of the API or the frontend, where a tenant's script could read
// sessions and approve device logins.
func checkSitesOrigin(cfg config.Config, publicURL, sitesURL string) error {
	for name, u := range map[string]string{"HOLDCO_PUBLIC_URL": publicURL, "HOLDCO_FRONTEND_URL": cfg.API.FrontendURL} {
		if u != "" && origin.Same(u, sitesURL) {
			return fmt.Errorf("HOLDCO_SITES_PUBLIC_URL: %s shares the origin of %s; tenant sites need an origin of their own", sitesURL, name)
		}
	}
	// The defaults are loopback; an operator's public URLs are checked
	// again here with the API's address filled in.
	return config.CheckSitesHost(sitesURL, publicURL)
}
