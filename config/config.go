// Package config reads holdco's configuration from the environment, in one
// place. Every setting, its variable and its default is listed in the README.
package config

import (
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Config is the whole runtime configuration.
type Config struct {
	// DataDir holds the embedded default's files (SQLite databases).
	DataDir string
	// DatabaseURL is a postgres:// URL, or a SQLite file path. Empty means
	// DataDir/holdco.db.
	DatabaseURL string

	// TemporalAddress points at an external Temporal cluster; empty starts
	// the embedded server.
	TemporalAddress   string
	TemporalNamespace string
	// TemporalHost is the IP the embedded server and its UI bind to.
	TemporalHost   string
	TemporalPort   int
	TemporalUIPort int // 0 disables the embedded UI

	// APIAddr is the REST listener (host:port).
	APIAddr string
	// PublicURL is how browsers and the CLI reach the REST listener; empty
	// derives http://localhost:<port> from APIAddr.
	PublicURL string
	// SitesAddr is the listener of tenant sites (host:port), a separate
	// origin from everything of holdco's.
	SitesAddr string
	// SitesPublicURL is how browsers reach SitesAddr; empty derives
	// http://localhost:<port> from it.
	SitesPublicURL string
	// FrontendURL is the web app (sign-in lands there); empty means
	// holdco's own pages at PublicURL.
	FrontendURL string
	// OIDCIssuer selects an external identity provider; empty runs the
	// embedded development provider at PublicURL/dev-idp.
	OIDCIssuer       string
	OIDCClientID     string
	OIDCClientSecret string
	// SecretKey signs session tokens and login state; empty keeps a random
	// key in the database, shared by every replica.
	SecretKey string

	LogLevel  slog.Level
	LogFormat string // text or json

	// Payments (Stripe); all empty: payments are not configured.
	StripeSecretKey        string
	StripeConnectSecretKey string
	StripeWebhookSecret    string
	StripeAPIBase          string
	StripeFounderPriceID   string
	StripeHostingPriceID   string
	CreditPriceCents       int64
	FounderMonthlyCredits  int64

	// ShutdownTimeout bounds how long in-flight requests get on Ctrl-C.
	ShutdownTimeout time.Duration
}

// Error names the setting that is wrong.
type Error struct {
	Var string
	Msg string
}

func (e *Error) Error() string { return e.Var + ": " + e.Msg }

// Setting documents one environment variable (rendered in the README).
type Setting struct {
	Var, Default, Meaning string
}

// Settings is the table of every variable Load reads.
var Settings = []Setting{
	{"HOLDCO_DATA_DIR", "./data", "directory for the embedded default's files (SQLite databases of holdco and Temporal)"},
	{"DATABASE_URL", "<data dir>/holdco.db", "`postgres://user:pass@host:5432/db` switches the store to Postgres; otherwise a SQLite file path"},
	{"TEMPORAL_ADDRESS", "(empty)", "host:port of a Temporal cluster; when empty the embedded Temporal server is started"},
	{"TEMPORAL_NAMESPACE", "default", "Temporal namespace holdco's workflows run in"},
	{"HOLDCO_API_ADDR", ":8080", "REST API listener"},
	{"HOLDCO_PUBLIC_URL", "http://localhost:<api port>", "address browsers and the CLI use to reach the REST API (sign-in callbacks are built from it)"},
	{"HOLDCO_SITES_ADDR", ":8083", "listener of company sites (served at <sites URL>/<handle>/); a separate origin from the API so a tenant's script cannot reach holdco's sessions"},
	{"HOLDCO_SITES_PUBLIC_URL", "http://localhost:<sites port>", "address browsers use to reach the sites listener; must be an origin of its own (not the public or frontend URL's)"},
	{"HOLDCO_FRONTEND_URL", "<public URL>", "web app address: sign-in returns there, logout lands on its /login, account links open its /dashboard?conglomerate_id=<id>; by default holdco's own minimal pages"},
	{"OIDC_ISSUER", "(empty)", "issuer URL of the identity provider users sign in with; when empty the embedded development provider runs at <public URL>/dev-idp"},
	{"OIDC_CLIENT_ID", "(empty)", "client id registered at OIDC_ISSUER (redirect URIs <public URL>/auth/callback and <public URL>/auth/cli/callback)"},
	{"OIDC_CLIENT_SECRET", "(empty)", "client secret registered at OIDC_ISSUER"},
	{"HOLDCO_SECRET_KEY", "(empty)", "at least 32 characters; signs web session tokens and login state. When empty a random key is created in the database and shared by all replicas"},
	{"HOLDCO_TEMPORAL_HOST", "127.0.0.1", "IP the embedded Temporal server and UI bind to"},
	{"HOLDCO_TEMPORAL_PORT", "7233", "embedded Temporal frontend (gRPC) port"},
	{"HOLDCO_TEMPORAL_UI_PORT", "8233", "embedded Temporal Web UI port; 0 disables it"},
	{"HOLDCO_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"HOLDCO_LOG_FORMAT", "text", "text or json"},
	{"STRIPE_SECRET_KEY", "(empty)", "Stripe secret key of the platform account (credits and plans); when empty payments are off and payment links are null with a reason"},
	{"STRIPE_CONNECT_SECRET_KEY", "(empty)", "Stripe secret key of the Connect platform account (payout onboarding); empty uses STRIPE_SECRET_KEY"},
	{"STRIPE_WEBHOOK_SECRET", "(empty)", "signing secret (whsec_…) of the webhook endpoint <public URL>/webhooks/stripe; required with STRIPE_SECRET_KEY"},
	{"STRIPE_API_BASE", "(empty)", "Stripe API address override (for example a local stripe-mock); empty uses Stripe's"},
	{"STRIPE_FOUNDER_PRICE_ID", "(empty)", "recurring price (price_…) of the Founder plan; empty: the plan is not for sale (upgrade links null)"},
	{"STRIPE_HOSTING_PRICE_ID", "(empty)", "recurring price of the Hosting plan (sites online, no agents), when sold"},
	{"HOLDCO_CREDIT_PRICE_CENTS", "10", "price of one credit in US cents"},
	{"HOLDCO_FOUNDER_MONTHLY_CREDITS", "100", "credits granted with each paid Founder invoice"},
	{"HOLDCO_SHUTDOWN_TIMEOUT", "15s", "how long in-flight requests may run after Ctrl-C/SIGTERM"},
}

// Load reads the configuration through getenv (os.Getenv in production).
func Load(getenv func(string) string) (Config, error) {
	get := func(name string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		for _, s := range Settings {
			if s.Var == name {
				return s.Default
			}
		}
		return ""
	}
	c := Config{
		DataDir:           get("HOLDCO_DATA_DIR"),
		DatabaseURL:       strings.TrimSpace(getenv("DATABASE_URL")),
		TemporalAddress:   strings.TrimSpace(getenv("TEMPORAL_ADDRESS")),
		TemporalNamespace: get("TEMPORAL_NAMESPACE"),
		TemporalHost:      get("HOLDCO_TEMPORAL_HOST"),
		APIAddr:           get("HOLDCO_API_ADDR"),
		SitesAddr:         get("HOLDCO_SITES_ADDR"),
		LogFormat:         get("HOLDCO_LOG_FORMAT"),
	}
	c.PublicURL = strings.TrimRight(strings.TrimSpace(getenv("HOLDCO_PUBLIC_URL")), "/")
	c.FrontendURL = strings.TrimRight(strings.TrimSpace(getenv("HOLDCO_FRONTEND_URL")), "/")
	c.SitesPublicURL = strings.TrimRight(strings.TrimSpace(getenv("HOLDCO_SITES_PUBLIC_URL")), "/")
	c.OIDCIssuer = strings.TrimRight(strings.TrimSpace(getenv("OIDC_ISSUER")), "/")
	c.OIDCClientID = strings.TrimSpace(getenv("OIDC_CLIENT_ID"))
	c.OIDCClientSecret = strings.TrimSpace(getenv("OIDC_CLIENT_SECRET"))
	c.SecretKey = strings.TrimSpace(getenv("HOLDCO_SECRET_KEY"))
	for name, v := range map[string]string{"HOLDCO_PUBLIC_URL": c.PublicURL, "HOLDCO_FRONTEND_URL": c.FrontendURL, "OIDC_ISSUER": c.OIDCIssuer, "HOLDCO_SITES_PUBLIC_URL": c.SitesPublicURL} {
		if v == "" {
			continue
		}
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, &Error{name, fmt.Sprintf("%q is not an absolute http(s) URL", v)}
		}
	}
	if c.OIDCIssuer != "" && (c.OIDCClientID == "" || c.OIDCClientSecret == "") {
		return c, &Error{"OIDC_CLIENT_ID", "OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are required with OIDC_ISSUER"}
	}
	if c.SecretKey != "" && len(c.SecretKey) < 32 {
		return c, &Error{"HOLDCO_SECRET_KEY", "must be at least 32 characters"}
	}
	if c.DatabaseURL == "" {
		c.DatabaseURL = filepath.Join(c.DataDir, "holdco.db")
	}
	if err := validateDatabaseURL(c.DatabaseURL); err != nil {
		return c, err
	}
	var err error
	if c.TemporalPort, err = port("HOLDCO_TEMPORAL_PORT", get("HOLDCO_TEMPORAL_PORT"), false); err != nil {
		return c, err
	}
	if c.TemporalUIPort, err = port("HOLDCO_TEMPORAL_UI_PORT", get("HOLDCO_TEMPORAL_UI_PORT"), true); err != nil {
		return c, err
	}
	if _, p, err := splitAddr(c.APIAddr); err != nil {
		return c, &Error{"HOLDCO_API_ADDR", err.Error()}
	} else if _, err := port("HOLDCO_API_ADDR", p, true); err != nil { // 0 picks a free port (tests)
		return c, err
	}
	if _, p, err := splitAddr(c.SitesAddr); err != nil {
		return c, &Error{"HOLDCO_SITES_ADDR", err.Error()}
	} else if _, err := port("HOLDCO_SITES_ADDR", p, true); err != nil {
		return c, err
	}
	if c.SitesPublicURL != "" {
		for name, v := range map[string]string{"HOLDCO_PUBLIC_URL": c.PublicURL, "HOLDCO_FRONTEND_URL": c.FrontendURL} {
			if v != "" && SameOrigin(c.SitesPublicURL, v) {
				return c, &Error{"HOLDCO_SITES_PUBLIC_URL", fmt.Sprintf("must not share the origin of %s: tenant sites on holdco's origin could take over accounts", name)}
			}
		}
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("HOLDCO_LOG_LEVEL"))); err != nil {
		return c, &Error{"HOLDCO_LOG_LEVEL", fmt.Sprintf("%q is not one of debug, info, warn, error", get("HOLDCO_LOG_LEVEL"))}
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return c, &Error{"HOLDCO_LOG_FORMAT", fmt.Sprintf("%q is not one of text, json", c.LogFormat)}
	}
	c.StripeSecretKey = strings.TrimSpace(getenv("STRIPE_SECRET_KEY"))
	c.StripeConnectSecretKey = strings.TrimSpace(getenv("STRIPE_CONNECT_SECRET_KEY"))
	c.StripeWebhookSecret = strings.TrimSpace(getenv("STRIPE_WEBHOOK_SECRET"))
	c.StripeAPIBase = strings.TrimRight(strings.TrimSpace(getenv("STRIPE_API_BASE")), "/")
	c.StripeFounderPriceID = strings.TrimSpace(getenv("STRIPE_FOUNDER_PRICE_ID"))
	c.StripeHostingPriceID = strings.TrimSpace(getenv("STRIPE_HOSTING_PRICE_ID"))
	if err := c.validateStripe(); err != nil {
		return c, err
	}
	if c.CreditPriceCents, err = positive("HOLDCO_CREDIT_PRICE_CENTS", get("HOLDCO_CREDIT_PRICE_CENTS"), false); err != nil {
		return c, err
	}
	if c.FounderMonthlyCredits, err = positive("HOLDCO_FOUNDER_MONTHLY_CREDITS", get("HOLDCO_FOUNDER_MONTHLY_CREDITS"), true); err != nil {
		return c, err
	}
	if c.ShutdownTimeout, err = time.ParseDuration(get("HOLDCO_SHUTDOWN_TIMEOUT")); err != nil || c.ShutdownTimeout <= 0 {
		return c, &Error{"HOLDCO_SHUTDOWN_TIMEOUT", fmt.Sprintf("%q is not a positive duration such as 15s", get("HOLDCO_SHUTDOWN_TIMEOUT"))}
	}
	if c.TemporalAddress != "" {
		if _, _, err := splitAddr(c.TemporalAddress); err != nil {
			return c, &Error{"TEMPORAL_ADDRESS", err.Error()}
		}
	}
	return c, nil
}

