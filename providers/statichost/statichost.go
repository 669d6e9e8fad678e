// Package statichost is the local adapter of the hosting provider: holdco
// itself serves each company's site from the main branch of its
// repository, at <base URL>/<handle>/ on a listener of its own (never on
// the API's origin: tenants control the pages' scripts).
package statichost

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// FileSource reads a file from a company's published branch
// (gitrepo.Store).
type FileSource interface {
	ReadFile(ctx context.Context, companyID, path string) ([]byte, error)
}

// SiteStatus tells whether a company's site may be served: archived
// companies (also those of a deleted account) have no pages
// (store.Store).
type SiteStatus interface {
	SiteOnline(ctx context.Context, companyID string) (bool, error)
}

var handlePattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// Host publishes sites. A site is a small record file (handle → company)
// under root, so publications survive restarts; beside it, <handle>.env
// holds the site's environment (mode 0600, never served).
type Host struct {
	root    string
	baseURL string
	src     FileSource
	client  *http.Client
	// baseHost is baseURL's host name; domains routes other hosts.
	baseHost string
	domains  DomainSites
}

// New returns a host keeping its records under root and serving at baseURL
// (for example http://localhost:8083).
func New(root, baseURL string, src FileSource) (*Host, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("statichost: %w", err)
	}
	h := &Host{root: root, baseURL: strings.TrimRight(baseURL, "/"), src: src, client: &http.Client{Timeout: 5 * time.Second}}
	if u, err := url.Parse(h.baseURL); err == nil {
		h.baseHost = strings.ToLower(u.Hostname())
	}
	return h, nil
}

// SiteURL is where a handle's site is served.
func (h *Host) SiteURL(handle string) string { return h.baseURL + "/" + handle + "/" }

func (h *Host) record(handle string) (string, error) {
	if !handlePattern.MatchString(handle) {
		return "", fmt.Errorf("statichost: invalid handle %q", handle)
	}
	return filepath.Join(h.root, handle), nil
}

