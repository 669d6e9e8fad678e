// Package config reads holdco's configuration from the environment, in one
// place, as one section per concern (database, Temporal, each listener,
// identity, payments). Every variable, its section and its default is in
// Settings, which the README's table is rendered from. A section is loaded
// and validated by its own function; an invalid value stops the process
// with one line naming the variable (Error).
//
// Sections to come (blob, …) follow the same shape: a struct field on
// Config, a load function, rows in Settings.
package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/mail"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"holdco/internal/origin"
)

// Config is the whole runtime configuration.
type Config struct {
	// DataDir holds the embedded default's files: SQLite databases and the
	// local adapters' repositories, company databases and site records.
	DataDir string
	// SharedDataDir: the operator says the local adapters' directories
	// (blobs, repositories) are a volume every process mounts, so a split
	// deployment may use them (SplitState).
	SharedDataDir bool
	// ShutdownTimeout bounds how long in-flight requests get on Ctrl-C.
	ShutdownTimeout time.Duration
	Log             Log
	HTTP            HTTP

	Database  Database
	Temporal  Temporal
	API       API
	Sites     Sites
	MCP       MCP
	OAuth     OAuth
	Identity  Identity
	Payments  Payments
	Blob      Blob
	Repos     Repos
	Worker    Worker
	Mail      Mail
	LLM       LLM
	Analytics Analytics
	Founding  Founding
	Growth    Growth
	Tools     Tools

	Observability Observability
}

// HTTP bounds every listener's connections (net/http.Server): a slow or
// silent client cannot hold a connection and its goroutine for ever.
type HTTP struct {
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	// CaptureFront serves analytics capture POSTs on the API listener
	// with the lean HTTP/1.1 front (internal/httpfront); off, net/http
	// serves them like every other request.
	CaptureFront bool
}

// Log is how the process logs.
type Log struct {
	Level  slog.Level
	Format string // text or json
}

// Database is holdco's own database.
type Database struct {
	// URL is a postgres:// URL, or a SQLite file path (default
	// DataDir/holdco.db).
	URL string
	// MaxConns, MaxIdleConns and ConnMaxLifetime size the Postgres pool;
	// zero counts: by the process's roles (app) and half the maximum.
	MaxConns, MaxIdleConns int
	ConnMaxLifetime        time.Duration
}

// IsPostgres reports whether the database is Postgres.
func (d Database) IsPostgres() bool { return IsPostgres(d.URL) }

// Temporal is the Temporal cluster, or the embedded server's ports.
type Temporal struct {
	// Address points at an external Temporal cluster; empty starts the
	// embedded server.
	Address   string
	Namespace string
	// Host is the IP the embedded server and its UI bind to.
	Host   string
	Port   int
	UIPort int // 0 disables the embedded UI
	// StartTimeout bounds the wait for the embedded server to answer.
	StartTimeout time.Duration
}

// Embedded reports whether holdco starts its own Temporal server.
func (t Temporal) Embedded() bool { return t.Address == "" }

// API is the REST listener (api role) and the addresses around it.
type API struct {
	// Addr is the listener (host:port).
	Addr string
	// PublicURL is how browsers and the CLI reach the REST listener; empty
	// derives http://localhost:<port> from the bound address.
	PublicURL string
	// FrontendURL is the web app (sign-in lands there); empty means
	// holdco's own pages at PublicURL.
	FrontendURL string
}

// ResolvePublicURL returns PublicURL, or http://localhost:<port> of the
// address the REST listener is bound to.
func (a API) ResolvePublicURL(boundAddr string) string {
	if a.PublicURL != "" {
		return a.PublicURL
	}
	return localURL(boundAddr)
}

// Sites is the tenant sites' listener (sites role), an origin apart from
// everything of holdco's.
type Sites struct {
	Addr string
	// PublicURL is how browsers reach Addr; empty derives
	// http://localhost:<port> from the bound address.
	PublicURL string
}

