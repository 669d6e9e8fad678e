package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"holdco/models"
	"holdco/service"
)

// ClientKind tells how an assistant is known to the service.
type ClientKind string

const (
	// ClientPreregistered is arranged with support and configured
	// (HOLDCO_OAUTH_CLIENTS): "registered with the service".
	ClientPreregistered ClientKind = "preregistered"
	// ClientDynamic registered itself (RFC 7591): "not verified".
	ClientDynamic ClientKind = ClientKind(models.OAuthClientDynamic)
	// ClientMetadata is named by its client ID metadata document: "not
	// verified".
	ClientMetadata ClientKind = ClientKind(models.OAuthClientMetadata)
)

// Application types (RFC 7591 / OpenID Connect Registration).
const (
	AppWeb    = "web"
	AppNative = "native"
)

// Client is an assistant as the authorization server sees it.
type Client struct {
	ID              string
	Kind            ClientKind
	Name            string
	ClientURI       string
	ApplicationType string
	RedirectURIs    []string
	CreatedAt       time.Time
}

// Verified reports whether the client is registered with the service
// (pre-registered); self-registered clients are "not verified".
func (c Client) Verified() bool { return c.Kind == ClientPreregistered }

// redirectSet is a digest of the client's redirect list: consent is asked
// again when it changes.
func (c Client) redirectSet() string {
	uris := slices.Clone(c.RedirectURIs)
	slices.Sort(uris)
	b, _ := json.Marshal(uris)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// matchRedirect returns the registered URI that raw matches (rule 9):
// exactly, or for a native client's http loopback redirect with any port.
func (c Client) matchRedirect(raw string) (string, bool) {
	for _, r := range c.RedirectURIs {
		if r == raw {
			return r, true
		}
	}
	if c.ApplicationType != AppNative {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || !isLoopbackHost(u.Hostname()) {
		return "", false
	}
	if p := u.Port(); p != "" {
		// url.Parse takes any digits (99999): the consent page would show
		// a port no program can listen on (FuzzParseAuthorization).
		if _, err := net.LookupPort("tcp", p); err != nil {
			return "", false
		}
	}
	for _, r := range c.RedirectURIs {
		ru, err := url.Parse(r)
		if err != nil || ru.Scheme != "http" {
			continue
		}
		if ru.Hostname() == u.Hostname() && ru.EscapedPath() == u.EscapedPath() && ru.RawQuery == u.RawQuery && u.Fragment == "" && u.User == nil {
			return r, true
		}
	}
	return "", false
}

func isLoopbackHost(h string) bool { return h == "127.0.0.1" || h == "::1" || h == "localhost" }

// Metadata is a registration request (RFC 7591) or a client ID metadata
// document. Pointers tell absent from empty; other fields (logo_uri, …)
// are ignored.
type Metadata struct {
	ClientID                          *string   `json:"client_id,omitempty"`
	RedirectURIs                      *[]string `json:"redirect_uris,omitempty"`
	ApplicationType                   *string   `json:"application_type,omitempty"`
	GrantTypes                        *[]string `json:"grant_types,omitempty"`
	ResponseTypes                     *[]string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod           *string   `json:"token_endpoint_auth_method,omitempty"`
	TokenEndpointAuthMethodsSupported *[]string `json:"token_endpoint_auth_methods_supported,omitempty"`
	ClientName                        *string   `json:"client_name,omitempty"`
	ClientURI                         *string   `json:"client_uri,omitempty"`
}

// Limits of a registration (spec, Limits).
const (
	MaxRedirectURIs   = 10
	MaxClientName     = 64
	maxURILength      = 2000
	UnusedClientTTL   = 24 * time.Hour
	MaxPendingClients = 10_000
)

// Registration is the 201 answer of POST /oidc/register (no secret).
type Registration struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	ApplicationType         string   `json:"application_type"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ClientURI               string   `json:"client_uri,omitempty"`
}

// Register is dynamic client registration (rule 12b). Registrations nobody
// used expire after UnusedClientTTL; at most MaxPendingClients wait at
// once.
func (s *Service) Register(ctx context.Context, md Metadata) (Registration, error) {
	c, err := checkMetadata(md, false)
	if err != nil {
		return Registration{}, err
	}
	now := s.now()
	if _, err := s.store.OAuth().DeleteUnusedOAuthClients(ctx, now.Add(-UnusedClientTTL)); err != nil {
		return Registration{}, err
	}
	if n, err := s.store.OAuth().CountUnusedOAuthClientsSince(ctx, now.Add(-UnusedClientTTL)); err != nil {
		return Registration{}, err
	} else if n >= MaxPendingClients {
		return Registration{}, oauthError(ErrTemporarilyUnavailable, "Too many registrations are waiting to be used; retry later.")
	}
	uris, _ := json.Marshal(c.RedirectURIs)
	row := models.OAuthClient{ID: newClientID(), Kind: models.OAuthClientDynamic, Name: c.Name, ClientURI: c.ClientURI,
		ApplicationType: c.ApplicationType, RedirectURIs: string(uris), CreatedAt: now}
	if err := s.store.OAuth().CreateOAuthClient(ctx, &row); err != nil {
		return Registration{}, err
	}
	return Registration{ClientID: row.ID, ClientIDIssuedAt: now.Unix(), ClientName: c.Name, RedirectURIs: c.RedirectURIs,
		ApplicationType: c.ApplicationType, GrantTypes: []string{"authorization_code"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", ClientURI: c.ClientURI}, nil
}

// newClientID is an opaque, unguessable client id of a dynamic client.
func newClientID() string { return "hco_dcr_" + service.NewSecret(16) }

// checkMetadata applies the registration rules to a registration request
// or (document true) a client ID metadata document, whose application type
// defaults to native when every redirect URI is https or http loopback and
// at least one is loopback.
func checkMetadata(md Metadata, document bool) (Client, *Error) {
	c := Client{ApplicationType: AppWeb}
	if md.ApplicationType != nil {
		switch *md.ApplicationType {
		case AppWeb, AppNative:
			c.ApplicationType = *md.ApplicationType
		default:
			return c, oauthError(ErrInvalidClientMetadata, `application_type must be "web" or "native".`)
		}
	}
	if md.RedirectURIs == nil || len(*md.RedirectURIs) == 0 || len(*md.RedirectURIs) > MaxRedirectURIs {
		return c, oauthError(ErrInvalidRedirectURI, fmt.Sprintf("redirect_uris must list 1 to %d URIs.", MaxRedirectURIs))
	}
	if document && md.ApplicationType == nil {
		for _, r := range *md.RedirectURIs {
			if u, err := url.Parse(r); err == nil && u.Scheme == "http" && isLoopbackHost(u.Hostname()) {
				c.ApplicationType = AppNative
			}
		}
	}
	for i, r := range *md.RedirectURIs {
		if msg := redirectProblem(r, c.ApplicationType); msg != "" {
			return c, oauthError(ErrInvalidRedirectURI, fmt.Sprintf("redirect_uris[%d] %s", i, msg))
		}
		if !slices.Contains(c.RedirectURIs, r) {
			c.RedirectURIs = append(c.RedirectURIs, r)
		}
	}
	if md.GrantTypes != nil {
		g := slices.Clone(*md.GrantTypes)
		slices.Sort(g)
		if !slices.Equal(g, []string{"authorization_code"}) && !slices.Equal(g, []string{"authorization_code", "refresh_token"}) {
			return c, oauthError(ErrInvalidClientMetadata, `grant_types must be ["authorization_code"] (refresh_token may be listed beside it and is not granted).`)
		}
	}
	if md.ResponseTypes != nil && !slices.Equal(*md.ResponseTypes, []string{"code"}) {
		return c, oauthError(ErrInvalidClientMetadata, `response_types must be ["code"].`)
	}
	if document && md.TokenEndpointAuthMethodsSupported != nil {
		if !slices.Contains(*md.TokenEndpointAuthMethodsSupported, "none") {
			return c, oauthError(ErrInvalidClientMetadata, `token_endpoint_auth_methods_supported must include "none": only public clients are served.`)
		}
	} else if md.TokenEndpointAuthMethod != nil && *md.TokenEndpointAuthMethod != "none" {
		return c, oauthError(ErrInvalidClientMetadata, `token_endpoint_auth_method must be "none": only public clients are served.`)
	}
	if md.ClientName == nil {
		return c, oauthError(ErrInvalidClientMetadata, "client_name is required.")
	}
	name := strings.TrimSpace(*md.ClientName)
	if n := utf8.RuneCountInString(name); n < 1 || n > MaxClientName || service.CheckText(*md.ClientName, false) != nil {
		return c, oauthError(ErrInvalidClientMetadata, fmt.Sprintf("client_name must be 1 to %d characters of one line of text.", MaxClientName))
	}
	if r, bad := HiddenRune(name); bad {
		return c, oauthError(ErrInvalidClientMetadata, fmt.Sprintf("client_name must not contain invisible or text-direction characters (it holds U+%04X): the consent page shows the name as given.", r))
	}
	c.Name = name
	if md.ClientURI != nil && *md.ClientURI != "" {
		u, err := url.Parse(*md.ClientURI)
		if err != nil || u.Scheme != "https" || u.Host == "" || len(*md.ClientURI) > maxURILength || service.CheckText(*md.ClientURI, false) != nil {
			return c, oauthError(ErrInvalidClientMetadata, "client_uri must be an https URL.")
		}
		c.ClientURI = *md.ClientURI
	}
	return c, nil
}

// redirectProblem says what is wrong with a redirect URI of a client of
// the application type, or "".
func redirectProblem(raw, appType string) string {
	if len(raw) > maxURILength || service.CheckText(raw, false) != nil || strings.ContainsAny(raw, " \\") {
		return "is not a valid URI."
	}
	if r, hidden := HiddenRune(raw); hidden {
		// Shown whole on the consent page: a right-to-left override would
		// draw part of it reversed (…?x=\u202egro.elpmaxe//:sptth).
		return fmt.Sprintf("must not contain the invisible character U+%04X.", r)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return "is not an absolute URI."
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not have a fragment."
	case u.User != nil:
		return "must not carry user information."
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && appType == AppNative && isLoopbackHost(u.Hostname()):
		if p := u.Port(); p != "" && !validPort(p) {
			return "has an invalid port (1 to 65535, without leading zeros)."
		}
		return ""
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return `must use https; http on 127.0.0.1, [::1] or localhost needs application_type "native".`
	}
	return "must use https (native clients may also use http on 127.0.0.1, [::1] or localhost)."
}

// validPort reports whether p is a port a client can listen on, written
// plainly: 1 to 65535 in decimal digits, no leading zero (0 is no port;
// 080 reads as 80 to some parsers and as nothing to others).
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == p
}

// resolveClient finds a client by id: pre-registered, self-registered, or
// named by its metadata document (fetched, or read from the cache). An
// unknown client is invalid_client.
func (s *Service) resolveClient(ctx context.Context, id string) (Client, error) {
	if id == "" {
		return Client{}, oauthError(ErrInvalidRequest, "client_id is required.")
	}
	if c, ok := s.preregistered[id]; ok {
		return c, nil
	}
	if len(id) > maxURILength || service.CheckText(id, false) != nil {
		return Client{}, oauthError(ErrInvalidClient, "Unknown client_id.")
	}
	if strings.HasPrefix(id, "https://") {
		return s.metadataClient(ctx, id)
	}
	row, err := s.store.OAuth().GetOAuthClient(ctx, id)
	if errors.Is(err, models.ErrNotFound) || err == nil && row.Kind != models.OAuthClientDynamic {
		return Client{}, oauthError(ErrInvalidClient, "Unknown client_id; register the client first.")
	}
	if err != nil {
		return Client{}, err
	}
	return clientOf(row)
}

func clientOf(row models.OAuthClient) (Client, error) {
	c := Client{ID: row.ID, Kind: ClientKind(row.Kind), Name: row.Name, ClientURI: row.ClientURI, ApplicationType: row.ApplicationType, CreatedAt: row.CreatedAt}
	if err := json.Unmarshal([]byte(row.RedirectURIs), &c.RedirectURIs); err != nil {
		return Client{}, fmt.Errorf("oauth: client %s: redirect uris: %w", row.ID, err)
	}
	return c, nil
}

// PreregisteredClient is a client arranged with support (configuration).
type PreregisteredClient struct {
	ID              string
	Name            string
	RedirectURIs    []string
	ApplicationType string
}

func checkPreregistered(list []PreregisteredClient) (map[string]Client, error) {
	out := map[string]Client{}
	for _, p := range list {
		app := p.ApplicationType
		if app == "" {
			app = AppWeb
		}
		uris := slices.Clone(p.RedirectURIs)
		name := p.Name
		c, err := checkMetadata(Metadata{RedirectURIs: &uris, ApplicationType: &app, ClientName: &name}, false)
		if err != nil {
			return nil, fmt.Errorf("oauth client %q: %s", p.ID, err.Description)
		}
		if p.ID == "" || strings.HasPrefix(p.ID, "https://") || strings.HasPrefix(p.ID, "hco_dcr_") || service.CheckText(p.ID, false) != nil || len(p.ID) > 200 {
			return nil, fmt.Errorf("oauth client %q: the id must be 1 to 200 characters, not an https URL and not start with hco_dcr_", p.ID)
		}
		c.ID, c.Kind = p.ID, ClientPreregistered
		out[p.ID] = c
	}
	return out, nil
}

// HiddenRune finds the first character of s that changes how the rest
// reads without being seen itself: format characters (Unicode category
// Cf: zero-width spaces and joiners, bidirectional overrides and
// isolates, the byte order mark…), line and paragraph separators, and
// control characters. A client name holding one could pass for another
// on the consent page (Cl\u200baude, a right-to-left override).
func HiddenRune(s string) (rune, bool) {
	for _, r := range s {
		if unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Cc) {
			return r, true
		}
	}
	return 0, false
}
