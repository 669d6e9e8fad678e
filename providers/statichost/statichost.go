// Package statichost is the local adapter of the hosting provider: holdco
// itself serves each company's site from the main branch of its
// repository, at <base URL>/<handle>/.
package statichost

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// FileSource reads a file from a company's published branch
// (gitrepo.Store).
type FileSource interface {
	ReadFile(ctx context.Context, companyID, path string) ([]byte, error)
}

var handlePattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// Host publishes sites. A site is a small record file (handle → company)
// under root, so publications survive restarts.
type Host struct {
	root    string
	baseURL string
	src     FileSource
	client  *http.Client
}

// New returns a host keeping its records under root and serving at baseURL
// (for example http://localhost:8080/sites).
func New(root, baseURL string, src FileSource) (*Host, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("statichost: %w", err)
	}
	return &Host{root: root, baseURL: strings.TrimRight(baseURL, "/"), src: src, client: &http.Client{Timeout: 5 * time.Second}}, nil
}

// SiteURL is where a handle's site is served.
func (h *Host) SiteURL(handle string) string { return h.baseURL + "/" + handle + "/" }

func (h *Host) record(handle string) (string, error) {
	if !handlePattern.MatchString(handle) {
		return "", fmt.Errorf("statichost: invalid handle %q", handle)
	}
	return filepath.Join(h.root, handle), nil
}

// Ensure publishes the company's site (idempotent) and returns its URL.
func (h *Host) Ensure(_ context.Context, companyID, handle string) (string, error) {
	rec, err := h.record(handle)
	if err != nil {
		return "", err
	}
	if b, err := os.ReadFile(rec); err == nil && string(b) == companyID {
		return h.SiteURL(handle), nil
	}
	tmp, err := os.CreateTemp(h.root, ".tmp-"+handle+"-")
	if err != nil {
		return "", fmt.Errorf("statichost: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(companyID); err != nil {
		tmp.Close()
		return "", fmt.Errorf("statichost: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("statichost: %w", err)
	}
	if err := os.Rename(tmp.Name(), rec); err != nil {
		return "", fmt.Errorf("statichost: %w", err)
	}
	return h.SiteURL(handle), nil
}

// Check requests the site over HTTP and expects 200 for this company.
func (h *Host) Check(ctx context.Context, companyID, handle string) error {
	rec, err := h.record(handle)
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(rec); err != nil || string(b) != companyID {
		return fmt.Errorf("statichost: site %s is not published", handle)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.SiteURL(handle), nil)
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("statichost: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("statichost: %s answered %d", h.SiteURL(handle), resp.StatusCode)
	}
	return nil
}

// Delete unpublishes a site.
func (h *Host) Delete(_ context.Context, handle string) error {
	rec, err := h.record(handle)
	if err != nil {
		return err
	}
	if err := os.Remove(rec); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Handler serves GET and HEAD /<handle>/<path>; mount it with the base
// path stripped. "/" is index.html, or README.md as text when there is no
// index.html. There is no directory listing.
func (h *Host) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		handle, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		rec, err := h.record(handle)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		companyID, err := os.ReadFile(rec)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		clean := strings.TrimPrefix(path.Clean("/"+rest), "/")
		if clean != rest && !(rest == "" && clean == "") || strings.Contains(rest, "..") {
			http.NotFound(w, r)
			return
		}
		name := clean
		if name == "" {
			name = "index.html"
		}
		body, err := h.src.ReadFile(r.Context(), string(companyID), name)
		if err != nil && clean == "" {
			name = "README.md"
			body, err = h.src.ReadFile(r.Context(), string(companyID), name)
		}
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" || name == "README.md" {
			ctype = "text/plain; charset=utf-8"
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "no-cache") // the branch changes
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}
