// Package statichost is the local adapter of the hosting provider: holdco
// itself serves each company's site at <base URL>/<handle>/ on a listener
// of its own (never on the API's origin: tenants control the pages'
// scripts).
//
// A site is served from deploys, never from a repository: a deploy
// exports the tree of main at one commit to the blob store under
// immutable keys (each file's bytes under sites/<company id>/<git blob
// id>, a manifest under sites/<company id>/deploys/<commit>.json), then
// switches the site's current deploy in the database in one statement. A
// sites process needs the database and the blob store only, so any
// number of them on any machine serve every site alike.
package statichost

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"holdco/models"
)

// Records keeps sites and their deploys (store.Store).
type Records interface {
	PublishSite(ctx context.Context, companyID string) error
	UnpublishSite(ctx context.Context, companyID string) error
	SiteByHandle(ctx context.Context, handle string) (models.SiteState, error)
	SiteOfCompany(ctx context.Context, companyID string) (models.SiteState, error)
	SiteDeployOf(ctx context.Context, companyID, commitID string) (models.SiteDeploy, error)
	RecordSiteDeploy(ctx context.Context, d models.SiteDeploy) (models.SiteDeploy, error)
	SwitchSiteDeploy(ctx context.Context, companyID, deployID string) error
	SetSiteEnv(ctx context.Context, companyID string, sealed []byte) error
	SiteEnv(ctx context.Context, companyID string) ([]byte, error)
}

// Blobs is the blob store deploys are exported to (providers/blob/local
// or providers/blob/s3blob). Open of a missing key is an error.
type Blobs interface {
	Put(ctx context.Context, key string, body io.Reader, size int64, contentType string) (int64, error)
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	Exists(ctx context.Context, key string) (bool, error)
}

// Source is the read side of the companies' repositories a deploy
// exports from (providers/gitrepo, providers/githubrepo). A missing
// repository is an error wrapping models.ErrNotFound.
type Source interface {
	// Head is main's commit ("" for an empty repository).
	Head(ctx context.Context, companyID string) (string, error)
	Files(ctx context.Context, companyID, commitID string) ([]models.RepoFile, error)
	ReadObject(ctx context.Context, companyID, id string) ([]byte, error)
}

// DomainSites finds the company a domain is attached to ("" when none):
// the domain pool's rows (store.Store), so attaching a domain points it at
// the company's site at once.
type DomainSites interface {
	CompanyOfDomain(ctx context.Context, domain string) (string, error)
}

// Options configure a Host.
type Options struct {
	// BaseURL is where sites are served (for example
	// http://localhost:8083); a site is at <BaseURL>/<handle>/.
	BaseURL string
	Records Records
	Blobs   Blobs
	// Source nil: the host deploys nothing (a sites process).
	Source Source
	// EnvKey (at least 32 bytes, shared by every worker) seals sites'
	// environments; nil refuses Configure and Env.
	EnvKey []byte
	// SiteTTL is how long a served site's row (online, current deploy) is
	// cached: a deploy switch or an archive is seen by every sites
	// process within it. 0 reads the row on every request.
	SiteTTL time.Duration
	// CacheBytes bounds the cached file contents (default 64 MiB). Files
	// are cached by their immutable key, so a switch never serves stale
	// bytes.
	CacheBytes int64
}

// Host publishes, deploys and serves sites.
type Host struct {
	baseURL string
	// baseHost is baseURL's host name; domains routes other hosts.
	baseHost string
	records  Records
	blobs    Blobs
	src      Source
	envAEAD  cipher.AEAD
	client   *http.Client
	domains  DomainSites

	sites     *ttlCache[models.SiteState]
	manifests *lru[*manifest]
	contents  *lru[[]byte]
}

// maxCachedFile: larger files are read from the blob store each time.
const maxCachedFile = 1 << 20