// PaymentsEnabled reports whether Stripe is configured.
func (c Config) PaymentsEnabled() bool { return c.StripeSecretKey != "" }

func (c Config) validateStripe() error {
	if c.StripeSecretKey == "" {
		for name, v := range map[string]string{"STRIPE_CONNECT_SECRET_KEY": c.StripeConnectSecretKey, "STRIPE_WEBHOOK_SECRET": c.StripeWebhookSecret,
			"STRIPE_FOUNDER_PRICE_ID": c.StripeFounderPriceID, "STRIPE_HOSTING_PRICE_ID": c.StripeHostingPriceID} {
			if v != "" {
				return &Error{"STRIPE_SECRET_KEY", "is required when " + name + " is set"}
			}
		}
		return nil
	}
	for name, v := range map[string]string{"STRIPE_SECRET_KEY": c.StripeSecretKey, "STRIPE_CONNECT_SECRET_KEY": c.StripeConnectSecretKey} {
		if v != "" && !strings.HasPrefix(v, "sk_") && !strings.HasPrefix(v, "rk_") {
			return &Error{name, "must be a Stripe secret or restricted key (sk_… or rk_…)"}
		}
	}
	if c.StripeWebhookSecret == "" {
		return &Error{"STRIPE_WEBHOOK_SECRET", "is required with STRIPE_SECRET_KEY (the signing secret of <public URL>/webhooks/stripe)"}
	}
	if c.StripeAPIBase != "" {
		if u, err := url.Parse(c.StripeAPIBase); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &Error{"STRIPE_API_BASE", fmt.Sprintf("%q is not an absolute http(s) URL", c.StripeAPIBase)}
		}
	}
	return nil
}

