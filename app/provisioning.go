package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"

	"holdco/activities"
	"holdco/providers/companydb"
	"holdco/providers/statichost"
	"holdco/service"
)

// buildCompanyResources opens the companies' repositories (the configured
// backend: one home every worker reaches), the hosting adapter that
// deploys their sites to the blob store, and their databases (SQLite
// files, or a database and role per company on holdco's Postgres, through
// an admin pool), and keeps them
// for the repository and database tools (a.repos, a.dbs) of the agents,
// the connector and REST. The worker builds them for provisioning; an
// API or connector process without the worker builds them for the tools
// alone, so a commit through any process reaches the one home of the
// repository and deploys the site.
func (a *App) buildCompanyResources(ctx context.Context, sitesURL string) (repoBackend, *statichost.Host, activities.Databases, error) {
	cfg := a.cfg
	repos, err := a.buildRepositories()
	if err != nil {
		return nil, nil, nil, err
	}
	blobs, _, err := a.buildBlobs(ctx, sitesURL)
	if err != nil {
		return nil, nil, nil, err
	}
	host, err := a.buildHost(ctx, sitesURL, blobs, repos)
	if err != nil {
		return nil, nil, nil, err
	}
	a.repos = &repoTools{repos: repos, sites: host}
	var dbs activities.Databases
	if cfg.Database.IsPostgres() {
		secret, err := a.Store.Identity().InstanceSecret(ctx, "company-db-passwords", func() []byte {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			return b
		})
		if err != nil {
			return nil, nil, nil, err
		}
		pg, err := companydb.NewPostgres(cfg.Database.URL, secret, a.logger)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("DATABASE_URL: %w", err)
		}
		a.closers = append(a.closers, pg.Close)
		dbs = pg
	} else if dbs, err = companydb.NewSQLite(filepath.Join(cfg.DataDir, "company-dbs")); err != nil {
		return nil, nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	if q, ok := dbs.(companyQueries); ok {
		a.dbs = q // query_database
	}
	return repos, host, dbs, nil
}

// siteEnvKeyName names the instance secret that seals sites' environments:
// every worker reads the same one from the database.
const siteEnvKeyName = "site-env-key"

// buildHost is the hosting adapter on the database and the blob store;
// src nil (a sites process) deploys nothing.
func (a *App) buildHost(ctx context.Context, sitesURL string, blobs statichost.Blobs, src statichost.Source) (*statichost.Host, error) {
	key, err := a.Store.Identity().InstanceSecret(ctx, siteEnvKeyName, func() []byte {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return b
	})
	if err != nil {
		return nil, fmt.Errorf("site environment key: %w", err)
	}
	return statichost.New(statichost.Options{BaseURL: sitesURL, Records: a.Store.Sites(), Blobs: blobs, Source: src, EnvKey: key, SiteTTL: siteStatusTTL})
}

// buildSiteConfig makes the activity that writes a site's environment (its
// API address and company key) on the hosting adapter. It opens the sealed
// company keys with the instance key, as the API does.
func (a *App) buildSiteConfig(ctx context.Context, publicURL string, host *statichost.Host) (*activities.SiteConfig, error) {
	keys, err := service.NewCompanyKeyReader(ctx, a.Store, []byte(a.cfg.Identity.SecretKey))
	if err != nil {
		return nil, err
	}
	return &activities.SiteConfig{Store: a.Store, Keys: keys, Hosting: host, APIURL: publicURL}, nil
}