// New returns a host serving at o.BaseURL.
func New(o Options) (*Host, error) {
	if o.Records == nil || o.Blobs == nil {
		return nil, errors.New("statichost: records and blobs are required")
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = 64 << 20
	}
	h := &Host{baseURL: strings.TrimRight(o.BaseURL, "/"), records: o.Records, blobs: o.Blobs, src: o.Source,
		client:    &http.Client{Timeout: 5 * time.Second},
		sites:     newTTLCache[models.SiteState](o.SiteTTL, 10_000),
		manifests: newLRU[*manifest](16 << 20),
		contents:  newLRU[[]byte](o.CacheBytes),
	}
	if o.EnvKey != nil {
		if len(o.EnvKey) < 32 {
			return nil, errors.New("statichost: the environment key needs at least 32 bytes")
		}
		k := sha256.Sum256(append([]byte("holdco-site-env-v1:"), o.EnvKey...))
		block, err := aes.NewCipher(k[:])
		if err != nil {
			return nil, err
		}
		if h.envAEAD, err = cipher.NewGCM(block); err != nil {
			return nil, err
		}
	}
	if u, err := url.Parse(h.baseURL); err == nil {
		h.baseHost = strings.ToLower(u.Hostname())
	}
	return h, nil
}

var handlePattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// SiteURL is where a handle's site is served.
func (h *Host) SiteURL(handle string) string { return h.baseURL + "/" + handle + "/" }

// ErrNoSource: the host was built without a repository to deploy from.
var ErrNoSource = errors.New("statichost: no repository source on this process")

// Ensure publishes the company's site (idempotent) and returns its URL.
// When the repository has a main branch, its head is deployed; a
// repository still being made deploys itself once it exists
// (PublishHead), whichever of the two comes last.
func (h *Host) Ensure(ctx context.Context, companyID, handle string) (string, error) {
	if !handlePattern.MatchString(handle) {
		return "", fmt.Errorf("statichost: invalid handle %q", handle)
	}
	if err := h.records.PublishSite(ctx, companyID); err != nil {
		return "", err
	}
	if h.src == nil {
		return "", ErrNoSource
	}
	if err := h.DeployHead(ctx, companyID); err != nil && !errors.Is(err, models.ErrNotFound) {
		return "", err
	}
	return h.SiteURL(handle), nil
}

// PublishHead deploys main's head when the company's site is published
// (after the repository is made, and after every commit); an unpublished
// site is left alone.
func (h *Host) PublishHead(ctx context.Context, companyID string) error {
	if _, err := h.records.SiteOfCompany(ctx, companyID); errors.Is(err, models.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	return h.DeployHead(ctx, companyID)
}

// DeployHead deploys main's head and switches the site to it. Should main
// move while it exports (a commit on another worker), it deploys again,
// so the site ends on the latest head whichever deploy switched last.
func (h *Host) DeployHead(ctx context.Context, companyID string) error {
	if h.src == nil {
		return ErrNoSource
	}
	for range 5 {
		head, err := h.src.Head(ctx, companyID)
		if err != nil || head == "" {
			return err // "": an empty repository (an import not pushed yet)
		}
		if _, err := h.Deploy(ctx, companyID, head); err != nil {
			return err
		}
		again, err := h.src.Head(ctx, companyID)
		if err != nil || again == head {
			return err
		}
	}
	return nil
}

// manifest is a deploy's file list, stored as JSON under ManifestKey.
type manifest struct {
	Commit string                  `json:"commit"`
	Files  map[string]manifestFile `json:"files"`
}

type manifestFile struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
}

func (m *manifest) cost() int64 { return int64(len(m.Files))*160 + 64 }

func objectKey(companyID, blobID string) string { return "sites/" + companyID + "/" + blobID }

func manifestKey(companyID, commitID string) string {
	return "sites/" + companyID + "/deploys/" + commitID + ".json"
}