// ResolvePublicURL returns PublicURL, or http://localhost:<port> of the
// address the sites listener is bound to.
func (s Sites) ResolvePublicURL(boundAddr string) string {
	if s.PublicURL != "" {
		return s.PublicURL
	}
	return localURL(boundAddr)
}

// MCP is the connector's listener (mcp role).
type MCP struct {
	Addr string
	// PublicURL is the connector's address as assistants reach it (the
	// OAuth resource its tokens are bound to); empty derives
	// http://localhost:<port> from the bound address.
	PublicURL string
}

// ResolvePublicURL returns PublicURL, or http://localhost:<port> of the
// address the connector listener is bound to.
func (m MCP) ResolvePublicURL(boundAddr string) string {
	if m.PublicURL != "" {
		return m.PublicURL
	}
	return localURL(boundAddr)
}

// OAuth is the authorization server's listener (oauth role).
type OAuth struct {
	Addr string
	// PublicURL is the authorization server's issuer (its bare origin);
	// empty derives http://localhost:<port> from the bound address.
	PublicURL string
	// Clients are the pre-registered assistants (HOLDCO_OAUTH_CLIENTS).
	Clients []OAuthClient
}

// OAuthClient is a pre-registered assistant: a fixed client id arranged
// with support. Its redirect URIs follow the registration rules (checked
// when the authorization server starts).
type OAuthClient struct {
	ID              string   `json:"client_id"`
	Name            string   `json:"client_name"`
	RedirectURIs    []string `json:"redirect_uris"`
	ApplicationType string   `json:"application_type,omitempty"`
}

// ResolvePublicURL returns PublicURL, or http://localhost:<port> of the
// address the authorization server listener is bound to.
func (o OAuth) ResolvePublicURL(boundAddr string) string {
	if o.PublicURL != "" {
		return o.PublicURL
	}
	return localURL(boundAddr)
}

// Identity is how users sign in and how holdco signs its tokens.
type Identity struct {
	// OIDCIssuer selects an external identity provider; empty runs the
	// embedded development provider at <public URL>/dev-idp.
	OIDCIssuer       string
	OIDCClientID     string
	OIDCClientSecret string
	// SecretKey signs session tokens and login state; empty keeps a random
	// key in the database, shared by every replica.
	SecretKey string
}

// Payments is Stripe and the prices of credits; with no secret key
// payments are off.
type Payments struct {
	StripeSecretKey        string
	StripeConnectSecretKey string
	StripeWebhookSecret    string
	// StripeConnectWebhookSecret verifies the Connect webhook endpoint
	// (events of connected accounts: the companies' own sales).
	StripeConnectWebhookSecret string
	StripeAPIBase              string
	StripeFounderPriceID       string
	StripeHostingPriceID       string
	CreditPriceCents           int64
	FounderMonthlyCredits      int64
}

// Enabled reports whether Stripe is configured.
func (p Payments) Enabled() bool { return p.StripeSecretKey != "" }

// Mail is the company inboxes: their domain, how messages are sent and the
// inbound webhook's secret.
type Mail struct {
	// Domain is the mail domain: a company's address is <handle>@Domain.
	Domain string
	// Backend is MailLocal (a mailbox under the data dir, offline) or
	// MailSMTP.
	Backend      string
	SMTPHost     string
	SMTPPort     int
	SMTPUser     string
	SMTPPassword string
	SMTPTLS      string // starttls, tls or none
	// From is the envelope sender (bounces) of every message; empty is the
	// company's own address.
	From string
	// InboundSecret signs the inbound webhook; empty disables it.
	InboundSecret  string
	DailySendLimit int64
}

// Mail backends.
const (
	MailLocal = "local"
	MailSMTP  = "smtp"
)

