package app

import (
	"context"
	"errors"
	"fmt"

	"holdco/activities"
	"holdco/config"
	"holdco/models"
	"holdco/providers/companydb"
	"holdco/providers/githubrepo"
	"holdco/providers/gitrepo"
	"holdco/providers/statichost"
	"holdco/service/agenttools"
)

// repoBackend is a repository adapter (providers/gitrepo on a directory
// every worker mounts, providers/githubrepo on a GitHub organization):
// provisioning's side, the deploys' read side and the agents' tools.
type repoBackend interface {
	activities.Repositories
	statichost.Source
	List(ctx context.Context, companyID, prefix string, limit int) ([]gitrepo.Entry, bool, error)
	ReadFile(ctx context.Context, companyID, path string) ([]byte, error)
	Commit(ctx context.Context, companyID string, changes []gitrepo.Change, message, author string) (string, error)
	CommitOnce(ctx context.Context, companyID string, changes []gitrepo.Change, message, author, key string) (string, error)
}

// buildRepositories opens the configured repository backend.
func (a *App) buildRepositories() (repoBackend, error) {
	cfg := a.cfg.Repos
	if cfg.Backend == config.RepoGitHub {
		s, err := githubrepo.New(githubrepo.Config{Token: cfg.GitHubToken, Owner: cfg.GitHubOwner, BaseURL: cfg.GitHubAPIURL, Prefix: cfg.GitHubPrefix})
		if err != nil {
			return nil, fmt.Errorf("HOLDCO_GITHUB_OWNER: %w", err)
		}
		return s, nil
	}
	s, err := gitrepo.New(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("HOLDCO_REPO_DIR: %w", err)
	}
	return s, nil
}

// repoTools adapts the repositories to the agents' repository tools; a
// commit deploys main to the company's site.
type repoTools struct {
	repos repoBackend
	sites *statichost.Host
}

func (r repoTools) ListFiles(ctx context.Context, companyID, prefix string, limit int) ([]agenttools.RepoFile, bool, error) {
	es, more, err := r.repos.List(ctx, companyID, prefix, limit)
	out := make([]agenttools.RepoFile, len(es))
	for i, e := range es {
		out[i] = agenttools.RepoFile{Path: e.Path, SizeBytes: e.Size}
	}
	return out, more, err
}

func (r repoTools) ReadFile(ctx context.Context, companyID, path string) ([]byte, error) {
	b, err := r.repos.ReadFile(ctx, companyID, path)
	if errors.Is(err, gitrepo.ErrNotFound) {
		return nil, agenttools.ErrRepoFileNotFound
	}
	return b, err
}

func (r repoTools) Commit(ctx context.Context, companyID string, changes []agenttools.RepoChange, message, effectID string) (string, error) {
	cs := make([]gitrepo.Change, len(changes))
	for i, c := range changes {
		cs[i] = gitrepo.Change{Path: c.Path, Content: c.Content, Delete: c.Delete}
	}
	id, err := r.repos.CommitOnce(ctx, companyID, cs, message, "holdco agent", effectID)
	if err != nil {
		return "", err
	}
	if err := r.sites.PublishHead(ctx, companyID); err != nil {
		// The commit stands; the next commit or an operator's heal
		// deploys it (the hosting check reports a site behind main).
		return id, fmt.Errorf("commit %s is on main but the site was not updated: %w", id, err)
	}
	return id, nil
}

// companyQueries is what both company-database adapters run.
type companyQueries interface {
	Query(ctx context.Context, companyID, stmt string, readOnly bool) (companydb.QueryResult, error)
	QueryOnce(ctx context.Context, companyID, stmt, effectID string) (companydb.QueryResult, error)
}

// dbTools adapts the company databases to the agents' query_database.
type dbTools struct{ dbs companyQueries }

func (d dbTools) Query(ctx context.Context, companyID, stmt string, readOnly bool, effectID string) (agenttools.QueryResult, error) {
	var r companydb.QueryResult
	var err error
	if effectID != "" && !readOnly {
		r, err = d.dbs.QueryOnce(ctx, companyID, stmt, effectID)
	} else {
		r, err = d.dbs.Query(ctx, companyID, stmt, readOnly)
	}
	var se *companydb.ErrStatement
	switch {
	case errors.As(err, &se):
		return agenttools.QueryResult{}, &agenttools.SQLError{Msg: se.Msg}
	case errors.Is(err, companydb.ErrNoDatabase):
		return agenttools.QueryResult{}, models.Errorf(models.CodeBusinessNotActive, "The company's database is not provisioned yet.")
	case err != nil:
		return agenttools.QueryResult{}, err
	}
	return agenttools.QueryResult{Columns: r.Columns, Rows: r.Rows, Truncated: r.Truncated}, nil
}