// Deploy makes commitID (a commit of the company's repository, not
// necessarily main's head: a rollback) the site's current deploy. A
// commit deployed before is switched to at once; otherwise its tree is
// exported first: files the blob store lacks are written under their
// immutable keys, then the manifest, then the deploy row, and only then
// the switch, so a sites process never sees half a deploy.
func (h *Host) Deploy(ctx context.Context, companyID, commitID string) (models.SiteDeploy, error) {
	if h.src == nil {
		return models.SiteDeploy{}, ErrNoSource
	}
	if d, err := h.records.SiteDeployOf(ctx, companyID, commitID); err == nil {
		return d, h.records.SwitchSiteDeploy(ctx, companyID, d.ID)
	} else if !errors.Is(err, models.ErrNotFound) {
		return models.SiteDeploy{}, err
	}
	files, err := h.src.Files(ctx, companyID, commitID)
	if err != nil {
		return models.SiteDeploy{}, err
	}
	// The keys of the current deploy are known to be stored.
	known := map[string]bool{}
	if cur, err := h.records.SiteOfCompany(ctx, companyID); err == nil && cur.ManifestKey != "" {
		if m, err := h.manifest(ctx, cur); err == nil {
			for _, f := range m.Files {
				known[f.Key] = true
			}
		}
	}
	m := &manifest{Commit: commitID, Files: make(map[string]manifestFile, len(files))}
	var total int64
	for _, f := range files {
		key := objectKey(companyID, f.ID)
		if !known[key] {
			ok, err := h.blobs.Exists(ctx, key)
			if err != nil {
				return models.SiteDeploy{}, fmt.Errorf("statichost: deploy: %w", err)
			}
			if !ok {
				body, err := h.src.ReadObject(ctx, companyID, f.ID)
				if err != nil {
					return models.SiteDeploy{}, fmt.Errorf("statichost: deploy %s: %w", f.Path, err)
				}
				if _, err := h.blobs.Put(ctx, key, bytes.NewReader(body), int64(len(body)), "application/octet-stream"); err != nil {
					return models.SiteDeploy{}, fmt.Errorf("statichost: deploy %s: %w", f.Path, err)
				}
			}
			known[key] = true
		}
		m.Files[f.Path] = manifestFile{Key: key, Size: f.Size}
		total += f.Size
	}
	body, err := json.Marshal(m)
	if err != nil {
		return models.SiteDeploy{}, err
	}
	mkey := manifestKey(companyID, commitID)
	if _, err := h.blobs.Put(ctx, mkey, bytes.NewReader(body), int64(len(body)), "application/json"); err != nil {
		return models.SiteDeploy{}, fmt.Errorf("statichost: deploy manifest: %w", err)
	}
	d, err := h.records.RecordSiteDeploy(ctx, models.SiteDeploy{CompanyID: companyID, CommitID: commitID, ManifestKey: mkey, Files: len(files), Bytes: total})
	if err != nil {
		return models.SiteDeploy{}, err
	}
	return d, h.records.SwitchSiteDeploy(ctx, companyID, d.ID)
}

// Configure replaces the site's environment (what a deployed app reads its
// configuration from: HOLDCO_API_URL, HOLDCO_API_KEY). It is sealed in the
// site's row, so any worker writes it, and never served.
func (h *Host) Configure(ctx context.Context, companyID, handle string, env map[string]string) error {
	if h.envAEAD == nil {
		return errors.New("statichost: no environment key")
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
	nonce := make([]byte, h.envAEAD.NonceSize())
	_, _ = rand.Read(nonce)
	sealed := h.envAEAD.Seal(nonce, nonce, b.Bytes(), []byte(companyID))
	if err := h.records.SetSiteEnv(ctx, companyID, sealed); errors.Is(err, models.ErrNotFound) {
		return fmt.Errorf("statichost: site %s is not published for this company", handle)
	} else if err != nil {
		return err
	}
	return nil
}

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// Env reads the site's environment as Configure wrote it (empty when it
// was never configured).
func (h *Host) Env(ctx context.Context, companyID string) (map[string]string, error) {
	if h.envAEAD == nil {
		return nil, errors.New("statichost: no environment key")
	}
	sealed, err := h.records.SiteEnv(ctx, companyID)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	if sealed == nil {
		return env, nil
	}
	n := h.envAEAD.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("statichost: sealed environment is too short")
	}
	plain, err := h.envAEAD.Open(nil, sealed[:n], sealed[n:], []byte(companyID))
	if err != nil {
		return nil, fmt.Errorf("statichost: open environment: %w", err)
	}
	for line := range strings.Lines(string(plain)) {
		if k, v, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "="); ok {
			env[k] = v
		}
	}
	return env, nil
}

