package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"holdco/activities"
	"holdco/config"
	"holdco/providers/companydb"
	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
	"holdco/service"
)

// siteStatusTTL bounds how long an archived company's site may still be
// served by a sites listener that had it cached.
const siteStatusTTL = 2 * time.Second

// buildProvisioning makes the provisioning activities with the local
// adapters: bare git repositories and site records under the data dir,
// company databases next to holdco's own (SQLite files, or a database and
// role per company on its Postgres). The local repository and hosting
// adapters keep their state on this machine's disk, so a split deployment
// must give its api and worker processes the same data dir.
func (a *App) buildProvisioning(ctx context.Context, sitesURL string) (*activities.Provisioning, *statichost.Host, error) {
	cfg := a.cfg
	repos, err := gitrepo.New(filepath.Join(cfg.DataDir, "repos"))
	if err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	host, err := statichost.New(filepath.Join(cfg.DataDir, "sites"), sitesURL, repos)
	if err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	var dbs activities.Databases
	if config.IsPostgres(cfg.DatabaseURL) {
		secret, err := a.Store.InstanceSecret(ctx, "company-db-passwords", func() []byte {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			return b
		})
		if err != nil {
			return nil, nil, err
		}
		pg, err := companydb.NewPostgres(cfg.DatabaseURL, secret, a.logger)
		if err != nil {
			return nil, nil, fmt.Errorf("DATABASE_URL: %w", err)
		}
		a.closers = append(a.closers, pg.Close)
		dbs = pg
	} else if dbs, err = companydb.NewSQLite(filepath.Join(cfg.DataDir, "company-dbs")); err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	prov := &activities.Provisioning{Store: a.Store, Repositories: repos, Databases: dbs, Hosting: host}
	return prov, host, nil
}

// sitesHandler is what the sites listener serves: every company's site at
// /<handle>/, while the company is not archived. Nothing of holdco's own
// (sign-in, device approval, the API) is served there.
func (a *App) sitesHandler(host *statichost.Host) http.Handler {
	return host.Handler(a.Store, siteStatusTTL)
}

// checkSitesOrigin refuses a configuration that would put tenant sites on
// the origin of the API or the frontend, where a tenant's script could read
// sessions and approve device logins.
func checkSitesOrigin(cfg config.Config, publicURL, sitesURL string) error {
	for name, u := range map[string]string{"HOLDCO_PUBLIC_URL": publicURL, "HOLDCO_FRONTEND_URL": cfg.FrontendURL} {
		if u != "" && config.SameOrigin(u, sitesURL) {
			return fmt.Errorf("HOLDCO_SITES_PUBLIC_URL: %s shares the origin of %s; tenant sites need an origin of their own", sitesURL, name)
		}
	}
	return nil
}

// buildSiteConfig makes the activity that writes a site's environment (its
// API address and company key) on the hosting adapter. It opens the sealed
// company keys with the instance key, as the API does.
func (a *App) buildSiteConfig(ctx context.Context, publicURL string, host *statichost.Host) (*activities.SiteConfig, error) {
	keys, err := service.NewCompanyKeyReader(ctx, a.Store, []byte(a.cfg.SecretKey))
	if err != nil {
		return nil, err
	}
	return &activities.SiteConfig{Store: a.Store, Keys: keys, Hosting: host, APIURL: publicURL}, nil
}