func positive(name, v string, zeroOK bool) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || (n == 0 && !zeroOK) {
		return 0, &Error{name, fmt.Sprintf("%q is not a positive whole number", v)}
	}
	return n, nil
}

// EmbeddedTemporal reports whether holdco starts its own Temporal server.
func (c Config) EmbeddedTemporal() bool { return c.TemporalAddress == "" }

// IsPostgres reports whether DatabaseURL selects Postgres.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

func validateDatabaseURL(dsn string) error {
	if !IsPostgres(dsn) {
		if strings.Contains(dsn, "://") {
			return &Error{"DATABASE_URL", fmt.Sprintf("unsupported scheme in %q: use postgres://… or a SQLite file path", redact(dsn))}
		}
		return nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return &Error{"DATABASE_URL", "not a valid postgres URL (check the quoting of special characters in the password)"}
	}
	if u.Host == "" {
		return &Error{"DATABASE_URL", fmt.Sprintf("postgres URL %q has no host", redact(dsn))}
	}
	if u.Port() != "" {
		if _, err := strconv.Atoi(u.Port()); err != nil {
			return &Error{"DATABASE_URL", fmt.Sprintf("postgres URL %q has an invalid port", redact(dsn))}
		}
	}
	return nil
}

// redact hides a password in a URL before it is printed: the user-info
// password and a password (or sslpassword) query parameter, which pgx
// accepts too.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "<unparseable>"
	}
	q := u.Query()
	changed := false
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Redact is exported for callers that log the database URL.
func Redact(dsn string) string {
	if !strings.Contains(dsn, "://") {
		return dsn
	}
	return redact(dsn)
}

