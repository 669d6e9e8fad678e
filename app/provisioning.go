package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"

	"holdco/activities"
	"holdco/providers/companydb"
	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
	"holdco/service"
)

// buildProvisioning makes the worker role's provisioning activities with
// the local adapters: bare git repositories and site records under the
// data dir, company databases next to holdco's own (SQLite files, or a
// database and role per company on its Postgres, through an admin pool
// only the worker opens). The local repository and hosting adapters keep
// their state on this machine's disk, so a split deployment gives its
// worker and sites processes the same data dir.
func (a *App) buildProvisioning(ctx context.Context, sitesURL string) (*activities.Provisioning, *statichost.Host, error) {
	cfg := a.cfg
	repos, err := gitrepo.New(filepath.Join(cfg.DataDir, "repos"))
	if err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	a.repos = repos // the agents' repository tools on this worker
	host, err := statichost.New(filepath.Join(cfg.DataDir, "sites"), sitesURL, repos)
	if err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	var dbs activities.Databases
	if cfg.Database.IsPostgres() {
		secret, err := a.Store.InstanceSecret(ctx, "company-db-passwords", func() []byte {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			return b
		})
		if err != nil {
			return nil, nil, err
		}
		pg, err := companydb.NewPostgres(cfg.Database.URL, secret, a.logger)
		if err != nil {
			return nil, nil, fmt.Errorf("DATABASE_URL: %w", err)
		}
		a.closers = append(a.closers, pg.Close)
		dbs = pg
	} else if dbs, err = companydb.NewSQLite(filepath.Join(cfg.DataDir, "company-dbs")); err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	if q, ok := dbs.(companyQueries); ok {
		a.dbs = q // the agents' query_database on this worker
	}
	prov := &activities.Provisioning{Store: a.Store, Repositories: repos, Databases: dbs, Hosting: host}
	return prov, host, nil
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
