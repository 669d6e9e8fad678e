package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"holdco/service"
	"holdco/testenv"
)

// noDNS answers every look-up with an error: a fuzzed https client_id is
// never fetched from the network.
type noDNS struct{}

func (noDNS) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return nil, errors.New("fuzz: no look-ups")
}

// FuzzClientMetadata feeds registration bodies (RFC 7591) and client ID
// metadata documents to the registration rules: a refusal is an OAuth
// error of the registration kind; an accepted client has 1 to 10 distinct
// redirect URIs, each absolute https (or, for a native client, http on a
// loopback host) without fragment or user information, each matching
// itself and nothing else for a web client; a one-line name of 1 to 64
// characters with no hidden character; an https client_uri or none.
func FuzzClientMetadata(f *testing.F) {
	for _, s := range []string{
		`{"client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"]}`,
		`{"client_name":"CLI","redirect_uris":["http://127.0.0.1/cb","http://[::1]:8080/cb"],"application_type":"native"}`,
		`{"client_name":"x","redirect_uris":["http://localhost:99999/cb"],"application_type":"native"}`,
		`{"client_name":"Cl\u200baude","redirect_uris":["https://a.example/cb#f"]}`,
		`{"client_name":" ","redirect_uris":[],"grant_types":["refresh_token"]}`,
		`{"client_name":"a","redirect_uris":["https://u:p@a.example/"],"token_endpoint_auth_method":"client_secret_basic"}`,
		`{"client_name":"a","redirect_uris":["https:///cb","https:a.example","//a.example/cb"],"client_uri":"javascript:alert(1)"}`,
		`{"client_id":"https://app.example/c.json","client_name":"doc","redirect_uris":["http://localhost/cb"],"token_endpoint_auth_methods_supported":["none"]}`,
		`{"client_name":"a","redirect_uris":["https://a.example/cb","https://a.example/cb"],"response_types":["code","token"]}`,
	} {
		f.Add([]byte(s), false, "https://a.example/cb")
		f.Add([]byte(s), true, "http://127.0.0.1:5000/cb")
	}
	f.Fuzz(func(t *testing.T, body []byte, document bool, probe string) {
		var md Metadata
		if json.Unmarshal(body, &md) != nil {
			return // the endpoint answers invalid_client_metadata before the rules
		}
		c, oe := checkMetadata(md, document)
		if oe != nil {
			if oe.Code != ErrInvalidClientMetadata && oe.Code != ErrInvalidRedirectURI {
				t.Fatalf("refusal %s: %s", oe.Code, oe.Description)
			}
			return
		}
		if n := len(c.RedirectURIs); n < 1 || n > MaxRedirectURIs {
			t.Fatalf("%d redirect URIs", n)
		}
		seen := map[string]bool{}
		for _, r := range c.RedirectURIs {
			if seen[r] {
				t.Fatalf("redirect %q twice", r)
			}
			seen[r] = true
			u, err := url.Parse(r)
			if err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" || u.User != nil || strings.ContainsAny(r, "# \\") {
				t.Fatalf("redirect %q accepted", r)
			}
			loopback := u.Scheme == "http" && isLoopbackHost(u.Hostname())
			if u.Scheme != "https" && !(loopback && c.ApplicationType == AppNative) {
				t.Fatalf("redirect %q accepted for a %s client", r, c.ApplicationType)
			}
			if got, ok := c.matchRedirect(r); !ok || got != r {
				t.Fatalf("registered redirect %q does not match itself", r)
			}
		}
		if got, ok := c.matchRedirect(probe); ok {
			if c.ApplicationType == AppWeb && got != probe {
				t.Fatalf("web client: %q matches %q", probe, got)
			}
			if got != probe {
				u, _ := url.Parse(probe)
				if u.Scheme != "http" || !isLoopbackHost(u.Hostname()) || u.User != nil || u.Fragment != "" {
					t.Fatalf("native client: %q matches %q", probe, got)
				}
			}
		}
		if n := utf8.RuneCountInString(c.Name); n < 1 || n > MaxClientName || c.Name != strings.TrimSpace(c.Name) || service.CheckText(c.Name, false) != nil {
			t.Fatalf("name %q accepted", c.Name)
		}
		if _, bad := HiddenRune(c.Name); bad {
			t.Fatalf("name %q holds a hidden character", c.Name)
		}
		if c.ClientURI != "" && !strings.HasPrefix(c.ClientURI, "https://") {
			t.Fatalf("client_uri %q accepted", c.ClientURI)
		}
		if c.ApplicationType != AppWeb && c.ApplicationType != AppNative {
			t.Fatalf("application type %q", c.ApplicationType)
		}
	})
}

