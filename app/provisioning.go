package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"path/filepath"

	"holdco/activities"
	"holdco/config"
	"holdco/providers/companydb"
	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
)

// sitesPath is where the local hosting adapter serves company sites on the
// REST listener.
const sitesPath = "/sites"

// buildProvisioning makes the provisioning activities with the local
// adapters: bare git repositories and site records under the data dir,
// company databases next to holdco's own (SQLite files, or a database and
// role per company on its Postgres). The local repository and hosting
// adapters keep their state on this machine's disk, so a split deployment
// must give its api and worker processes the same data dir.
func (a *App) buildProvisioning(ctx context.Context, publicURL string) (*activities.Provisioning, http.Handler, error) {
	cfg := a.cfg
	repos, err := gitrepo.New(filepath.Join(cfg.DataDir, "repos"))
	if err != nil {
		return nil, nil, fmt.Errorf("HOLDCO_DATA_DIR: %w", err)
	}
	host, err := statichost.New(filepath.Join(cfg.DataDir, "sites"), publicURL+sitesPath, repos)
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
	return prov, http.StripPrefix(sitesPath, host.Handler()), nil
}
