// Package mcp is the assistant connector's adapter: MCP protocol revision
// 2026-07-28 over stateless streamable HTTP (the official go-sdk), with
// OAuth bearer tokens of the authorization server. It parses, authenticates,
// calls service/connector and renders; no business rule lives here.
//
// A request passes, in order: the method check (POST only at the root;
// GET and DELETE answer 405), the protocol filter (anything but 2026-07-28
// is refused with -32022, see filter.go), the bearer check (401 with the
// protected resource metadata's address), then the SDK's stateless
// handler, whose receiving middleware puts the principal in the context
// and turns send_message into a task for clients that declared the tasks
// extension (tasks.go). A plain tools/list is answered with the SDK's own
// answer kept from the first one (toolslist.go); a plain tools/call runs
// the tool's call without a server session and answers as the SDK would
// (toolscall.go).
package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"holdco/models"
	"holdco/service"
	"holdco/service/connector"
)

// ProtocolVersion is the one protocol revision the connector speaks.
const ProtocolVersion = "2026-07-28"

// Scope is the OAuth scope that grants the connector.
const Scope = "nanocorp"

// ResourceMetadataPath is the protected resource metadata (RFC 9728).
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// ToolListTTLMs is how long clients may cache tools/list (one hour).
const ToolListTTLMs = 3_600_000

// MaxBodyBytes bounds a request body: upload_file's 3 MB in base64 and
// the envelope fit; more answers 413.
const MaxBodyBytes = 6 << 20

// tokenIntrospector is the authorization server's token check
// (service/oauth): the principal of a live access token, a models error
// with code unauthenticated for anything else.
type tokenIntrospector interface {
	Introspect(ctx context.Context, rawToken string) (service.Principal, error)
}

// Deps are what the connector's listener needs.
type Deps struct {
	Connector *connector.Service
	// Tokens checks bearer tokens; nil refuses every token (no
	// authorization server wired).
	Tokens tokenIntrospector
	// PublicURL is the connector's address (the OAuth resource);
	// AuthorizationServer the issuer of its tokens.
	PublicURL           string
	AuthorizationServer string
	// Health answers GET /health.
	Health http.Handler
	Logger *slog.Logger
	// Version is holdco's version, in the server's identity.
	Version string
}

// New returns the connector's HTTP handler, served at the root path of
// its own origin.
func New(d Deps) http.Handler {
	mux, _ := newConnector(d, false)
	return mux
}

// newConnector is New, with the tools/call fast path off when
// sdkCallsOnly; it returns the handler behind the mux too.
func newConnector(d Deps, sdkCallsOnly bool) (http.Handler, *handler) {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	pub := strings.TrimRight(d.PublicURL, "/")
	sdkLogger := slog.New(sdkLogHandler{d.Logger.Handler()})
	impl := &sdk.Implementation{Name: "holdco", Title: "holdco businesses", Version: d.Version}
	h := &handler{conn: d.Connector, logger: d.Logger, names: map[string]bool{}, impl: impl, sdkCallsOnly: sdkCallsOnly}
	h.serverMeta, _ = json.Marshal(sdk.Meta{sdk.MetaKeyServerInfo: impl})
	server := sdk.NewServer(impl, &sdk.ServerOptions{
		Instructions: "Found and run AI-operated businesses: list them, send a message to a business's agent (a task when you " +
			"declare the tasks extension), poll its turn, read credits and billing links. Every business tool takes `business`, a handle or id.",
		Logger:                    sdkLogger,
		Capabilities:              &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Extensions: map[string]any{TasksExtension: map[string]any{}}},
		SupportedProtocolVersions: []string{ProtocolVersion},
		SetCacheable:              setCacheable,
	})
	h.localhostCheck = loopback(pub)
	h.registerTools(server)
	h.registerTasks(server)
	stream := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, Logger: sdkLogger, MaxRequestBodyBytes: MaxBodyBytes,
		// The SDK refuses a request reaching a loopback listener under
		// another Host (DNS rebinding against a local server). A connector
		// published under a public name usually sits behind a proxy on
		// loopback, and every request needs a bearer token anyway: the
		// check stays only while the public URL is itself loopback.
		DisableLocalhostProtection: !loopback(pub),
	})
	bearer := auth.RequireBearerToken(h.verifier(d.Tokens), &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: pub + ResourceMetadataPath, AllowMissingExpiration: true, // access tokens do not expire
	})
	mux := http.NewServeMux()
	mux.Handle(ResourceMetadataPath, auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: pub, AuthorizationServers: []string{strings.TrimRight(d.AuthorizationServer, "/")},
		ScopesSupported: []string{Scope}, BearerMethodsSupported: []string{"header"}, ResourceName: "holdco",
	}))
	if d.Health != nil {
		mux.Handle("GET /health", d.Health)
	}
	mux.Handle("/{$}", accessLog(d.Logger, onlyPost(protocolFilter(bearer(h.serveToolsCall(h.serveToolsList(stream)))))))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, models.BodyOf(models.Errorf(models.CodeNotFound,
			"No route matches %s %s: the connector is served at the root path.", r.Method, r.URL.Path)))
	})
	return mux, h
}

// handler holds what the tools, the tasks and the bearer check share.
type handler struct {
	conn   *connector.Service
	logger *slog.Logger
	// names are the connector's own tools (the agents' may not reuse them).
	names map[string]bool
	// tools is the SDK's tools/list answers, kept (toolslist.go).
	tools listedTools
	// localhostCheck: the SDK refuses requests under a foreign Host
	// (DisableLocalhostProtection is off).
	localhostCheck bool
	// calls are the tools' calls by name, the SDK's and the fast path's
	// (toolscall.go); impl is the server's identity its results carry.
	calls map[string]registeredCall
	impl  *sdk.Implementation
	// serverMeta is a result's _meta with impl, encoded once.
	serverMeta []byte
	// sdkCallsOnly turns the tools/call fast path off (tests compare);
	// fastCalls counts the calls it answered.
	sdkCallsOnly bool
	fastCalls    atomic.Int64
}

// registeredCall is a tool's call; fast says the fast path may run it.
type registeredCall struct {
	call toolCall
	fast bool
}

// setCacheable marks tools/list (and discovery) cacheable for an hour, by
// this user only: the list is the same for everyone today, but a client
// must not share what it read with a token across users.
func setCacheable(_ context.Context, req sdk.Request, c *sdk.Cacheable) {
	switch req.(type) {
	case *sdk.ListToolsRequest:
		c.TTLMs, c.CacheScope = ToolListTTLMs, "private"
	default:
		c.CacheScope = "private"
	}
}

// onlyPost answers anything but POST with 405: the connector is stateless,
// so there is no stream to GET and no session to DELETE.
func onlyPost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, models.BodyOf(models.Errorf(models.CodeMethodNotAllowed,
				"The connector takes POST only (stateless streamable HTTP): %s is not served.", r.Method)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// loopback reports whether a URL names this machine (localhost or a
// loopback address).
func loopback(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	host := p.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