// LLM is the language model the agents run on.
type LLM struct {
	// Provider is LLMScripted (the offline default), LLMAnthropic or LLMOpenAI.
	Provider string
	Model    string
	APIKey   string
	// BaseURL overrides the provider's address; with openai it points at
	// any compatible server (Ollama, vLLM…).
	BaseURL   string
	MaxTokens int
	// Timeout bounds one model call, stream included.
	Timeout time.Duration
	// ScriptedStepDelay is how long each call of the scripted model takes.
	ScriptedStepDelay time.Duration
	// RunEvery is the period of each active company's scheduled agent run
	// (0: no scheduled runs).
	RunEvery time.Duration
}

// LLM providers.
const (
	LLMScripted  = "scripted"
	LLMAnthropic = "anthropic"
	LLMOpenAI    = "openai"
)

// Error names the setting that is wrong.
type Error struct {
	Var string
	Msg string
}

func (e *Error) Error() string { return e.Var + ": " + e.Msg }

// Load reads the configuration through getenv (os.Getenv in production),
// section by section; the first invalid value is returned as an *Error.
func Load(getenv func(string) string) (Config, error) {
	e := environment{getenv}
	var c Config
	var err error
	if c.DataDir, c.Log, c.ShutdownTimeout, err = loadProcess(e); err != nil {
		return c, err
	}
	if c.HTTP, err = loadHTTP(e); err != nil {
		return c, err
	}
	if c.Database, err = loadDatabase(e, c.DataDir); err != nil {
		return c, err
	}
	if c.Temporal, err = loadTemporal(e); err != nil {
		return c, err
	}
	if c.API, err = loadAPI(e); err != nil {
		return c, err
	}
	if c.Sites, err = loadSites(e, c.API); err != nil {
		return c, err
	}
	if c.MCP, err = loadMCP(e, c.API, c.Sites); err != nil {
		return c, err
	}
	if c.OAuth, err = loadOAuth(e, c.API, c.Sites, c.MCP); err != nil {
		return c, err
	}
	if c.Identity, err = loadIdentity(e); err != nil {
		return c, err
	}
	if c.Payments, err = loadPayments(e); err != nil {
		return c, err
	}
	if c.Blob, err = loadBlob(e, c.DataDir); err != nil {
		return c, err
	}
	if c.Repos, err = loadRepos(e, c.DataDir); err != nil {
		return c, err
	}
	if c.SharedDataDir, err = loadShared(e); err != nil {
		return c, err
	}
	if c.Worker.HealthAddr, err = e.addr("HOLDCO_WORKER_HEALTH_ADDR"); err != nil {
		return c, err
	}
	if c.Mail, err = loadMail(e); err != nil {
		return c, err
	}
	if c.LLM, err = loadLLM(e); err != nil {
		return c, err
	}
	if c.Founding, err = loadFounding(e); err != nil {
		return c, err
	}
	if c.Analytics, err = loadAnalytics(e); err != nil {
		return c, err
	}
	if c.Growth, err = loadGrowth(e); err != nil {
		return c, err
	}
	if c.Tools, err = loadTools(e); err != nil {
		return c, err
	}
	if c.Observability, err = loadObservability(e); err != nil {
		return c, err
	}
	return c, nil
}

func loadProcess(e environment) (dataDir string, log Log, shutdown time.Duration, err error) {
	dataDir = e.get("HOLDCO_DATA_DIR")
	if err := log.Level.UnmarshalText([]byte(e.get("HOLDCO_LOG_LEVEL"))); err != nil {
		return "", log, 0, &Error{"HOLDCO_LOG_LEVEL", fmt.Sprintf("%q is not one of debug, info, warn, error", e.get("HOLDCO_LOG_LEVEL"))}
	}
	if log.Format = e.get("HOLDCO_LOG_FORMAT"); log.Format != "text" && log.Format != "json" {
		return "", log, 0, &Error{"HOLDCO_LOG_FORMAT", fmt.Sprintf("%q is not one of text, json", log.Format)}
	}
	if shutdown, err = time.ParseDuration(e.get("HOLDCO_SHUTDOWN_TIMEOUT")); err != nil || shutdown <= 0 {
		return "", log, 0, &Error{"HOLDCO_SHUTDOWN_TIMEOUT", fmt.Sprintf("%q is not a positive duration such as 15s", e.get("HOLDCO_SHUTDOWN_TIMEOUT"))}
	}
	return dataDir, log, shutdown, nil
}

