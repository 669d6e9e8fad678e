// Package githubrepo keeps company code repositories on GitHub (or a
// GitHub Enterprise server) through its REST API with go-github: the
// hosted adapter of the code-repository provider. Every worker reaches
// the same repositories, so none keeps one on its disk.
//
// Endpoints used: repositories (create in an organization, get, delete),
// contents (the first file of an empty repository: the Git data API
// refuses empty repositories), commits (list, for main's first commit)
// and the Git data API (refs, commits, trees, blobs). main moves only by
// a fast-forward update of its ref, so two workers committing at once
// never lose a commit: the loser builds again on the new tip.
package githubrepo

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v75/github"
	"github.com/google/uuid"

	"holdco/models"
	"holdco/providers/gitrepo"
)

// Config names the account and the API.
type Config struct {
	// Token is a token allowed to create and write the organization's
	// repositories.
	Token string
	// Owner is the organization the repositories live in.
	Owner string
	// BaseURL is the REST API's address (default GitHub's; a GitHub
	// Enterprise server's …/api/v3/, or a test server).
	BaseURL string
	// Prefix starts every repository's name (default "holdco-"); the
	// company id follows.
	Prefix string
	// HTTPClient nil: a client with a 30-second timeout.
	HTTPClient *http.Client
}

// Store is the organization's repositories, one per company.
type Store struct {
	gh     *github.Client
	owner  string
	prefix string
}

// New returns a store; nothing is called before the first use.
func New(c Config) (*Store, error) {
	if c.Owner == "" {
		return nil, errors.New("githubrepo: an owner (organization) is required")
	}
	if c.Token == "" {
		return nil, errors.New("githubrepo: a token is required")
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	gh := github.NewClient(hc).WithAuthToken(c.Token)
	if c.BaseURL != "" {
		u, err := url.Parse(strings.TrimRight(c.BaseURL, "/") + "/")
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("githubrepo: invalid API URL %q", c.BaseURL)
		}
		gh.BaseURL = u
	}
	if c.Prefix == "" {
		c.Prefix = "holdco-"
	}
	return &Store{gh: gh, owner: c.Owner, prefix: c.Prefix}, nil
}

func (s *Store) name(companyID string) (string, error) {
	if _, err := uuid.Parse(companyID); err != nil {
		return "", fmt.Errorf("githubrepo: company id %q is not a UUID", companyID)
	}
	return s.prefix + companyID, nil
}

// Home names a company's repository in this backend.
func (s *Store) Home(companyID string) string {
	return "github:" + s.owner + "/" + s.prefix + companyID
}

const branchRef = "heads/" + gitrepo.Branch

