package agenttools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/gitrepo"
	"holdco/service/agenttools"
	"holdco/service/companies"
	"holdco/service/usecases"
)

// gitTools is the worker's adapter (app/repository.go) in the tests.
type gitTools struct{ s *gitrepo.Store }

func (g gitTools) ListFiles(ctx context.Context, companyID, prefix string, limit int) ([]agenttools.RepoFile, bool, error) {
	es, more, err := g.s.List(ctx, companyID, prefix, limit)
	out := make([]agenttools.RepoFile, len(es))
	for i, e := range es {
		out[i] = agenttools.RepoFile{Path: e.Path, SizeBytes: e.Size}
	}
	return out, more, err
}

func (g gitTools) ReadFile(ctx context.Context, companyID, path string) ([]byte, error) {
	b, err := g.s.ReadFile(ctx, companyID, path)
	if errors.Is(err, gitrepo.ErrNotFound) {
		return nil, agenttools.ErrRepoFileNotFound
	}
	return b, err
}

func (g gitTools) Commit(ctx context.Context, companyID string, changes []agenttools.RepoChange, message, effectID string) (string, error) {
	cs := make([]gitrepo.Change, len(changes))
	for i, c := range changes {
		cs[i] = gitrepo.Change{Path: c.Path, Content: c.Content, Delete: c.Delete}
	}
	return g.s.CommitOnce(ctx, companyID, cs, message, "holdco agent", effectID)
}

func TestRepositoryTools(t *testing.T) {
	repos, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	w := newWorld(t, usecases.Options{Repository: gitTools{repos}})
	ctx := context.Background()
	_, err = repos.Ensure(ctx, w.company, "Ada Tools", "tools", true)
	require.NoError(t, err)

	var commit agenttools.CommitResult
	w.call(t, "commit_repository_files", map[string]any{"message": "New landing page", "files": []map[string]any{
		{"path": "index.html", "content": "<h1>Ada</h1>"},
		{"path": "img/logo.png", "content": "iVBORw0KGgo=", "encoding": "base64"},
		{"path": "README.md"}, // no content: deleted
	}}, &commit)
	assert.Len(t, commit.CommitID, 40)
	var list agenttools.RepositoryFileList
	w.call(t, "list_repository_files", map[string]any{}, &list)
	require.Len(t, list.Files, 2)
	assert.Equal(t, "img/logo.png", list.Files[0].Path)
	var page agenttools.RepositoryFileContent
	w.call(t, "read_repository_file", map[string]any{"path": "index.html"}, &page)
	assert.Equal(t, "<h1>Ada</h1>", page.Content)
	assert.Equal(t, "text", page.Encoding)
	w.call(t, "read_repository_file", map[string]any{"path": "img/logo.png"}, &page)
	assert.Equal(t, "base64", page.Encoding)

	for _, bad := range []string{"../etc/passwd", "/abs", ".git/config", "a//b", "dir/", "a/./b"} {
		_, err := w.cat.Call(w.agent, w.company, "read_repository_file", json.RawMessage(`{"path":"`+bad+`"}`))
		assert.Equal(t, models.CodeInvalidArgument, domainErr(t, err).Code, bad)
	}
	_, err = w.cat.Call(w.agent, w.company, "read_repository_file", json.RawMessage(`{"path":"missing.txt"}`))
	assert.Equal(t, models.CodeNotFound, domainErr(t, err).Code)
	big := strings.Repeat("x", agenttools.MaxRepoCommitBytes+1)
	raw, _ := json.Marshal(map[string]any{"message": "big", "files": []map[string]any{{"path": "big.txt", "content": big}}})
	_, err = w.cat.Call(w.agent, w.company, "commit_repository_files", raw)
	assert.Equal(t, models.CodeTooLarge, domainErr(t, err).Code)
	_, err = w.cat.Call(w.agent, w.company, "commit_repository_files", json.RawMessage(`{"message":" ","files":[{"path":"a.txt","content":"a"}]}`))
	assert.Equal(t, "message", domainErr(t, err).Field)

	// Another tenant's company: refused before the adapter is reached.
	bob, bobCong := w.e.User(t, "bob@example.com")
	co, err := w.e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Bob Repo"})
	require.NoError(t, err)
	_, err = w.cat.Call(w.agent, co.ID, "list_repository_files", json.RawMessage(`{}`))
	assert.Equal(t, models.CodeForbidden, domainErr(t, err).Code)

	// Without the worker's adapter: not_configured.
	plain := newWorld(t, usecases.Options{})
	_, err = plain.cat.Call(plain.agent, plain.company, "list_repository_files", json.RawMessage(`{}`))
	assert.Equal(t, agenttools.CodeNotConfigured, domainErr(t, err).Code)
}
