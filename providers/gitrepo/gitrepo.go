// Package gitrepo keeps company code repositories as bare git repositories
// on disk (go-git): the local adapter of the code-repository provider.
package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/uuid"

	"holdco/models"
)

// ErrNotFound is returned for a missing repository, branch or file.
var ErrNotFound = fmt.Errorf("gitrepo: %w", models.ErrNotFound)

// Branch is the branch sites are served from.
const Branch = "main"

// Store is a directory of bare repositories, one per company. In a
// cluster every worker mounts the same directory (a shared volume):
// commits move main with a compare-and-set under a file lock, so two
// workers committing at once never lose one.
type Store struct {
	root string
	mu   sync.Mutex // serializes Ensure: two first provisionings race here
	// commits serializes the commits of each repository.
	commits sync.Map // company id → *sync.Mutex
}

func (s *Store) lockOf(companyID string) *sync.Mutex {
	l, _ := s.commits.LoadOrStore(companyID, &sync.Mutex{})
	return l.(*sync.Mutex)
}

// New returns a store under root (created if needed).
func New(root string) (*Store, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("gitrepo: %w", err)
	}
	return &Store{root: root}, nil
}

func (s *Store) path(companyID string) (string, error) {
	if _, err := uuid.Parse(companyID); err != nil {
		return "", fmt.Errorf("gitrepo: company id %q is not a UUID", companyID)
	}
	return filepath.Join(s.root, companyID+".git"), nil
}

// Ensure makes the company's bare repository exist. A new one is seeded
// with a README and an index.html on main unless seed is false (an import
// resume: the repository stays empty). An existing valid repository is
// never changed. The repository is built in a temporary directory and
// renamed into place, so a crash never leaves a half-made one that looks
// valid; a broken leftover is replaced.
//
// Several workers may share root (a shared volume): the rename is atomic,
// so two that create the same repository at once end with one of them,
// and each reports the one in place.
func (s *Store) Ensure(ctx context.Context, companyID, name, idea string, seed bool) (models.RepositoryInfo, error) {
	dir, err := s.path(companyID)
	if err != nil {
		return models.RepositoryInfo{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Check(ctx, companyID) == nil {
		return s.Status(ctx, companyID)
	}
	tmp, err := os.MkdirTemp(s.root, ".tmp-"+companyID+"-")
	if err != nil {
		return models.RepositoryInfo{}, fmt.Errorf("gitrepo: %w", err)
	}
	defer os.RemoveAll(tmp)
	repo, err := git.PlainInitWithOptions(tmp, &git.PlainInitOptions{Bare: true, InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(Branch)}})
	if err != nil {
		return models.RepositoryInfo{}, fmt.Errorf("gitrepo: init: %w", err)
	}
	if seed {
		if err := seedRepo(repo, name, idea); err != nil {
			return models.RepositoryInfo{}, err
		}
	}
	if err := os.RemoveAll(dir); err != nil { // a broken leftover
		return models.RepositoryInfo{}, fmt.Errorf("gitrepo: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return models.RepositoryInfo{}, fmt.Errorf("gitrepo: %w", err)
	}
	return s.Status(ctx, companyID)
}

// Home names a company's repository in this backend.
func Home(companyID string) string { return "local:" + companyID + ".git" }

// Status asks the repository's home about it: Exists false only when the
// directory is not there (gone); a repository that cannot be read is an
// error. FirstCommit is main's root commit ("" while main has none).
func (s *Store) Status(_ context.Context, companyID string) (models.RepositoryInfo, error) {
	dir, err := s.path(companyID)
	if err != nil {
		return models.RepositoryInfo{}, err
	}
	info := models.RepositoryInfo{Home: Home(companyID), Ref: dir}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return info, nil
	} else if err != nil {
		return info, fmt.Errorf("gitrepo: %w", err)
	}
	repo, tip, err := s.tip(companyID)
	if err != nil {
		return info, fmt.Errorf("gitrepo: open %s: %w", companyID, err)
	}
	info.Exists = true
	if tip == nil {
		return info, nil
	}
	root, err := rootCommit(repo, tip)
	if err != nil {
		return info, err
	}
	info.FirstCommit = root
	return info, nil
}

// rootCommit follows first parents from c to the commit that has none.
func rootCommit(repo *git.Repository, c *object.Commit) (string, error) {
	for len(c.ParentHashes) > 0 {
		next, err := repo.CommitObject(c.ParentHashes[0])
		if err != nil {
			return "", fmt.Errorf("gitrepo: read history: %w", err)
		}
		c = next
	}
	return c.Hash.String(), nil
}

// SeedFiles are the README.md and index.html a new repository starts
// with (every repository backend seeds the same).
func SeedFiles(name, idea string) (readme, index string) {
	return fmt.Sprintf("# %s\n\n%s\n", name, idea),
		fmt.Sprintf("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title></head>\n<body><h1>%s</h1><p>Coming soon.</p></body></html>\n",
			html.EscapeString(name), html.EscapeString(name))
}

// seedRepo writes the first commit straight into the bare repository:
// blobs, one tree, a commit, and branch main pointing at it.
func seedRepo(repo *git.Repository, name, idea string) error {
	st := repo.Storer
	readme, index := SeedFiles(name, idea)
	files := []struct{ name, content string }{ // sorted by name, as trees must be
		{"README.md", readme},
		{"index.html", index},
	}
	tree := &object.Tree{}
	for _, f := range files {
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, f.content); err != nil {
			return err
		}
		w.Close()
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			return fmt.Errorf("gitrepo: seed: %w", err)
		}
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: f.name, Mode: filemode.Regular, Hash: h})
	}
	treeHash, err := store(st, tree)
	if err != nil {
		return err
	}
	sig := object.Signature{Name: "holdco", Email: "provisioning@holdco.invalid", When: time.Now()}
	commitHash, err := store(st, &object.Commit{Author: sig, Committer: sig, Message: "Initial commit\n", TreeHash: treeHash})
	if err != nil {
		return err
	}
	return st.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(Branch), commitHash))
}

type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func store(st interface {
	NewEncodedObject() plumbing.EncodedObject
	SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error)
}, o encoder) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("gitrepo: seed: %w", err)
	}
	return st.SetEncodedObject(obj)
}

// Check opens the repository and resolves main when it exists: a missing
// or corrupt repository is an error, an unseeded (empty) one is not.
func (s *Store) Check(_ context.Context, companyID string) error {
	dir, err := s.path(companyID)
	if err != nil {
		return err
	}
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return fmt.Errorf("gitrepo: open %s: %w", companyID, err)
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(Branch), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil // an import resume not pushed yet
	}
	if err != nil {
		return fmt.Errorf("gitrepo: read %s: %w", Branch, err)
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return fmt.Errorf("gitrepo: read commit: %w", err)
	}
	if _, err := c.Tree(); err != nil {
		return fmt.Errorf("gitrepo: read tree: %w", err)
	}
	return nil
}

// ReadFile returns a file from the tip of main.
func (s *Store) ReadFile(_ context.Context, companyID, path string) ([]byte, error) {
	dir, err := s.path(companyID)
	if err != nil {
		return nil, err
	}
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return nil, ErrNotFound
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(Branch), true)
	if err != nil {
		return nil, ErrNotFound
	}
	c, err := repo.CommitObject(ref.Hash())
	if err != nil {
		return nil, err
	}
	f, err := c.File(path)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r, err := f.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Delete removes the repository (tests; "deleted behind the service's back").
func (s *Store) Delete(_ context.Context, companyID string) error {
	dir, err := s.path(companyID)
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}