func status(resp *github.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// isEmpty: the Git data API's answer for a repository without commits.
func isEmpty(resp *github.Response) bool { return status(resp) == http.StatusConflict }

// Status asks GitHub about the company's repository: Exists false only
// when GitHub answers 404 for it; any other failure is an error.
func (s *Store) Status(ctx context.Context, companyID string) (models.RepositoryInfo, error) {
	name, err := s.name(companyID)
	if err != nil {
		return models.RepositoryInfo{}, err
	}
	info := models.RepositoryInfo{Home: s.Home(companyID)}
	repo, resp, err := s.gh.Repositories.Get(ctx, s.owner, name)
	if status(resp) == http.StatusNotFound {
		return info, nil
	}
	if err != nil {
		return info, fmt.Errorf("githubrepo: get %s: %w", name, err)
	}
	info.Exists, info.Ref = true, repo.GetCloneURL()
	// The last page of one commit per page is main's first commit.
	opts := &github.CommitsListOptions{SHA: gitrepo.Branch, ListOptions: github.ListOptions{PerPage: 1}}
	commits, resp, err := s.gh.Repositories.ListCommits(ctx, s.owner, name, opts)
	if isEmpty(resp) || status(resp) == http.StatusNotFound {
		return info, nil // no main yet
	}
	if err != nil {
		return info, fmt.Errorf("githubrepo: list commits: %w", err)
	}
	if resp.LastPage > 1 {
		opts.Page = resp.LastPage
		if commits, _, err = s.gh.Repositories.ListCommits(ctx, s.owner, name, opts); err != nil {
			return info, fmt.Errorf("githubrepo: list commits: %w", err)
		}
	}
	if len(commits) > 0 {
		info.FirstCommit = commits[len(commits)-1].GetSHA()
	}
	return info, nil
}

// Ensure makes the company's repository exist: a new one is private and,
// unless seed is false (an import resume), gets a README and an
// index.html on main. An existing repository is never changed.
func (s *Store) Ensure(ctx context.Context, companyID, name, idea string, seed bool) (models.RepositoryInfo, error) {
	info, err := s.Status(ctx, companyID)
	if err != nil || info.Exists {
		return info, err
	}
	repoName, _ := s.name(companyID)
	_, resp, err := s.gh.Repositories.Create(ctx, s.owner, &github.Repository{
		Name: github.Ptr(repoName), Private: github.Ptr(true), Description: github.Ptr(name),
	})
	if status(resp) == http.StatusUnprocessableEntity {
		return s.Status(ctx, companyID) // another worker made it first
	}
	if err != nil {
		return info, fmt.Errorf("githubrepo: create %s: %w", repoName, err)
	}
	if seed {
		readme, index := gitrepo.SeedFiles(name, idea)
		if _, err := s.Commit(ctx, companyID, []gitrepo.Change{{Path: "README.md", Content: []byte(readme)}, {Path: "index.html", Content: []byte(index)}}, "Initial commit", "holdco"); err != nil {
			return info, err
		}
	}
	return s.Status(ctx, companyID)
}

// Check reads the repository and main's tree (when main exists).
func (s *Store) Check(ctx context.Context, companyID string) error {
	head, err := s.Head(ctx, companyID)
	if err != nil {
		return err
	}
	if head == "" {
		return nil
	}
	_, err = s.treeOf(ctx, companyID, head)
	return err
}

// Head is main's commit ("" for an empty repository); a repository
// GitHub does not have is gitrepo.ErrNotFound.
func (s *Store) Head(ctx context.Context, companyID string) (string, error) {
	name, err := s.name(companyID)
	if err != nil {
		return "", err
	}
	ref, resp, err := s.gh.Git.GetRef(ctx, s.owner, name, branchRef)
	switch {
	case err == nil:
		return ref.GetObject().GetSHA(), nil
	case isEmpty(resp):
		return "", nil
	case status(resp) == http.StatusNotFound:
		// No such branch, or no such repository.
		if _, resp, err := s.gh.Repositories.Get(ctx, s.owner, name); status(resp) == http.StatusNotFound {
			return "", gitrepo.ErrNotFound
		} else if err != nil {
			return "", fmt.Errorf("githubrepo: get %s: %w", name, err)
		}
		return "", nil
	}
	return "", fmt.Errorf("githubrepo: read main: %w", err)
}

// treeOf is the recursive tree of a commit.
func (s *Store) treeOf(ctx context.Context, companyID, commitID string) ([]*github.TreeEntry, error) {
	name, err := s.name(companyID)
	if err != nil {
		return nil, err
	}
	c, resp, err := s.gh.Git.GetCommit(ctx, s.owner, name, commitID)
	if status(resp) == http.StatusNotFound || status(resp) == http.StatusUnprocessableEntity {
		return nil, gitrepo.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("githubrepo: read commit: %w", err)
	}
	tree, _, err := s.gh.Git.GetTree(ctx, s.owner, name, c.GetTree().GetSHA(), true)
	if err != nil {
		return nil, fmt.Errorf("githubrepo: read tree: %w", err)
	}
	if tree.GetTruncated() {
		return nil, errors.New("githubrepo: the tree is too large for one read")
	}
	var out []*github.TreeEntry
	for _, e := range tree.Entries {
		if e.GetType() == "blob" {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetPath() < out[j].GetPath() })
	return out, nil
}

// Files is the tree of a commit: every file's path, blob id and size.
func (s *Store) Files(ctx context.Context, companyID, commitID string) ([]models.RepoFile, error) {
	entries, err := s.treeOf(ctx, companyID, commitID)
	if err != nil {
		return nil, err
	}
	out := make([]models.RepoFile, len(entries))
	for i, e := range entries {
		out[i] = models.RepoFile{Path: e.GetPath(), ID: e.GetSHA(), Size: int64(e.GetSize())}
	}
	return out, nil
}

// ReadObject reads a blob by its id.
func (s *Store) ReadObject(ctx context.Context, companyID, id string) ([]byte, error) {
	name, err := s.name(companyID)
	if err != nil {
		return nil, err
	}
	b, resp, err := s.gh.Git.GetBlob(ctx, s.owner, name, id)
	if status(resp) == http.StatusNotFound || status(resp) == http.StatusUnprocessableEntity {
		return nil, gitrepo.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("githubrepo: read blob: %w", err)
	}
	if b.GetEncoding() != "base64" {
		return []byte(b.GetContent()), nil
	}
	return base64.StdEncoding.DecodeString(strings.ReplaceAll(b.GetContent(), "\n", ""))
}

// ReadFile returns a file from the tip of main.
func (s *Store) ReadFile(ctx context.Context, companyID, path string) ([]byte, error) {
	head, err := s.Head(ctx, companyID)
	if err != nil {
		return nil, err
	}
	if head == "" {
		return nil, gitrepo.ErrNotFound
	}
	entries, err := s.treeOf(ctx, companyID, head)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.GetPath() == path {
			return s.ReadObject(ctx, companyID, e.GetSHA())
		}
	}
	return nil, gitrepo.ErrNotFound
}