func loadHTTP(e environment) (HTTP, error) {
	var h HTTP
	var err error
	if h.ReadTimeout, err = e.duration("HOLDCO_HTTP_READ_TIMEOUT", false); err != nil {
		return h, err
	}
	if h.WriteTimeout, err = e.duration("HOLDCO_HTTP_WRITE_TIMEOUT", false); err != nil {
		return h, err
	}
	if h.IdleTimeout, err = e.duration("HOLDCO_HTTP_IDLE_TIMEOUT", false); err != nil {
		return h, err
	}
	v := e.get("HOLDCO_HTTP_CAPTURE_FRONT")
	if h.CaptureFront, err = strconv.ParseBool(v); err != nil {
		return h, &Error{"HOLDCO_HTTP_CAPTURE_FRONT", fmt.Sprintf("%q is not true or false", v)}
	}
	return h, nil
}

func loadDatabase(e environment, dataDir string) (Database, error) {
	d := Database{URL: e.get("DATABASE_URL")}
	if d.URL == "" {
		d.URL = filepath.Join(dataDir, "holdco.db")
	}
	n, err := e.count("HOLDCO_DB_MAX_CONNS", true)
	if err != nil {
		return d, err
	}
	idle, err := e.count("HOLDCO_DB_MAX_IDLE_CONNS", true)
	if err != nil {
		return d, err
	}
	if n > 0 && idle > n {
		return d, &Error{"HOLDCO_DB_MAX_IDLE_CONNS", fmt.Sprintf("%d is more than HOLDCO_DB_MAX_CONNS (%d)", idle, n)}
	}
	if n > 10_000 {
		return d, &Error{"HOLDCO_DB_MAX_CONNS", fmt.Sprintf("%d is more connections than any Postgres server accepts", n)}
	}
	d.MaxConns, d.MaxIdleConns = int(n), int(idle)
	if d.ConnMaxLifetime, err = e.duration("HOLDCO_DB_CONN_MAX_LIFETIME", false); err != nil {
		return d, err
	}
	return d, validateDatabaseURL(d.URL)
}

func loadTemporal(e environment) (Temporal, error) {
	t := Temporal{Address: e.get("TEMPORAL_ADDRESS"), Namespace: e.get("TEMPORAL_NAMESPACE"), Host: e.get("HOLDCO_TEMPORAL_HOST")}
	if t.Address != "" {
		if _, _, err := splitAddr(t.Address); err != nil {
			return t, &Error{"TEMPORAL_ADDRESS", err.Error()}
		}
	}
	var err error
	if t.Port, err = e.port("HOLDCO_TEMPORAL_PORT", false); err != nil {
		return t, err
	}
	if t.UIPort, err = e.port("HOLDCO_TEMPORAL_UI_PORT", true); err != nil {
		return t, err
	}
	if t.StartTimeout, err = e.duration("HOLDCO_TEMPORAL_START_TIMEOUT", false); err != nil {
		return t, err
	}
	return t, nil
}

func loadAPI(e environment) (API, error) {
	var a API
	var err error
	if a.Addr, err = e.addr("HOLDCO_API_ADDR"); err != nil {
		return a, err
	}
	if a.PublicURL, err = e.url("HOLDCO_PUBLIC_URL"); err != nil {
		return a, err
	}
	if a.FrontendURL, err = e.url("HOLDCO_FRONTEND_URL"); err != nil {
		return a, err
	}
	return a, nil
}