// Check says whether the site is published, serves main's head, and
// answers 200 over HTTP.
func (h *Host) Check(ctx context.Context, companyID, handle string) error {
	st, err := h.records.SiteOfCompany(ctx, companyID)
	if errors.Is(err, models.ErrNotFound) || err == nil && st.Handle != handle {
		return fmt.Errorf("statichost: site %s is not published", handle)
	}
	if err != nil {
		return err
	}
	if h.src != nil {
		head, err := h.src.Head(ctx, companyID)
		if err != nil {
			return fmt.Errorf("statichost: read main: %w", err)
		}
		if head != "" && st.CommitID == "" {
			return fmt.Errorf("statichost: site %s has no deploy; main is at %s", handle, short(head))
		}
	}
	if st.DeployID != "" {
		if _, err := h.manifest(ctx, st); err != nil {
			return fmt.Errorf("statichost: deploy of %s cannot be read: %w", short(st.CommitID), err)
		}
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
	if resp.StatusCode != http.StatusOK && !(st.DeployID == "" && resp.StatusCode == http.StatusNotFound) {
		return fmt.Errorf("statichost: %s answered %d", h.SiteURL(handle), resp.StatusCode)
	}
	return nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// Delete unpublishes a site (its deploys stay, immutable).
func (h *Host) Delete(ctx context.Context, companyID string) error {
	h.sites.clear()
	return h.records.UnpublishSite(ctx, companyID)
}

// SiteHeaders are set on every response of the sites listener: the page
// runs sandboxed in an opaque origin (no cookies, no storage, no
// same-origin reads of other sites), and types are never sniffed.
var SiteHeaders = map[string]string{
	"Content-Security-Policy": "sandbox allow-scripts allow-forms allow-popups",
	"X-Content-Type-Options":  "nosniff",
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

// siteOf reads a site's row through the TTL cache ("not published" is
// cached too, so unknown handles do not reach the database each time).
func (h *Host) siteOf(ctx context.Context, key string, read func() (models.SiteState, error)) (models.SiteState, bool, error) {
	if st, found, ok := h.sites.get(key); ok {
		return st, found, nil
	}
	st, err := read()
	if errors.Is(err, models.ErrNotFound) {
		h.sites.put(key, models.SiteState{}, false)
		return models.SiteState{}, false, nil
	}
	if err != nil {
		return models.SiteState{}, false, err
	}
	h.sites.put(key, st, true)
	return st, true, nil
}

// manifest reads a deploy's manifest, cached by its immutable key.
func (h *Host) manifest(ctx context.Context, st models.SiteState) (*manifest, error) {
	if m, ok := h.manifests.get(st.ManifestKey); ok {
		return m, nil
	}
	rc, err := h.blobs.Open(ctx, st.ManifestKey)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var m manifest
	if err := json.NewDecoder(rc).Decode(&m); err != nil {
		return nil, fmt.Errorf("statichost: manifest %s: %w", st.ManifestKey, err)
	}
	h.manifests.put(st.ManifestKey, &m, m.cost())
	return &m, nil
}

// content reads a file's bytes, cached by its immutable key.
func (h *Host) content(ctx context.Context, f manifestFile) ([]byte, error) {
	if b, ok := h.contents.get(f.Key); ok {
		return b, nil
	}
	rc, err := h.blobs.Open(ctx, f.Key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	if len(b) <= maxCachedFile {
		h.contents.put(f.Key, b, int64(len(b)))
	}
	return b, nil
}