// List returns the files of main under prefix, in path order, at most
// limit of them, and whether there were more.
func (s *Store) List(ctx context.Context, companyID, prefix string, limit int) ([]gitrepo.Entry, bool, error) {
	head, err := s.Head(ctx, companyID)
	if err != nil || head == "" {
		return nil, false, err
	}
	entries, err := s.treeOf(ctx, companyID, head)
	if err != nil {
		return nil, false, err
	}
	var out []gitrepo.Entry
	for _, e := range entries {
		if !strings.HasPrefix(e.GetPath(), prefix) {
			continue
		}
		if len(out) == limit {
			return out, true, nil
		}
		out = append(out, gitrepo.Entry{Path: e.GetPath(), Size: int64(e.GetSize())})
	}
	return out, false, nil
}

// errMoved: main moved between reading it and updating it.
var errMoved = errors.New("githubrepo: main moved")

// Commit applies changes to main in one commit and returns its id.
func (s *Store) Commit(ctx context.Context, companyID string, changes []gitrepo.Change, message, author string) (string, error) {
	return s.retry(ctx, func() (string, error) { return s.commitOnce(ctx, companyID, changes, "", message, author) })
}

// CommitOnce is Commit for the call named by key ("" for none), as
// gitrepo's: the commit carries gitrepo.CallTrailer with the key, and a
// commit among main's last 100 that carries it already is answered instead
// of committing again (searched before every attempt).
func (s *Store) CommitOnce(ctx context.Context, companyID string, changes []gitrepo.Change, message, author, key string) (string, error) {
	if key == "" {
		return s.Commit(ctx, companyID, changes, message, author)
	}
	trailer := gitrepo.CallTrailer + ": " + key
	message = strings.TrimSpace(message) + "\n\n" + trailer
	return s.retry(ctx, func() (string, error) {
		if id, err := s.findCall(ctx, companyID, trailer); err != nil || id != "" {
			return id, err
		}
		return s.commitOnce(ctx, companyID, changes, "", message, author)
	})
}

// findCall returns the commit among main's last 100 whose message ends
// with trailer ("" when none does or main does not exist yet).
func (s *Store) findCall(ctx context.Context, companyID, trailer string) (string, error) {
	name, err := s.name(companyID)
	if err != nil {
		return "", err
	}
	cs, resp, err := s.gh.Repositories.ListCommits(ctx, s.owner, name, &github.CommitsListOptions{SHA: gitrepo.Branch, ListOptions: github.ListOptions{PerPage: 100}})
	if isEmpty(resp) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("githubrepo: list commits: %w", err)
	}
	for _, c := range cs {
		if strings.HasSuffix(strings.TrimSpace(c.GetCommit().GetMessage()), "\n"+trailer) {
			return c.GetSHA(), nil
		}
	}
	return "", nil
}

// Restore commits, on top of main, the tree of an earlier commit.
func (s *Store) Restore(ctx context.Context, companyID, commitID, message, author string) (string, error) {
	return s.retry(ctx, func() (string, error) { return s.commitOnce(ctx, companyID, nil, commitID, message, author) })
}

func (s *Store) retry(ctx context.Context, once func() (string, error)) (string, error) {
	for attempt := 0; ; attempt++ {
		id, err := once()
		if errors.Is(err, errMoved) && attempt < 10 && ctx.Err() == nil {
			continue
		}
		return id, err
	}
}

