// Package local is the blob store of the embedded default: blobs are files
// under a directory (written to a temporary file and renamed, so a reader
// never sees half a blob), and downloads are URLs on the sites origin,
// signed with HMAC-SHA256 and expiring, that Handler serves. It works
// offline and is what the tests and `holdco serve` use.
package local

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"holdco/models"
	"holdco/providers/blob"
)

// PathPrefix is where Handler serves downloads on the sites origin; a
// company handle never starts with "_", so no site is shadowed.
const PathPrefix = "/_blob/"

// tmpPrefix starts the name of every temporary file of a Put.
const tmpPrefix = "put-"

// Store keeps blobs under a directory.
type Store struct {
	dir     string // objects live in dir/objects, temporary files in dir/tmp
	key     []byte
	baseURL string
	now     func() time.Time
}

// New opens the directory; it is created by the first Put, so a process
// that never stores a blob leaves no trace. A Put writes a temporary file
// in tmp/ and renames it into objects/; the temporary files a crash leaves
// behind are deleted by SweepPartial. signingKey signs download URLs
// (at least 32 bytes; every process serving or signing must share it);
// baseURL is the sites origin the URLs point at.
func New(dir string, signingKey []byte, baseURL string) (*Store, error) {
	if len(signingKey) < 32 {
		return nil, errors.New("blob/local: the signing key needs at least 32 bytes")
	}
	if dir == "" {
		return nil, errors.New("blob/local: a directory is required")
	}
	return &Store{dir: dir, key: signingKey, baseURL: strings.TrimRight(baseURL, "/"), now: time.Now}, nil
}

// WithClock returns the store with another clock (tests of expiry).
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

func (s *Store) path(key string) (string, error) {
	if err := blob.CheckKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, "objects", filepath.FromSlash(key)), nil
}

// Put writes body under key. size is the exact length when known (-1
// otherwise); a body of another length is refused and nothing is stored.
// It returns the bytes written.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, size int64, _ string) (int64, error) {
	p, err := s.path(key)
	if err != nil {
		return 0, err
	}
	tmpDir := filepath.Join(s.dir, "tmp")
	if err := os.MkdirAll(tmpDir, 0o750); err != nil {
		return 0, fmt.Errorf("blob/local: put: %w", err)
	}
	tmp, err := os.CreateTemp(tmpDir, tmpPrefix+"*")
	if err != nil {
		return 0, fmt.Errorf("blob/local: put: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	n, err := io.Copy(tmp, contextReader{ctx, body})
	if err != nil {
		return n, fmt.Errorf("blob/local: put: %w", err)
	}
	if size >= 0 && n != size {
		return n, fmt.Errorf("blob/local: put: body has %d bytes, %d announced", n, size)
	}
	if err := tmp.Sync(); err != nil {
		return n, fmt.Errorf("blob/local: put: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return n, fmt.Errorf("blob/local: put: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return n, fmt.Errorf("blob/local: put: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return n, fmt.Errorf("blob/local: put: %w", err)
	}
	done = true
	return n, nil
}

// SweepPartial deletes the temporary files of uploads that will never
// finish: a process that dies while writing a blob leaves its temporary
// file in tmp/, which no row or blob_deletions record names. A file is
// left alone while it was written to at or after before (an upload in
// progress writes as its body arrives); the caller passes a moment an
// upload cannot outlive (service/files uses its upload grace). It returns
// how many files it deleted. Every process sharing the directory may
// sweep: a file already gone is not an error.
func (s *Store) SweepPartial(ctx context.Context, before time.Time) (int, error) {
	tmpDir := filepath.Join(s.dir, "tmp")
	entries, err := os.ReadDir(tmpDir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("blob/local: sweep partial uploads: %w", err)
	}
	deleted := 0
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return deleted, err
		}
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), tmpPrefix) {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, os.ErrNotExist) {
			continue // renamed into place or swept meanwhile
		}
		if err != nil {
			return deleted, fmt.Errorf("blob/local: sweep partial uploads: %w", err)
		}
		if !info.ModTime().Before(before) {
			continue
		}
		if err := os.Remove(filepath.Join(tmpDir, e.Name())); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return deleted, fmt.Errorf("blob/local: sweep partial uploads: %w", err)
		}
		deleted++
	}
	return deleted, nil
}