// writeFile replaces name under root atomically with the given mode.
func (h *Host) writeFile(name string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(h.root, ".tmp-"+filepath.Base(name)+"-")
	if err != nil {
		return fmt.Errorf("statichost: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("statichost: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("statichost: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("statichost: %w", err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("statichost: %w", err)
	}
	return nil
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
	if err := h.writeFile(rec, []byte(companyID), 0o644); err != nil {
		return "", err
	}
	return h.SiteURL(handle), nil
}

// Configure replaces the site's environment (what a deployed app reads its
// configuration from: HOLDCO_API_URL, HOLDCO_API_KEY). It is written
// beside the site record, readable by the owner only, and never served.
func (h *Host) Configure(_ context.Context, companyID, handle string, env map[string]string) error {
	rec, err := h.record(handle)
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(rec); err != nil || string(b) != companyID {
		return fmt.Errorf("statichost: site %s is not published for this company", handle)
	}
	names := make([]string, 0, len(env))
	for k, v := range env {
		if !envName.MatchString(k) || strings.ContainsAny(v, "\r\n\x00") {
			return fmt.Errorf("statichost: invalid environment entry %q", k)
		}
		names = append(names, k)
	}
	slices.Sort(names)
	var b bytes.Buffer
	for _, k := range names {
		fmt.Fprintf(&b, "%s=%s\n", k, env[k])
	}
	return h.writeFile(rec+".env", b.Bytes(), 0o600)
}

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// Env reads the site's environment as Configure wrote it (empty when it
// was never configured).
func (h *Host) Env(handle string) (map[string]string, error) {
	rec, err := h.record(handle)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(rec + ".env")
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("statichost: %w", err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env, sc.Err()
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

// Delete unpublishes a site and drops its environment.
func (h *Host) Delete(_ context.Context, handle string) error {
	rec, err := h.record(handle)
	if err != nil {
		return err
	}
	for _, name := range []string{rec, rec + ".env"} {
		if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// SiteHeaders are set on every response of the sites listener: the page
// runs sandboxed in an opaque origin (no cookies, no storage, no
// same-origin reads of other sites), and types are never sniffed.
var SiteHeaders = map[string]string{
	"Content-Security-Policy": "sandbox allow-scripts allow-forms allow-popups",
	"X-Content-Type-Options":  "nosniff",
}

// Handler serves GET and HEAD /<handle>/<path> (mount it with any base
// path stripped). A path ending in "/" is that directory's index.html; the
// site's "/" falls back to README.md as text. There is no directory
// listing. Before serving, status is asked whether the company's site is
// online (answers cached for statusTTL); an archived company's site
// answers 410.
func (h *Host) Handler(status SiteStatus, statusTTL time.Duration) http.Handler {
	cache := &statusCache{src: status, ttl: statusTTL, entries: map[string]statusEntry{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range SiteHeaders {
			w.Header().Set(k, v)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			errorPage(w, r, http.StatusMethodNotAllowed, "Method not allowed", "This site only answers GET and HEAD.")
			return
		}
		if companyID, ok := h.domainSite(r); ok {
			h.serve(w, r, cache, companyID, "/", strings.TrimPrefix(r.URL.Path, "/"), true)
			return
		}
		handle, rest, hasSlash := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		rec, err := h.record(handle)
		if err != nil {
			notFound(w, r)
			return
		}
		companyID, err := os.ReadFile(rec)
		if err != nil {
			notFound(w, r)
			return
		}
		h.serve(w, r, cache, string(companyID), "/"+handle+"/", rest, hasSlash)
	})
}

// DomainSites finds the company a domain is attached to ("" when none):
// the domain pool's rows (store.Store), so attaching a domain points it at
// the company's site at once.
type DomainSites interface {
	CompanyOfDomain(ctx context.Context, domain string) (string, error)
}

// ServeDomains makes Handler serve a company's site at the root of its
// attached domain, by the request's Host (nil: sites by path only).
func (h *Host) ServeDomains(d DomainSites) { h.domains = d }

// domainSite is the company whose attached domain the request's Host
// names; the sites listener's own host is never a domain site.
func (h *Host) domainSite(r *http.Request) (string, bool) {
	if h.domains == nil {
		return "", false
	}
	host := strings.ToLower(r.Host)
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" || host == h.baseHost || !strings.Contains(host, ".") {
		return "", false
	}
	id, err := h.domains.CompanyOfDomain(r.Context(), host)
	return id, err == nil && id != ""
}

// serve answers a path of a company's site published under base ("/" for
// a domain, "/<handle>/" otherwise).
func (h *Host) serve(w http.ResponseWriter, r *http.Request, cache *statusCache, companyID, base, rest string, hasSlash bool) {
	online, err := cache.online(r.Context(), companyID)
	if err != nil {
		errorPage(w, r, http.StatusServiceUnavailable, "Site unavailable", "This site cannot be served right now; try again shortly.")
		return
	}
	if !online {
		errorPage(w, r, http.StatusGone, "Site offline", "This site is no longer online.")
		return
	}
	if !hasSlash {
		// Relative links resolve against the directory.
		http.Redirect(w, r, base, http.StatusMovedPermanently)
		return
	}
	isDir := rest == "" || strings.HasSuffix(rest, "/")
	name := strings.TrimSuffix(rest, "/")
	if name != "" && ("/"+name != path.Clean("/"+name) || strings.Contains(name, "..")) {
		notFound(w, r)
		return
	}
	if isDir {
		name = path.Join(name, "index.html")
	}
	body, err := h.src.ReadFile(r.Context(), companyID, name)
	if err != nil && rest == "" {
		name = "README.md"
		body, err = h.src.ReadFile(r.Context(), companyID, name)
	}
	if err != nil && !isDir && path.Ext(name) == "" {
		// A directory named without its slash.
		if _, derr := h.src.ReadFile(r.Context(), companyID, name+"/index.html"); derr == nil {
			http.Redirect(w, r, path.Base(name)+"/", http.StatusMovedPermanently)
			return
		}
	}
	if err != nil {
		notFound(w, r)
		return
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" || name == "README.md" {
		ctype = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache") // the branch changes
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

var errorTemplate = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title><style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style></head>
<body><h1>{{.Title}}</h1><p>{{.Message}}</p></body></html>
`))

func notFound(w http.ResponseWriter, r *http.Request) {
	errorPage(w, r, http.StatusNotFound, "Page not found", "There is no page at this address.")
}

func errorPage(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_ = errorTemplate.Execute(w, struct{ Title, Message string }{title, message})
	}
}

// statusCache keeps SiteStatus answers for a few seconds so a busy site
// does not read the database on every request; archiving takes effect
// within the TTL.
type statusCache struct {
	src     SiteStatus
	ttl     time.Duration
	mu      sync.Mutex
	entries map[string]statusEntry
}

type statusEntry struct {
	online bool
	until  time.Time
}

func (c *statusCache) online(ctx context.Context, companyID string) (bool, error) {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.entries[companyID]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.online, nil
	}
	online, err := c.src.SiteOnline(ctx, companyID)
	if err != nil {
		return false, err
	}
	if c.ttl > 0 {
		c.mu.Lock()
		// Entries are per published company, so the map stays small;
		// stale ones are dropped as the map is refreshed.
		if len(c.entries) > 10_000 {
			clear(c.entries)
		}
		c.entries[companyID] = statusEntry{online: online, until: now.Add(c.ttl)}
		c.mu.Unlock()
	}
	return online, nil
}
