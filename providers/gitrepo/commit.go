package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Entry is a file of a repository's main branch.
type Entry struct {
	Path string
	Size int64
}

// Change writes a file (Content) or deletes it (Delete).
type Change struct {
	Path    string
	Content []byte
	Delete  bool
}

// List returns the files of main under prefix (all with ""), in path
// order, at most limit of them, and whether there were more.
func (s *Store) List(_ context.Context, companyID, prefix string, limit int) ([]Entry, bool, error) {
	_, tip, err := s.tip(companyID)
	if err != nil || tip == nil {
		return nil, false, err
	}
	tree, err := tip.Tree()
	if err != nil {
		return nil, false, err
	}
	var out []Entry
	more := false
	err = tree.Files().ForEach(func(f *object.File) error {
		if !strings.HasPrefix(f.Name, prefix) {
			return nil
		}
		if len(out) == limit {
			more = true
			return storer.ErrStop
		}
		out = append(out, Entry{Path: f.Name, Size: f.Size})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, more, err
}

// Head is the commit id of main ("" for an empty repository).
func (s *Store) Head(_ context.Context, companyID string) (string, error) {
	_, tip, err := s.tip(companyID)
	if err != nil || tip == nil {
		return "", err
	}
	return tip.Hash.String(), nil
}

// tip opens the repository and its main commit (nil when main has none).
func (s *Store) tip(companyID string) (*git.Repository, *object.Commit, error) {
	dir, err := s.path(companyID)
	if err != nil {
		return nil, nil, err
	}
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return nil, nil, ErrNotFound
	}
	ref, err := repo.Reference(plumbing.NewBranchReferenceName(Branch), true)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return repo, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	c, err := repo.CommitObject(ref.Hash())
	return repo, c, err
}

// Commit applies changes to main in one commit and returns its id.
// Commits to one repository are serialized, so none is lost.
func (s *Store) Commit(_ context.Context, companyID string, changes []Change, message, author string) (string, error) {
	lock := s.lockOf(companyID)
	lock.Lock()
	defer lock.Unlock()
	repo, tip, err := s.tip(companyID)
	if err != nil {
		return "", err
	}
	files := map[string]plumbing.Hash{}
	modes := map[string]filemode.FileMode{}
	var parents []plumbing.Hash
	if tip != nil {
		parents = []plumbing.Hash{tip.Hash}
		tree, err := tip.Tree()
		if err != nil {
			return "", err
		}
		if err := tree.Files().ForEach(func(f *object.File) error {
			files[f.Name], modes[f.Name] = f.Hash, f.Mode
			return nil
		}); err != nil {
			return "", err
		}
	}
	st := repo.Storer
	for _, ch := range changes {
		if ch.Delete {
			delete(files, ch.Path)
			continue
		}
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return "", err
		}
		if _, err := io.Copy(w, bytes.NewReader(ch.Content)); err != nil {
			return "", err
		}
		w.Close()
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			return "", err
		}
		files[ch.Path], modes[ch.Path] = h, filemode.Regular
	}
	root, err := writeTree(st, files, modes, "")
	if err != nil {
		return "", err
	}
	sig := object.Signature{Name: author, Email: "agent@holdco.invalid", When: time.Now()}
	h, err := store(st, &object.Commit{Author: sig, Committer: sig, Message: strings.TrimSpace(message) + "\n", TreeHash: root, ParentHashes: parents})
	if err != nil {
		return "", err
	}
	if err := st.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(Branch), h)); err != nil {
		return "", fmt.Errorf("gitrepo: move main: %w", err)
	}
	return h.String(), nil
}

// writeTree stores the tree of the files under dir (recursively) and
// returns its hash. Entries are in git's order: names compared with a
// directory's name followed by "/".
func writeTree(st storer.EncodedObjectStorer, files map[string]plumbing.Hash, modes map[string]filemode.FileMode, dir string) (plumbing.Hash, error) {
	subdirs := map[string]bool{}
	tree := &object.Tree{}
	for p, h := range files {
		if !strings.HasPrefix(p, dir) {
			continue
		}
		rest := p[len(dir):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			subdirs[rest[:i]] = true
			continue
		}
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: rest, Mode: modes[p], Hash: h})
	}
	for d := range subdirs {
		h, err := writeTree(st, files, modes, dir+d+"/")
		if err != nil {
			return plumbing.ZeroHash, err
		}
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: d, Mode: filemode.Dir, Hash: h})
	}
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(tree.Entries, func(i, j int) bool { return key(tree.Entries[i]) < key(tree.Entries[j]) })
	return store(st, tree)
}