// contextReader stops a copy when its context ends.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Delete removes the blob; a missing blob is not an error.
func (s *Store) Delete(_ context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("blob/local: delete: %w", err)
	}
	return nil
}

// Open reads the blob stored under key; a missing blob is an error that
// wraps fs.ErrNotExist.
func (s *Store) Open(_ context.Context, key string) (io.ReadCloser, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("blob/local: open: %w", err)
	}
	return f, nil
}

// Exists reports whether a blob is stored under key.
func (s *Store) Exists(_ context.Context, key string) (bool, error) {
	p, err := s.path(key)
	if err != nil {
		return false, err
	}
	_, err = os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// List returns the blobs whose keys start with prefix (a folder such as
// "runs/<id>/", checked by blob.CheckPrefix), at any depth, sorted by key.
// A folder that holds nothing is an empty list.
func (s *Store) List(ctx context.Context, prefix string) ([]models.BlobInfo, error) {
	if err := blob.CheckPrefix(prefix); err != nil {
		return nil, err
	}
	objects := filepath.Join(s.dir, "objects")
	root := filepath.Join(objects, filepath.FromSlash(strings.TrimSuffix(prefix, "/")))
	var out []models.BlobInfo
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || p == root { // root itself is a folder, never a blob under it
			return nil
		}
		rel, err := filepath.Rel(objects, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if blob.CheckKey(key) != nil {
			return nil // not a blob holdco stored (a stray file)
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted while listing
		}
		if err != nil {
			return err
		}
		out = append(out, models.BlobInfo{Key: key, Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("blob/local: list: %w", err)
	}
	slices.SortFunc(out, func(a, b models.BlobInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// DownloadURL is a URL on the sites origin that serves the blob as an
// attachment named filename with contentType until ttl has passed.
func (s *Store) DownloadURL(_ context.Context, key, filename, contentType string, ttl time.Duration) (string, error) {
	if err := blob.CheckKey(key); err != nil {
		return "", err
	}
	exp := strconv.FormatInt(s.now().Add(ttl).Unix(), 10)
	q := url.Values{"exp": {exp}, "fn": {filename}, "ct": {contentType}}
	q.Set("sig", s.sign(key, exp, filename, contentType))
	return s.baseURL + PathPrefix + key + "?" + q.Encode(), nil
}

// sign is the URL's signature over every value it carries, each
// length-prefixed so no two inputs sign alike.
func (s *Store) sign(key, exp, filename, contentType string) string {
	m := hmac.New(sha256.New, s.key)
	for _, v := range []string{"holdco-blob-v1", key, exp, filename, contentType} {
		fmt.Fprintf(m, "%d:%s;", len(v), v)
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Handler serves signed download URLs: an unsigned, tampered or expired
// URL is 403 and a blob that is gone 404, each with a fixed body that says
// nothing more. Downloads are attachments with the security headers of
// blob.DownloadHeaders.
func (s *Store) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method not allowed.", http.StatusMethodNotAllowed)
			return
		}
		key := strings.TrimPrefix(r.URL.Path, PathPrefix)
		q := r.URL.Query()
		exp, fn, ct := q.Get("exp"), q.Get("fn"), q.Get("ct")
		want := s.sign(key, exp, fn, ct)
		expAt, err := strconv.ParseInt(exp, 10, 64)
		if !hmac.Equal([]byte(want), []byte(q.Get("sig"))) || err != nil || s.now().Unix() >= expAt || blob.CheckKey(key) != nil {
			http.Error(w, "This download link is invalid or has expired.", http.StatusForbidden)
			return
		}
		p, _ := s.path(key)
		f, err := os.Open(p)
		if err != nil {
			http.Error(w, "This file no longer exists.", http.StatusNotFound)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			http.Error(w, "This file no longer exists.", http.StatusNotFound)
			return
		}
		if _, _, err := mime.ParseMediaType(ct); err != nil || ct == "" {
			ct = "application/octet-stream"
		}
		h := w.Header()
		for k, v := range blob.DownloadHeaders {
			h.Set(k, v)
		}
		h.Set("Content-Type", ct)
		h.Set("Content-Disposition", blob.ContentDisposition(fn))
		http.ServeContent(w, r, "", st.ModTime(), f)
	})
}