// loadSites also refuses a sites URL on the API's or the frontend's
// origin: tenant scripts there could take over accounts.
func loadSites(e environment, api API) (Sites, error) {
	var s Sites
	var err error
	if s.Addr, err = e.addr("HOLDCO_SITES_ADDR"); err != nil {
		return s, err
	}
	if s.PublicURL, err = e.url("HOLDCO_SITES_PUBLIC_URL"); err != nil {
		return s, err
	}
	if s.PublicURL != "" {
		for name, v := range map[string]string{"HOLDCO_PUBLIC_URL": api.PublicURL, "HOLDCO_FRONTEND_URL": api.FrontendURL} {
			if v != "" && origin.Same(s.PublicURL, v) {
				return s, &Error{"HOLDCO_SITES_PUBLIC_URL", fmt.Sprintf("must not share the origin of %s: tenant sites on holdco's origin could take over accounts", name)}
			}
		}
		if err := CheckSitesHost(s.PublicURL, api.PublicURL); err != nil {
			return s, err
		}
	}
	return s, nil
}

// loadMCP refuses a connector URL on the origin of the API, the frontend
// or the tenant sites: each listener is an origin of its own.
func loadMCP(e environment, api API, sites Sites) (MCP, error) {
	var m MCP
	var err error
	if m.Addr, err = e.addr("HOLDCO_MCP_ADDR"); err != nil {
		return m, err
	}
	if m.PublicURL, err = e.url("HOLDCO_MCP_PUBLIC_URL"); err != nil {
		return m, err
	}
	return m, ownOrigin("HOLDCO_MCP_PUBLIC_URL", m.PublicURL, map[string]string{
		"HOLDCO_PUBLIC_URL": api.PublicURL, "HOLDCO_FRONTEND_URL": api.FrontendURL, "HOLDCO_SITES_PUBLIC_URL": sites.PublicURL})
}

// loadOAuth refuses an authorization server URL on another listener's
// origin: its sign-in cookie and consent page must be its own.
func loadOAuth(e environment, api API, sites Sites, mcp MCP) (OAuth, error) {
	var o OAuth
	var err error
	if o.Addr, err = e.addr("HOLDCO_OAUTH_ADDR"); err != nil {
		return o, err
	}
	if o.PublicURL, err = e.url("HOLDCO_OAUTH_PUBLIC_URL"); err != nil {
		return o, err
	}
	if o.Clients, err = oauthClients(e.get("HOLDCO_OAUTH_CLIENTS")); err != nil {
		return o, err
	}
	return o, ownOrigin("HOLDCO_OAUTH_PUBLIC_URL", o.PublicURL, map[string]string{
		"HOLDCO_PUBLIC_URL": api.PublicURL, "HOLDCO_FRONTEND_URL": api.FrontendURL, "HOLDCO_SITES_PUBLIC_URL": sites.PublicURL,
		"HOLDCO_MCP_PUBLIC_URL": mcp.PublicURL})
}

// ownOrigin refuses url (setting name) when it shares an origin with one
// of others (setting name → URL; empty ones are skipped).
func ownOrigin(name, url string, others map[string]string) error {
	if url == "" {
		return nil
	}
	for other, v := range others {
		if v != "" && origin.Same(url, v) {
			return &Error{name, fmt.Sprintf("must not share the origin of %s: each listener is an origin of its own", other)}
		}
	}
	return nil
}

func loadIdentity(e environment) (Identity, error) {
	var i Identity
	var err error
	if i.OIDCIssuer, err = e.url("OIDC_ISSUER"); err != nil {
		return i, err
	}
	i.OIDCClientID, i.OIDCClientSecret, i.SecretKey = e.get("OIDC_CLIENT_ID"), e.get("OIDC_CLIENT_SECRET"), e.get("HOLDCO_SECRET_KEY")
	if i.OIDCIssuer != "" && (i.OIDCClientID == "" || i.OIDCClientSecret == "") {
		return i, &Error{"OIDC_CLIENT_ID", "OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are required with OIDC_ISSUER"}
	}
	if i.SecretKey != "" && len(i.SecretKey) < 32 {
		return i, &Error{"HOLDCO_SECRET_KEY", "must be at least 32 characters"}
	}
	return i, nil
}

