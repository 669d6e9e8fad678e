package oauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"holdco/models"
)

// Limits of a client ID metadata document fetch (spec, Limits).
const (
	MetadataFetchTimeout = 10 * time.Second
	MetadataMaxBytes     = 64 << 10
	MetadataMaxCache     = 24 * time.Hour
)

// Resolver looks host names up (net.DefaultResolver in production).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Fetcher fetches client ID metadata documents without opening a path to
// the service's own network: https only, every address the name resolves
// to must be public (AllowAddr), the connection goes to the address that
// was checked (no second look-up), no redirects, bounded time and size,
// application/json only.
type Fetcher struct {
	Resolver Resolver
	// AllowAddr says whether an address may be connected to; nil allows
	// public unicast addresses only (PublicAddr).
	AllowAddr func(netip.Addr) bool
	// RootCAs verifies servers; nil uses the system's roots.
	RootCAs *x509.CertPool
	Timeout time.Duration
}

// PublicAddr reports whether a is a public unicast address: not loopback,
// private, link-local (cloud metadata lives there), shared (CGNAT),
// multicast, unspecified, documentation, benchmarking or reserved, and
// not an IPv6 form that embeds one of those.
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

var nonPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/32", "2001:db8::/32", "2002::/16", "fec0::/10", "fc00::/7",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// errFetch is a refused or failed fetch; its text is safe to show.
type errFetch struct{ msg string }

func (e errFetch) Error() string { return e.msg }

func fetchFailed(format string, args ...any) error { return errFetch{fmt.Sprintf(format, args...)} }

// Fetch returns the document at rawURL and how long it may be cached.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) ([]byte, time.Duration, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, 0, fetchFailed("the client_id is not an https URL")
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = MetadataFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
	}
	addr, err := f.pick(ctx, host)
	if err != nil {
		return nil, 0, err
	}
	pinned := net.JoinHostPort(addr.String(), port)
	dialer := &net.Dialer{Timeout: timeout}
	transport := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "tcp", pinned)
		},
		TLSClientConfig:        &tls.Config{ServerName: host, RootCAs: f.RootCAs, MinVersion: tls.VersionTLS12},
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 16 << 10,
		ResponseHeaderTimeout:  timeout,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, 0, fetchFailed("the client_id is not a valid URL")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "holdco-oauth (client ID metadata document fetch)")
	resp, err := client.Do(req)
	if err != nil {
		// The deadline shows as the context's or as the transport's own
		// timeout (the response header timeout is the same length and can
		// fire first).
		if timedOut(ctx, err) {
			return nil, 0, fetchFailed("the client metadata document did not arrive within %s", timeout)
		}
		return nil, 0, fetchFailed("the client metadata document could not be fetched")
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, 0, fetchFailed("the client metadata document URL redirects; redirects are not followed")
	case resp.StatusCode != http.StatusOK:
		return nil, 0, fetchFailed("the client metadata document URL answered %d", resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, 0, fetchFailed("the client metadata document is not served as application/json")
	}
	if resp.ContentLength > MetadataMaxBytes {
		return nil, 0, fetchFailed("the client metadata document is larger than %d bytes", MetadataMaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MetadataMaxBytes+1))
	if err != nil {
		if timedOut(ctx, err) {
			return nil, 0, fetchFailed("the client metadata document did not arrive within %s", timeout)
		}
		return nil, 0, fetchFailed("the client metadata document could not be read")
	}
	if len(body) > MetadataMaxBytes {
		return nil, 0, fetchFailed("the client metadata document is larger than %d bytes", MetadataMaxBytes)
	}
	return body, cacheLifetime(resp.Header.Get("Cache-Control")), nil
}