// FuzzParseAuthorization sends arbitrary authorization requests (the
// query string) to the authorization endpoint's rules with a web and a
// native pre-registered client and a real store: an answer either passes
// every rule (S256 challenge of the right shape, state, the connector as
// resource, a registered redirect) or is an AuthorizeError, and an error
// is sent back to the client only at a redirect URI registered for it —
// never an open redirect.
func FuzzParseAuthorization(f *testing.F) {
	const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	for _, q := range []string{
		"client_id=web&redirect_uri=https%3A%2F%2Fa.example%2Fcb&response_type=code&state=s&code_challenge=" + challenge + "&code_challenge_method=S256",
		"client_id=cli&redirect_uri=http%3A%2F%2F127.0.0.1%3A49152%2Fcb&response_type=code&state=s&code_challenge=" + challenge + "&code_challenge_method=S256&resource=http%3A%2F%2Fmcp.test%2F&prompt=none",
		"client_id=web&redirect_uri=https%3A%2F%2Fevil.example%2Fcb&response_type=token&state=s",
		"client_id=cli&redirect_uri=http%3A%2F%2Flocalhost%3A1%2Fcb%23x&response_type=code",
		"client_id=web&client_id=cli&state=%00",
		"client_id=https%3A%2F%2Fapp.example%2Fc.json&redirect_uri=https%3A%2F%2Fapp.example%2Fcb",
		"client_id=hco_dcr_unknown&redirect_uri=x",
		"client_id=web&redirect_uri=https%3A%2F%2Fa.example%2Fcb&response_type=code&state=s&code_challenge_method=plain&code_challenge=abc",
		"%zz", "client_id=web&redirect_uri=https://a.example/cb&response_type=code&state=s&scope=admin&code_challenge=" + challenge + "&code_challenge_method=S256",
	} {
		f.Add(q)
	}
	pre, err := checkPreregistered([]PreregisteredClient{
		{ID: "web", Name: "Web", RedirectURIs: []string{"https://a.example/cb"}},
		{ID: "cli", Name: "CLI", RedirectURIs: []string{"http://127.0.0.1/cb", "http://localhost:3000/cb"}, ApplicationType: AppNative},
	})
	if err != nil {
		f.Fatal(err)
	}
	now := time.Now
	s := &Service{cfg: Config{Issuer: "http://auth.test", Resource: "http://mcp.test"}, store: testenv.NewStore(f), now: now,
		fetcher: &Fetcher{Resolver: noDNS{}, Timeout: time.Second}, preregistered: pre,
		tokens: service.NewCache[string, *service.Principal](time.Second, 10, now)}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		req, err := s.ParseAuthorization(context.Background(), rawQuery)
		if err != nil {
			var ae *AuthorizeError
			if !errors.As(err, &ae) {
				t.Fatalf("not an AuthorizeError: %v", err)
			}
			if ae.Redirect {
				c, ok := pre[mustQuery(t, rawQuery).Get("client_id")]
				if !ok {
					t.Fatalf("redirects for an unknown client: %+v", ae)
				}
				if _, ok := c.matchRedirect(ae.RedirectURI); !ok {
					t.Fatalf("redirects to %q, not registered for %s", ae.RedirectURI, c.ID)
				}
			}
			return
		}
		q := mustQuery(t, rawQuery)
		if _, ok := req.Client.matchRedirect(req.RedirectURI); !ok || req.RedirectURI != q.Get("redirect_uri") {
			t.Fatalf("accepted redirect %q", req.RedirectURI)
		}
		if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || !service.ValidChallenge(req.CodeChallenge) {
			t.Fatalf("accepted %q", rawQuery)
		}
		if req.State == "" || service.CheckText(req.State, false) != nil || req.Resource != "http://mcp.test" || req.Scope != Scope {
			t.Fatalf("accepted %+v", req)
		}
		if port, ok := req.Loopback(); ok {
			if _, err := net.LookupPort("tcp", port); err != nil && port != "80" {
				t.Fatalf("loopback port %q", port)
			}
		}
	})
}

func mustQuery(t *testing.T, raw string) url.Values {
	q, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatalf("accepted a malformed query %q", raw)
	}
	return q
}