func loadPayments(e environment) (Payments, error) {
	p := Payments{
		StripeSecretKey:            e.get("STRIPE_SECRET_KEY"),
		StripeConnectSecretKey:     e.get("STRIPE_CONNECT_SECRET_KEY"),
		StripeWebhookSecret:        e.get("STRIPE_WEBHOOK_SECRET"),
		StripeConnectWebhookSecret: e.get("STRIPE_CONNECT_WEBHOOK_SECRET"),
		StripeAPIBase:              strings.TrimRight(e.get("STRIPE_API_BASE"), "/"),
		StripeFounderPriceID:       e.get("STRIPE_FOUNDER_PRICE_ID"),
		StripeHostingPriceID:       e.get("STRIPE_HOSTING_PRICE_ID"),
	}
	if err := p.validateStripe(); err != nil {
		return p, err
	}
	var err error
	if p.CreditPriceCents, err = e.count("HOLDCO_CREDIT_PRICE_CENTS", false); err != nil {
		return p, err
	}
	if p.FounderMonthlyCredits, err = e.count("HOLDCO_FOUNDER_MONTHLY_CREDITS", true); err != nil {
		return p, err
	}
	return p, nil
}

func (p Payments) validateStripe() error {
	if p.StripeSecretKey == "" {
		for name, v := range map[string]string{
			"STRIPE_CONNECT_SECRET_KEY":     p.StripeConnectSecretKey,
			"STRIPE_WEBHOOK_SECRET":         p.StripeWebhookSecret,
			"STRIPE_CONNECT_WEBHOOK_SECRET": p.StripeConnectWebhookSecret,
			"STRIPE_FOUNDER_PRICE_ID":       p.StripeFounderPriceID,
			"STRIPE_HOSTING_PRICE_ID":       p.StripeHostingPriceID,
		} {
			if v != "" {
				return &Error{"STRIPE_SECRET_KEY", "is required when " + name + " is set"}
			}
		}
		return nil
	}
	for name, v := range map[string]string{"STRIPE_SECRET_KEY": p.StripeSecretKey, "STRIPE_CONNECT_SECRET_KEY": p.StripeConnectSecretKey} {
		if v != "" && !strings.HasPrefix(v, "sk_") && !strings.HasPrefix(v, "rk_") {
			return &Error{name, "must be a Stripe secret or restricted key (sk_… or rk_…)"}
		}
	}
	if p.StripeWebhookSecret == "" {
		return &Error{"STRIPE_WEBHOOK_SECRET", "is required with STRIPE_SECRET_KEY (the signing secret of <public URL>/webhooks/stripe)"}
	}
	if p.StripeAPIBase != "" && !absoluteHTTP(p.StripeAPIBase) {
		return &Error{"STRIPE_API_BASE", fmt.Sprintf("%q is not an absolute http(s) URL", p.StripeAPIBase)}
	}
	return nil
}

// mailDomain is a DNS name of at least two labels (letters, digits,
// inner hyphens), lower-case.
var mailDomain = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

