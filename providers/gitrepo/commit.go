package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage"

	"holdco/models"
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
// Commits to one repository are serialized in this process, and main moves
// with a compare-and-set (under a file lock) so a commit of another
// process sharing the directory is never lost: the loser retries on the
// new tip.
func (s *Store) Commit(ctx context.Context, companyID string, changes []Change, message, author string) (string, error) {
	return s.CommitOnce(ctx, companyID, changes, message, author, "")
}

// CallTrailer is the trailer of a commit made for a keyed call: its value
// is the call's effect id.
const CallTrailer = "Holdco-Call"

// callSearchDepth is how far back main is searched for a call's commit: a
// call made again follows its first attempt closely (an activity retry).
const callSearchDepth = 200

// CommitOnce is Commit for the call named by key ("" for none): the commit
// carries the key in its CallTrailer trailer, and when one of the last
// commits of main carries it already — the same call made again after a
// crash, on this worker or another sharing the directory — that commit's
// id is answered and nothing is committed. The search runs again before
// every compare-and-set attempt, so a concurrent commit of the same call
// is found rather than repeated.
func (s *Store) CommitOnce(ctx context.Context, companyID string, changes []Change, message, author, key string) (string, error) {
	lock := s.lockOf(companyID)
	lock.Lock()
	defer lock.Unlock()
	message = strings.TrimSpace(message)
	trailer := ""
	if key != "" {
		trailer = CallTrailer + ": " + key
		message += "\n\n" + trailer
	}
	for attempt := 0; ; attempt++ {
		if trailer != "" {
			if id, err := s.findCall(companyID, trailer); err != nil || id != "" {
				return id, err
			}
		}
		id, err := s.commitOnce(companyID, func(files map[string]plumbing.Hash, modes map[string]filemode.FileMode, st storer.EncodedObjectStorer) error {
			return applyChanges(st, files, modes, changes)
		}, message, author)
		if errors.Is(err, storage.ErrReferenceHasChanged) && attempt < 10 && ctx.Err() == nil {
			continue
		}
		return id, err
	}
}

// findCall returns the id of the commit among main's last callSearchDepth
// whose message ends with trailer ("" when none does).
func (s *Store) findCall(companyID, trailer string) (string, error) {
	_, tip, err := s.tip(companyID)
	if err != nil {
		return "", err
	}
	for c, n := tip, 0; c != nil && n < callSearchDepth; n++ {
		if strings.HasSuffix(strings.TrimSpace(c.Message), "\n"+trailer) {
			return c.Hash.String(), nil
		}
		if c.NumParents() == 0 {
			break
		}
		if c, err = c.Parent(0); err != nil {
			return "", err
		}
	}
	return "", nil
}

// Restore commits, on top of main, the tree of an earlier commit of the
// repository (a rollback that keeps history) and returns the new commit's
// id; ErrNotFound when commitID is not a commit of the repository.
func (s *Store) Restore(ctx context.Context, companyID, commitID, message, author string) (string, error) {
	lock := s.lockOf(companyID)
	lock.Lock()
	defer lock.Unlock()
	for attempt := 0; ; attempt++ {
		id, err := s.commitOnce(companyID, func(files map[string]plumbing.Hash, modes map[string]filemode.FileMode, _ storer.EncodedObjectStorer) error {
			repo, _, err := s.tip(companyID)
			if err != nil {
				return err
			}
			if !plumbing.IsHash(commitID) {
				return ErrNotFound
			}
			c, err := repo.CommitObject(plumbing.NewHash(commitID))
			if err != nil {
				return ErrNotFound
			}
			tree, err := c.Tree()
			if err != nil {
				return err
			}
			clear(files)
			clear(modes)
			return tree.Files().ForEach(func(f *object.File) error {
				files[f.Name], modes[f.Name] = f.Hash, f.Mode
				return nil
			})
		}, message, author)
		if errors.Is(err, storage.ErrReferenceHasChanged) && attempt < 10 && ctx.Err() == nil {
			continue
		}
		return id, err
	}
}