// commitOnce builds a commit on main's tip (changes on its tree, or the
// tree of restore) and fast-forwards main to it.
func (s *Store) commitOnce(ctx context.Context, companyID string, changes []gitrepo.Change, restore, message, author string) (string, error) {
	name, err := s.name(companyID)
	if err != nil {
		return "", err
	}
	head, err := s.Head(ctx, companyID)
	if err != nil {
		return "", err
	}
	if head == "" {
		if restore != "" {
			return "", gitrepo.ErrNotFound
		}
		// The Git data API refuses an empty repository: its first file
		// goes through the contents API, which makes main.
		first := changes[0]
		if first.Delete {
			return "", errors.New("githubrepo: nothing to delete in an empty repository")
		}
		_, resp, err := s.gh.Repositories.CreateFile(ctx, s.owner, name, first.Path, &github.RepositoryContentFileOptions{
			Message: github.Ptr(strings.TrimSpace(message)), Content: first.Content, Branch: github.Ptr(gitrepo.Branch),
			Author: &github.CommitAuthor{Name: github.Ptr(author), Email: github.Ptr("agent@holdco.invalid")},
		})
		if status(resp) == http.StatusConflict || status(resp) == http.StatusUnprocessableEntity {
			return "", errMoved // another worker made main meanwhile
		}
		if err != nil {
			return "", fmt.Errorf("githubrepo: first commit: %w", err)
		}
		if len(changes) == 1 {
			return s.Head(ctx, companyID)
		}
		return s.commitOnce(ctx, companyID, changes[1:], "", message, author)
	}
	parent, _, err := s.gh.Git.GetCommit(ctx, s.owner, name, head)
	if err != nil {
		return "", fmt.Errorf("githubrepo: read main: %w", err)
	}
	var treeSHA string
	if restore != "" {
		c, resp, err := s.gh.Git.GetCommit(ctx, s.owner, name, restore)
		if status(resp) == http.StatusNotFound || status(resp) == http.StatusUnprocessableEntity {
			return "", gitrepo.ErrNotFound
		}
		if err != nil {
			return "", fmt.Errorf("githubrepo: read commit: %w", err)
		}
		treeSHA = c.GetTree().GetSHA()
	} else {
		entries := make([]*github.TreeEntry, 0, len(changes))
		for _, ch := range changes {
			e := &github.TreeEntry{Path: github.Ptr(ch.Path), Mode: github.Ptr("100644"), Type: github.Ptr("blob")}
			if !ch.Delete {
				b, _, err := s.gh.Git.CreateBlob(ctx, s.owner, name, github.Blob{
					Content: github.Ptr(base64.StdEncoding.EncodeToString(ch.Content)), Encoding: github.Ptr("base64")})
				if err != nil {
					return "", fmt.Errorf("githubrepo: write %s: %w", ch.Path, err)
				}
				e.SHA = b.SHA
			}
			entries = append(entries, e)
		}
		tree, _, err := s.gh.Git.CreateTree(ctx, s.owner, name, parent.GetTree().GetSHA(), entries)
		if err != nil {
			return "", fmt.Errorf("githubrepo: write tree: %w", err)
		}
		treeSHA = tree.GetSHA()
	}
	now := time.Now()
	sig := &github.CommitAuthor{Name: github.Ptr(author), Email: github.Ptr("agent@holdco.invalid"), Date: &github.Timestamp{Time: now}}
	c, _, err := s.gh.Git.CreateCommit(ctx, s.owner, name, github.Commit{
		Message: github.Ptr(strings.TrimSpace(message) + "\n"), Tree: &github.Tree{SHA: github.Ptr(treeSHA)},
		Parents: []*github.Commit{{SHA: github.Ptr(head)}}, Author: sig, Committer: sig,
	}, nil)
	if err != nil {
		return "", fmt.Errorf("githubrepo: write commit: %w", err)
	}
	_, resp, err := s.gh.Git.UpdateRef(ctx, s.owner, name, branchRef, github.UpdateRef{SHA: c.GetSHA(), Force: github.Ptr(false)})
	if status(resp) == http.StatusUnprocessableEntity || status(resp) == http.StatusConflict {
		return "", errMoved // not a fast-forward: another commit landed
	}
	if err != nil {
		return "", fmt.Errorf("githubrepo: move main: %w", err)
	}
	return c.GetSHA(), nil
}

// Delete removes the repository (tests; "deleted behind the service's back").
func (s *Store) Delete(ctx context.Context, companyID string) error {
	name, err := s.name(companyID)
	if err != nil {
		return err
	}
	resp, err := s.gh.Repositories.Delete(ctx, s.owner, name)
	if status(resp) == http.StatusNotFound {
		return nil
	}
	return err
}
