package app

import (
	"context"
	"errors"

	"holdco/models"
	"holdco/providers/companydb"
	"holdco/providers/gitrepo"
	"holdco/service/agenttools"
)

// repoTools adapts the local repositories to the agents' repository tools.
type repoTools struct{ repos *gitrepo.Store }

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

func (r repoTools) Commit(ctx context.Context, companyID string, changes []agenttools.RepoChange, message string) (string, error) {
	cs := make([]gitrepo.Change, len(changes))
	for i, c := range changes {
		cs[i] = gitrepo.Change{Path: c.Path, Content: c.Content, Delete: c.Delete}
	}
	return r.repos.Commit(ctx, companyID, cs, message, "holdco agent")
}

// companyQueries is what both company-database adapters run.
type companyQueries interface {
	Query(ctx context.Context, companyID, stmt string, readOnly bool) (companydb.QueryResult, error)
}

// dbTools adapts the company databases to the agents' query_database.
type dbTools struct{ dbs companyQueries }

func (d dbTools) Query(ctx context.Context, companyID, stmt string, readOnly bool) (agenttools.QueryResult, error) {
	r, err := d.dbs.Query(ctx, companyID, stmt, readOnly)
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