func port(name, v string, zeroOK bool) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 65535 || (n == 0 && !zeroOK) {
		return 0, &Error{name, fmt.Sprintf("%q is not a valid port", v)}
	}
	return n, nil
}

func splitAddr(addr string) (host, port string, err error) {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return "", "", fmt.Errorf("%q is not host:port", addr)
	}
	return addr[:i], addr[i+1:], nil
}

// SameOrigin reports whether two absolute URLs have the same scheme and
// host (with port); a browser lets pages of one origin read each other.
func SameOrigin(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errA != nil || errB != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(hostWithPort(ua), hostWithPort(ub))
}

func hostWithPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Hostname() + ":443"
	case "http":
		return u.Hostname() + ":80"
	}
	return u.Host
}

// ResolveSitesURL returns SitesPublicURL, or http://localhost:<port> of
// the address the sites listener is bound to.
func (c Config) ResolveSitesURL(boundAddr string) string {
	if c.SitesPublicURL != "" {
		return c.SitesPublicURL
	}
	return localURL(boundAddr)
}

// ResolvePublicURL returns PublicURL, or http://localhost:<port> of the
// address the REST listener is bound to.
func (c Config) ResolvePublicURL(boundAddr string) string {
	if c.PublicURL != "" {
		return c.PublicURL
	}
	return localURL(boundAddr)
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