// timedOut says whether a fetch's err is its deadline passing.
func timedOut(ctx context.Context, err error) bool {
	var ne net.Error
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// pick resolves host and returns the address to connect to; every address
// must be allowed, so a name that mixes public and private answers is
// refused rather than raced.
func (f *Fetcher) pick(ctx context.Context, host string) (netip.Addr, error) {
	allow := f.AllowAddr
	if allow == nil {
		allow = PublicAddr
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		r := f.Resolver
		if r == nil {
			r = net.DefaultResolver
		}
		addrs, err = r.LookupNetIP(ctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			return netip.Addr{}, fetchFailed("the client_id's host name does not resolve")
		}
	}
	for _, a := range addrs {
		if !allow(a.Unmap()) {
			return netip.Addr{}, fetchFailed("the client_id's host resolves to an address that is not public")
		}
	}
	return addrs[0].Unmap(), nil
}

// cacheLifetime reads max-age (bounded by MetadataMaxCache); no-store and
// no-cache mean fetch every time; no max-age caches for the maximum.
func cacheLifetime(cc string) time.Duration {
	life := MetadataMaxCache
	for _, d := range strings.Split(cc, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(strings.ToLower(d)), "=")
		switch k {
		case "no-store", "no-cache":
			return 0
		case "max-age":
			n, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64)
			if err != nil || n < 0 {
				return 0
			}
			if time.Duration(n)*time.Second < life {
				life = time.Duration(n) * time.Second
			}
		}
	}
	return life
}

// checkMetadataURL applies rule 12a to a client_id that is a URL.
func checkMetadataURL(raw string) *Error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.ForceQuery ||
		strings.Contains(raw, "#") || len(u.Path) < 2 || strings.Contains(u.Path, "/./") || strings.Contains(u.Path, "/../") ||
		strings.HasSuffix(u.Path, "/.") || strings.HasSuffix(u.Path, "/..") {
		return oauthError(ErrInvalidClient, "A URL client_id must be an https URL with a path and no query or fragment.")
	}
	return nil
}

// metadataClient returns the client a metadata document describes, from
// the cache (shared by replicas: the row) or fetched.
func (s *Service) metadataClient(ctx context.Context, id string) (Client, error) {
	if err := checkMetadataURL(id); err != nil {
		return Client{}, err
	}
	now := s.now()
	row, err := s.store.OAuth().GetOAuthClient(ctx, id)
	if err == nil && row.Kind == models.OAuthClientMetadata && row.CacheUntil != nil && now.Before(*row.CacheUntil) {
		return clientOf(row)
	}
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return Client{}, err
	}
	body, life, err := s.fetcher.Fetch(ctx, id)
	if err != nil {
		var fe errFetch
		if errors.As(err, &fe) {
			return Client{}, oauthError(ErrInvalidClient, "The client metadata document cannot be used: "+fe.msg+".")
		}
		return Client{}, err
	}
	var md Metadata
	if err := json.Unmarshal(body, &md); err != nil {
		return Client{}, oauthError(ErrInvalidClient, "The client metadata document is not a JSON object of client metadata.")
	}
	if md.ClientID == nil || *md.ClientID != id {
		return Client{}, oauthError(ErrInvalidClient, "The client metadata document's client_id must equal its URL exactly.")
	}
	if md.RedirectURIs == nil {
		return Client{}, oauthError(ErrInvalidClient, "The client metadata document must list redirect_uris.")
	}
	c, cerr := checkMetadata(md, true)
	if cerr != nil {
		return Client{}, oauthError(ErrInvalidClient, "The client metadata document is refused: "+cerr.Description)
	}
	uris, _ := json.Marshal(c.RedirectURIs)
	until := now.Add(life)
	saved := models.OAuthClient{ID: id, Kind: models.OAuthClientMetadata, Name: c.Name, ClientURI: c.ClientURI,
		ApplicationType: c.ApplicationType, RedirectURIs: string(uris), CreatedAt: now, CacheUntil: &until}
	if err := s.store.OAuth().SaveOAuthMetadataClient(ctx, saved); err != nil {
		return Client{}, err
	}
	c.ID, c.Kind, c.CreatedAt = id, ClientMetadata, now
	if err == nil && row.ID != "" {
		c.CreatedAt = row.CreatedAt
	}
	return c, nil
}