func loadMail(e environment) (Mail, error) {
	m := Mail{Domain: strings.ToLower(e.get("HOLDCO_MAIL_DOMAIN")), Backend: e.get("HOLDCO_MAIL_BACKEND"), SMTPHost: e.get("HOLDCO_MAIL_SMTP_HOST"),
		SMTPUser: e.get("HOLDCO_MAIL_SMTP_USER"), SMTPPassword: e.get("HOLDCO_MAIL_SMTP_PASSWORD"), SMTPTLS: e.get("HOLDCO_MAIL_SMTP_TLS"),
		From: e.get("HOLDCO_MAIL_FROM"), InboundSecret: e.get("HOLDCO_MAIL_INBOUND_SECRET")}
	if len(m.Domain) > 253 || !mailDomain.MatchString(m.Domain) {
		return m, &Error{"HOLDCO_MAIL_DOMAIN", fmt.Sprintf("%q is not a domain name such as mail.example.com", m.Domain)}
	}
	if m.Backend != MailLocal && m.Backend != MailSMTP {
		return m, &Error{"HOLDCO_MAIL_BACKEND", fmt.Sprintf("%q is not one of local, smtp", m.Backend)}
	}
	var err error
	if m.SMTPPort, err = e.port("HOLDCO_MAIL_SMTP_PORT", false); err != nil {
		return m, err
	}
	if m.SMTPTLS != "starttls" && m.SMTPTLS != "tls" && m.SMTPTLS != "none" {
		return m, &Error{"HOLDCO_MAIL_SMTP_TLS", fmt.Sprintf("%q is not one of starttls, tls, none", m.SMTPTLS)}
	}
	if m.Backend == MailSMTP && m.SMTPHost == "" {
		return m, &Error{"HOLDCO_MAIL_SMTP_HOST", "is required with HOLDCO_MAIL_BACKEND=smtp"}
	}
	if m.SMTPPassword != "" && m.SMTPUser == "" {
		return m, &Error{"HOLDCO_MAIL_SMTP_USER", "is required when HOLDCO_MAIL_SMTP_PASSWORD is set"}
	}
	if m.From != "" {
		if a, err := mail.ParseAddress(m.From); err != nil || a.Address != m.From {
			return m, &Error{"HOLDCO_MAIL_FROM", fmt.Sprintf("%q is not a bare email address such as bounces@mail.example.com", m.From)}
		}
	}
	if m.InboundSecret != "" && len(m.InboundSecret) < 32 {
		return m, &Error{"HOLDCO_MAIL_INBOUND_SECRET", "must be at least 32 characters"}
	}
	if m.DailySendLimit, err = e.count("HOLDCO_MAIL_DAILY_SEND_LIMIT", false); err != nil {
		return m, err
	}
	return m, nil
}

func loadLLM(e environment) (LLM, error) {
	l := LLM{Provider: e.get("HOLDCO_LLM_PROVIDER"), Model: e.get("HOLDCO_LLM_MODEL"), APIKey: e.get("HOLDCO_LLM_API_KEY")}
	if l.Provider != LLMScripted && l.Provider != LLMAnthropic && l.Provider != LLMOpenAI {
		return l, &Error{"HOLDCO_LLM_PROVIDER", fmt.Sprintf("%q is not one of scripted, anthropic, openai", l.Provider)}
	}
	var err error
	if l.BaseURL, err = e.url("HOLDCO_LLM_BASE_URL"); err != nil {
		return l, err
	}
	maxTokens, err := e.count("HOLDCO_LLM_MAX_TOKENS", false)
	if err != nil {
		return l, err
	}
	l.MaxTokens = int(min(maxTokens, 1<<30))
	if l.Timeout, err = e.duration("HOLDCO_LLM_TIMEOUT", false); err != nil {
		return l, err
	}
	if l.ScriptedStepDelay, err = e.duration("HOLDCO_LLM_SCRIPTED_STEP_DELAY", true); err != nil {
		return l, err
	}
	if l.RunEvery, err = e.duration("HOLDCO_AGENT_RUN_EVERY", true); err != nil {
		return l, err
	}
	if l.RunEvery > 0 && l.RunEvery < time.Minute {
		return l, &Error{"HOLDCO_AGENT_RUN_EVERY", "must be 0 (no scheduled runs) or at least 1m"}
	}
	if l.Provider == LLMScripted {
		return l, nil
	}
	if l.Model == "" {
		return l, &Error{"HOLDCO_LLM_MODEL", "is required with HOLDCO_LLM_PROVIDER=" + l.Provider}
	}
	if l.APIKey == "" && (l.Provider == LLMAnthropic || l.BaseURL == "") {
		msg := "is required with HOLDCO_LLM_PROVIDER=" + l.Provider
		if l.Provider == LLMOpenAI {
			msg += " unless HOLDCO_LLM_BASE_URL names a local server (Ollama)"
		}
		return l, &Error{"HOLDCO_LLM_API_KEY", msg}
	}
	return l, nil
}