// commitOnce makes one commit on main's tip whose files edit changes, and
// moves main to it only if main is still at that tip.
func (s *Store) commitOnce(companyID string, edit func(map[string]plumbing.Hash, map[string]filemode.FileMode, storer.EncodedObjectStorer) error, message, author string) (string, error) {
	repo, tip, err := s.tip(companyID)
	if err != nil {
		return "", err
	}
	files := map[string]plumbing.Hash{}
	modes := map[string]filemode.FileMode{}
	var parents []plumbing.Hash
	var old *plumbing.Reference
	if tip != nil {
		parents = []plumbing.Hash{tip.Hash}
		old = plumbing.NewHashReference(plumbing.NewBranchReferenceName(Branch), tip.Hash)
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
	if err := edit(files, modes, st); err != nil {
		return "", err
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
	dir, err := s.path(companyID)
	if err != nil {
		return "", err
	}
	if err := moveMain(repo, dir, old, h); err != nil {
		return "", err
	}
	return h.String(), nil
}

// moveMain points main at h if it still points where old says (nil: main
// does not exist yet), else answers storage.ErrReferenceHasChanged. The
// check and the move hold an exclusive lock on the repository's lock file,
// which every process sharing the directory takes, and the new ref is
// written to a temporary file renamed over refs/heads/main, so a reader
// never sees a half-written (or, go-git's in-place write, an empty) ref.
func moveMain(repo *git.Repository, dir string, old *plumbing.Reference, h plumbing.Hash) error {
	unlock, err := lockFile(filepath.Join(dir, "holdco-main.lock"))
	if err != nil {
		return fmt.Errorf("gitrepo: lock main: %w", err)
	}
	defer unlock()
	cur, err := repo.Reference(plumbing.NewBranchReferenceName(Branch), false)
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		if old != nil {
			return storage.ErrReferenceHasChanged
		}
	case err != nil:
		return fmt.Errorf("gitrepo: read main: %w", err)
	case old == nil || cur.Hash() != old.Hash():
		return storage.ErrReferenceHasChanged
	}
	ref := filepath.Join(dir, "refs", "heads", Branch)
	if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
		return fmt.Errorf("gitrepo: move main: %w", err)
	}
	tmp := ref + ".holdco-tmp"
	if err := os.WriteFile(tmp, []byte(h.String()+"\n"), 0o644); err != nil {
		return fmt.Errorf("gitrepo: move main: %w", err)
	}
	if err := os.Rename(tmp, ref); err != nil {
		return fmt.Errorf("gitrepo: move main: %w", err)
	}
	return nil
}

// applyChanges writes changed files' blobs and edits the file map.
func applyChanges(st storer.EncodedObjectStorer, files map[string]plumbing.Hash, modes map[string]filemode.FileMode, changes []Change) error {
	for _, ch := range changes {
		if ch.Delete {
			delete(files, ch.Path)
			continue
		}
		obj := st.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, err := obj.Writer()
		if err != nil {
			return err
		}
		if _, err := io.Copy(w, bytes.NewReader(ch.Content)); err != nil {
			return err
		}
		w.Close()
		h, err := st.SetEncodedObject(obj)
		if err != nil {
			return err
		}
		files[ch.Path], modes[ch.Path] = h, filemode.Regular
	}
	return nil
}

// Files is the tree of a commit of the repository: every file's path,
// blob id and size, in path order. ErrNotFound for an unknown commit.
func (s *Store) Files(_ context.Context, companyID, commitID string) ([]models.RepoFile, error) {
	repo, _, err := s.tip(companyID)
	if err != nil {
		return nil, err
	}
	if !plumbing.IsHash(commitID) {
		return nil, ErrNotFound
	}
	c, err := repo.CommitObject(plumbing.NewHash(commitID))
	if err != nil {
		return nil, ErrNotFound
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("gitrepo: read tree: %w", err)
	}
	var out []models.RepoFile
	err = tree.Files().ForEach(func(f *object.File) error {
		out = append(out, models.RepoFile{Path: f.Name, ID: f.Hash.String(), Size: f.Size})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// ReadObject reads a blob of the repository by its id (a RepoFile's ID).
func (s *Store) ReadObject(_ context.Context, companyID, id string) ([]byte, error) {
	repo, _, err := s.tip(companyID)
	if err != nil {
		return nil, err
	}
	if !plumbing.IsHash(id) {
		return nil, ErrNotFound
	}
	b, err := repo.BlobObject(plumbing.NewHash(id))
	if err != nil {
		return nil, ErrNotFound
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
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