// environment reads variables, applying Settings' defaults; each reader validates
// one kind of value and names the variable in its error.
type environment struct{ getenv func(string) string }

// get is the trimmed value, or the variable's default.
func (e environment) get(name string) string {
	if v := strings.TrimSpace(e.getenv(name)); v != "" {
		return v
	}
	return defaultOf(name)
}

// url is an absolute http(s) URL without a trailing slash, or "".
func (e environment) url(name string) (string, error) {
	v := strings.TrimRight(e.get(name), "/")
	if v != "" && !absoluteHTTP(v) {
		return "", &Error{name, fmt.Sprintf("%q is not an absolute http(s) URL", v)}
	}
	return v, nil
}

// addr is a listener address host:port; port 0 picks a free port (tests).
func (e environment) addr(name string) (string, error) {
	v := e.get(name)
	_, p, err := splitAddr(v)
	if err != nil {
		return "", &Error{name, err.Error()}
	}
	if _, err := parsePort(name, p, true); err != nil {
		return "", err
	}
	return v, nil
}

func (e environment) port(name string, zeroOK bool) (int, error) {
	return parsePort(name, e.get(name), zeroOK)
}

// count is a whole number ≥ 0 (≥ 1 unless zeroOK).
func (e environment) count(name string, zeroOK bool) (int64, error) {
	v := e.get(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || (n == 0 && !zeroOK) {
		return 0, &Error{name, fmt.Sprintf("%q is not a positive whole number", v)}
	}
	return n, nil
}

// duration is a Go duration such as 30s, > 0 (≥ 0 when zeroOK).
func (e environment) duration(name string, zeroOK bool) (time.Duration, error) {
	v := e.get(name)
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || (d == 0 && !zeroOK) {
		return 0, &Error{name, fmt.Sprintf("%q is not a positive duration such as 30s", v)}
	}
	return d, nil
}

func parsePort(name, v string, zeroOK bool) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !zeroOK) {
		return 0, &Error{name, fmt.Sprintf("%q is not a valid port", v)}
	}
	return n, nil
}

func absoluteHTTP(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func splitAddr(addr string) (host, port string, err error) {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return "", "", fmt.Errorf("%q is not host:port", addr)
	}
	return addr[:i], addr[i+1:], nil
}

func localURL(boundAddr string) string {
	host, port := "localhost", boundAddr
	if i := strings.LastIndex(boundAddr, ":"); i >= 0 {
		h := boundAddr[:i]
		port = boundAddr[i+1:]
		if h != "" && h != "0.0.0.0" && h != "[::]" && h != "::" {
			host = h
		}
	}
	return "http://" + host + ":" + port
}

// oauthClients reads HOLDCO_OAUTH_CLIENTS: a JSON array of
// {"client_id", "client_name", "redirect_uris", "application_type"}.
func oauthClients(raw string) ([]OAuthClient, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	var list []OAuthClient
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		return nil, &Error{"HOLDCO_OAUTH_CLIENTS", "not a JSON array of {client_id, client_name, redirect_uris, application_type}: " + err.Error()}
	}
	seen := map[string]bool{}
	for _, c := range list {
		if c.ID == "" || c.Name == "" || len(c.RedirectURIs) == 0 {
			return nil, &Error{"HOLDCO_OAUTH_CLIENTS", "every client needs client_id, client_name and redirect_uris"}
		}
		if seen[c.ID] {
			return nil, &Error{"HOLDCO_OAUTH_CLIENTS", fmt.Sprintf("client_id %q appears twice", c.ID)}
		}
		seen[c.ID] = true
	}
	return list, nil
}
