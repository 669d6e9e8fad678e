package config

import (
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	c, err := Load(env(nil))
	require.NoError(t, err)
	assert.Equal(t, "./data", c.DataDir)
	assert.Equal(t, filepath.Join("data", "holdco.db"), c.Database.URL)
	assert.False(t, c.Database.IsPostgres())
	assert.True(t, c.Temporal.Embedded())
	assert.Equal(t, "default", c.Temporal.Namespace)
	assert.Equal(t, ":8080", c.API.Addr)
	assert.Equal(t, "http://localhost:8080", c.API.ResolvePublicURL(":8080"))
	assert.Equal(t, ":8081", c.MCP.Addr)
	assert.Equal(t, ":8082", c.OAuth.Addr)
	assert.Equal(t, ":8083", c.Sites.Addr)
	assert.Equal(t, "http://localhost:8083", c.Sites.ResolvePublicURL("[::]:8083"))
	assert.Equal(t, 7233, c.Temporal.Port)
	assert.Equal(t, 8233, c.Temporal.UIPort)
	assert.Equal(t, 2*time.Minute, c.Temporal.StartTimeout)
	assert.Equal(t, slog.LevelInfo, c.Log.Level)
	assert.Equal(t, "text", c.Log.Format)
	assert.Equal(t, 15*time.Second, c.ShutdownTimeout)
	assert.Equal(t, Identity{}, c.Identity)
	assert.False(t, c.Payments.Enabled())
	assert.Equal(t, int64(10), c.Payments.CreditPriceCents)
	assert.Equal(t, int64(100), c.Payments.FounderMonthlyCredits)
	assert.Equal(t, Blob{Backend: BlobLocal, Dir: filepath.Join("data", "blobs"), URLTTL: 5 * time.Minute, MaxFileBytes: 25 << 20, QuotaBytes: 1 << 30}, c.Blob)
	assert.Equal(t, Mail{Domain: "mail.localhost", Backend: MailLocal, SMTPPort: 587, SMTPTLS: "starttls", DailySendLimit: 50}, c.Mail)
	assert.Equal(t, LLM{Provider: LLMScripted, MaxTokens: 4096, Timeout: 120 * time.Second, ScriptedStepDelay: 200 * time.Millisecond, RunEvery: 24 * time.Hour}, c.LLM)
}

func TestBlobS3Settings(t *testing.T) {
	c, err := Load(env(map[string]string{
		"HOLDCO_BLOB_BACKEND": "S3", "HOLDCO_BLOB_S3_BUCKET": "files", "HOLDCO_BLOB_S3_REGION": "us-east-1",
		"HOLDCO_BLOB_S3_ENDPOINT": "http://minio:9000/", "HOLDCO_BLOB_S3_PATH_STYLE": "true",
		"HOLDCO_BLOB_S3_ACCESS_KEY_ID": "AK", "HOLDCO_BLOB_S3_SECRET_ACCESS_KEY": "SK", "HOLDCO_BLOB_URL_TTL": "90s",
	}))
	require.NoError(t, err)
	assert.Equal(t, Blob{Backend: BlobS3, Dir: filepath.Join("data", "blobs"), S3Bucket: "files", S3Region: "us-east-1", S3Endpoint: "http://minio:9000",
		S3PathStyle: true, S3AccessKeyID: "AK", S3SecretAccessKey: "SK", URLTTL: 90 * time.Second, MaxFileBytes: 25 << 20, QuotaBytes: 1 << 30}, c.Blob)
}

func TestLLMProviders(t *testing.T) {
	c, err := Load(env(map[string]string{"HOLDCO_LLM_PROVIDER": "anthropic", "HOLDCO_LLM_MODEL": "claude-x", "HOLDCO_LLM_API_KEY": "sk-ant-1",
		"HOLDCO_LLM_MAX_TOKENS": "8000", "HOLDCO_LLM_TIMEOUT": "45s"}))
	require.NoError(t, err)
	assert.Equal(t, LLM{Provider: LLMAnthropic, Model: "claude-x", APIKey: "sk-ant-1", MaxTokens: 8000, Timeout: 45 * time.Second, ScriptedStepDelay: 200 * time.Millisecond, RunEvery: 24 * time.Hour}, c.LLM)

	// Ollama: a local OpenAI-compatible server needs no key.
	c, err = Load(env(map[string]string{"HOLDCO_LLM_PROVIDER": "openai", "HOLDCO_LLM_MODEL": "llama3.2", "HOLDCO_LLM_BASE_URL": "http://localhost:11434/v1/"}))
	require.NoError(t, err)
	assert.Equal(t, "http://localhost:11434/v1", c.LLM.BaseURL)
	assert.Empty(t, c.LLM.APIKey)

	c, err = Load(env(map[string]string{"HOLDCO_LLM_SCRIPTED_STEP_DELAY": "0s"}))
	require.NoError(t, err)
	assert.Zero(t, c.LLM.ScriptedStepDelay)
}

func TestOverrides(t *testing.T) {
	c, err := Load(env(map[string]string{
		"DATABASE_URL":            "postgres://u:p@db:5432/holdco",
		"TEMPORAL_ADDRESS":        "temporal:7233",
		"TEMPORAL_NAMESPACE":      "prod",
		"HOLDCO_TEMPORAL_UI_PORT": "0",
		"HOLDCO_LOG_LEVEL":        "debug",
		"HOLDCO_LOG_FORMAT":       "json",
	}))
	require.NoError(t, err)
	assert.True(t, c.Database.IsPostgres())
	assert.False(t, c.Temporal.Embedded())
	assert.Equal(t, "prod", c.Temporal.Namespace)
	assert.Equal(t, 0, c.Temporal.UIPort)
	assert.Equal(t, slog.LevelDebug, c.Log.Level)
	assert.Equal(t, "postgres://u:xxxxx@db:5432/holdco", Redact(c.Database.URL))
}

func TestRedactHidesAPasswordQueryParameter(t *testing.T) {
	got := Redact("postgres://u@db:5432/holdco?sslmode=require&password=s3cret&sslpassword=k3y")
	assert.NotContains(t, got, "s3cret")
	assert.NotContains(t, got, "k3y")
	assert.Contains(t, got, "sslmode=require")
}

func TestSectionsReadTheirVariables(t *testing.T) {
	c, err := Load(env(map[string]string{
		"HOLDCO_API_ADDR":           "127.0.0.1:9080",
		"HOLDCO_PUBLIC_URL":         "https://api.example/",
		"HOLDCO_FRONTEND_URL":       "https://app.example",
		"HOLDCO_SITES_ADDR":         "127.0.0.1:9083",
		"HOLDCO_SITES_PUBLIC_URL":   "https://sites.example",
		"HOLDCO_MCP_ADDR":           "127.0.0.1:9081",
		"HOLDCO_OAUTH_ADDR":         "127.0.0.1:0",
		"OIDC_ISSUER":               "https://idp.example/",
		"OIDC_CLIENT_ID":            "holdco",
		"OIDC_CLIENT_SECRET":        "s",
		"HOLDCO_SECRET_KEY":         strings.Repeat("k", 32),
		"STRIPE_SECRET_KEY":         "sk_test_1",
		"STRIPE_WEBHOOK_SECRET":     "whsec_1",
		"STRIPE_API_BASE":           "http://localhost:12111/",
		"HOLDCO_CREDIT_PRICE_CENTS": "25",
	}))
	require.NoError(t, err)
	assert.Equal(t, API{Addr: "127.0.0.1:9080", PublicURL: "https://api.example", FrontendURL: "https://app.example"}, c.API)
	assert.Equal(t, "https://api.example", c.API.ResolvePublicURL("127.0.0.1:9080"))
	assert.Equal(t, Sites{Addr: "127.0.0.1:9083", PublicURL: "https://sites.example"}, c.Sites)
	assert.Equal(t, MCP{Addr: "127.0.0.1:9081"}, c.MCP)
	assert.Equal(t, OAuth{Addr: "127.0.0.1:0"}, c.OAuth)
	assert.Equal(t, Identity{OIDCIssuer: "https://idp.example", OIDCClientID: "holdco", OIDCClientSecret: "s", SecretKey: strings.Repeat("k", 32)}, c.Identity)
	assert.True(t, c.Payments.Enabled())
	assert.Equal(t, "http://localhost:12111", c.Payments.StripeAPIBase)
	assert.Equal(t, int64(25), c.Payments.CreditPriceCents)
}

// TestErrorsNameTheVariable: every section's validation stops the process
// with one line that starts with the variable's name.
func TestErrorsNameTheVariable(t *testing.T) {
	cases := []struct {
		section, variable string
		env               map[string]string
	}{
		{"process", "HOLDCO_LOG_LEVEL", map[string]string{"HOLDCO_LOG_LEVEL": "loud"}},
		{"process", "HOLDCO_LOG_FORMAT", map[string]string{"HOLDCO_LOG_FORMAT": "xml"}},
		{"process", "HOLDCO_SHUTDOWN_TIMEOUT", map[string]string{"HOLDCO_SHUTDOWN_TIMEOUT": "-1s"}},
		{"HTTP", "HOLDCO_HTTP_READ_TIMEOUT", map[string]string{"HOLDCO_HTTP_READ_TIMEOUT": "0s"}},
		{"HTTP", "HOLDCO_HTTP_WRITE_TIMEOUT", map[string]string{"HOLDCO_HTTP_WRITE_TIMEOUT": "soon"}},
		{"HTTP", "HOLDCO_HTTP_IDLE_TIMEOUT", map[string]string{"HOLDCO_HTTP_IDLE_TIMEOUT": "-1m"}},
		{"Database", "DATABASE_URL", map[string]string{"DATABASE_URL": "postgres://u:p@[::1/db"}},
		{"Temporal", "TEMPORAL_ADDRESS", map[string]string{"TEMPORAL_ADDRESS": "temporal"}},
		{"Temporal", "HOLDCO_TEMPORAL_PORT", map[string]string{"HOLDCO_TEMPORAL_PORT": "70000"}},
		{"Temporal", "HOLDCO_TEMPORAL_UI_PORT", map[string]string{"HOLDCO_TEMPORAL_UI_PORT": "ui"}},
		{"Temporal", "HOLDCO_TEMPORAL_START_TIMEOUT", map[string]string{"HOLDCO_TEMPORAL_START_TIMEOUT": "15"}},
		{"API", "HOLDCO_API_ADDR", map[string]string{"HOLDCO_API_ADDR": "8080"}},
		{"API", "HOLDCO_PUBLIC_URL", map[string]string{"HOLDCO_PUBLIC_URL": "api.example"}},
		{"API", "HOLDCO_FRONTEND_URL", map[string]string{"HOLDCO_FRONTEND_URL": "ftp://app.example"}},
		{"Sites", "HOLDCO_SITES_ADDR", map[string]string{"HOLDCO_SITES_ADDR": "127.0.0.1:99999"}},
		// Tenant sites never share holdco's origin, even when configured so.
		{"Sites", "HOLDCO_SITES_PUBLIC_URL", map[string]string{"HOLDCO_PUBLIC_URL": "https://api.example", "HOLDCO_SITES_PUBLIC_URL": "https://API.example:443/sites"}},
		{"MCP", "HOLDCO_MCP_ADDR", map[string]string{"HOLDCO_MCP_ADDR": "localhost"}},
		{"OAuth", "HOLDCO_OAUTH_ADDR", map[string]string{"HOLDCO_OAUTH_ADDR": ":http"}},
		{"Identity", "OIDC_ISSUER", map[string]string{"OIDC_ISSUER": "idp.example"}},
		{"Identity", "OIDC_CLIENT_ID", map[string]string{"OIDC_ISSUER": "https://idp.example", "OIDC_CLIENT_SECRET": "s"}},
		{"Identity", "HOLDCO_SECRET_KEY", map[string]string{"HOLDCO_SECRET_KEY": "short"}},
		// Payments: a key needs its webhook secret; a publishable key is not
		// a secret key; a price without a key is a mistake.
		{"Payments", "STRIPE_WEBHOOK_SECRET", map[string]string{"STRIPE_SECRET_KEY": "sk_test_1"}},
		{"Payments", "STRIPE_SECRET_KEY", map[string]string{"STRIPE_SECRET_KEY": "pk_test_1", "STRIPE_WEBHOOK_SECRET": "whsec_1"}},
		{"Payments", "STRIPE_SECRET_KEY", map[string]string{"STRIPE_FOUNDER_PRICE_ID": "price_1"}},
		{"Payments", "STRIPE_CONNECT_SECRET_KEY", map[string]string{"STRIPE_SECRET_KEY": "sk_test_1", "STRIPE_WEBHOOK_SECRET": "whsec_1", "STRIPE_CONNECT_SECRET_KEY": "acct_1"}},
		{"Payments", "STRIPE_API_BASE", map[string]string{"STRIPE_SECRET_KEY": "sk_test_1", "STRIPE_WEBHOOK_SECRET": "whsec_1", "STRIPE_API_BASE": "localhost:12111"}},
		{"Payments", "HOLDCO_CREDIT_PRICE_CENTS", map[string]string{"HOLDCO_CREDIT_PRICE_CENTS": "0"}},
		{"Payments", "HOLDCO_FOUNDER_MONTHLY_CREDITS", map[string]string{"HOLDCO_FOUNDER_MONTHLY_CREDITS": "-5"}},
		{"Blob", "HOLDCO_BLOB_BACKEND", map[string]string{"HOLDCO_BLOB_BACKEND": "gcs"}},
		{"Blob", "HOLDCO_BLOB_S3_BUCKET", map[string]string{"HOLDCO_BLOB_BACKEND": "s3", "HOLDCO_BLOB_S3_REGION": "eu-west-1"}},
		{"Blob", "HOLDCO_BLOB_S3_REGION", map[string]string{"HOLDCO_BLOB_BACKEND": "s3", "HOLDCO_BLOB_S3_BUCKET": "files"}},
		{"Blob", "HOLDCO_BLOB_S3_ACCESS_KEY_ID", map[string]string{"HOLDCO_BLOB_BACKEND": "s3", "HOLDCO_BLOB_S3_BUCKET": "files", "HOLDCO_BLOB_S3_REGION": "eu-west-1", "HOLDCO_BLOB_S3_SECRET_ACCESS_KEY": "s"}},
		{"Blob", "HOLDCO_BLOB_S3_ENDPOINT", map[string]string{"HOLDCO_BLOB_S3_ENDPOINT": "minio:9000"}},
		{"Blob", "HOLDCO_BLOB_S3_PATH_STYLE", map[string]string{"HOLDCO_BLOB_S3_PATH_STYLE": "maybe"}},
		{"Blob", "HOLDCO_BLOB_URL_TTL", map[string]string{"HOLDCO_BLOB_URL_TTL": "30d"}},
		{"Blob", "HOLDCO_BLOB_URL_TTL", map[string]string{"HOLDCO_BLOB_URL_TTL": "200h"}},
		{"Blob", "HOLDCO_BLOB_MAX_FILE_BYTES", map[string]string{"HOLDCO_BLOB_MAX_FILE_BYTES": "0"}},
		{"Blob", "HOLDCO_BLOB_MAX_FILE_BYTES", map[string]string{"HOLDCO_BLOB_MAX_FILE_BYTES": "2000", "HOLDCO_BLOB_QUOTA_BYTES": "1000"}},
		{"Blob", "HOLDCO_BLOB_QUOTA_BYTES", map[string]string{"HOLDCO_BLOB_QUOTA_BYTES": "lots"}},
		{"Repos", "HOLDCO_REPO_BACKEND", map[string]string{"HOLDCO_REPO_BACKEND": "gitlab"}},
		{"Repos", "HOLDCO_GITHUB_OWNER", map[string]string{"HOLDCO_REPO_BACKEND": "github", "HOLDCO_GITHUB_TOKEN": "t"}},
		{"Repos", "HOLDCO_GITHUB_TOKEN", map[string]string{"HOLDCO_REPO_BACKEND": "github", "HOLDCO_GITHUB_OWNER": "acme"}},
		{"Repos", "HOLDCO_GITHUB_API_URL", map[string]string{"HOLDCO_GITHUB_API_URL": "ghe.example/api/v3"}},
		{"Repos", "HOLDCO_GITHUB_REPO_PREFIX", map[string]string{"HOLDCO_GITHUB_REPO_PREFIX": "a/b"}},
		{"Worker", "HOLDCO_WORKER_HEALTH_ADDR", map[string]string{"HOLDCO_WORKER_HEALTH_ADDR": "localhost"}},
		{"process", "HOLDCO_SHARED_DATA_DIR", map[string]string{"HOLDCO_SHARED_DATA_DIR": "yes please"}},
		{"Mail", "HOLDCO_MAIL_DOMAIN", map[string]string{"HOLDCO_MAIL_DOMAIN": "localhost"}},
		{"Mail", "HOLDCO_MAIL_DOMAIN", map[string]string{"HOLDCO_MAIL_DOMAIN": "mail.example.com\r\nBcc: x"}},
		{"Mail", "HOLDCO_MAIL_BACKEND", map[string]string{"HOLDCO_MAIL_BACKEND": "sendmail"}},
		{"Mail", "HOLDCO_MAIL_SMTP_HOST", map[string]string{"HOLDCO_MAIL_BACKEND": "smtp"}},
		{"Mail", "HOLDCO_MAIL_SMTP_PORT", map[string]string{"HOLDCO_MAIL_SMTP_PORT": "0"}},
		{"Mail", "HOLDCO_MAIL_SMTP_TLS", map[string]string{"HOLDCO_MAIL_SMTP_TLS": "ssl"}},
		{"Mail", "HOLDCO_MAIL_SMTP_USER", map[string]string{"HOLDCO_MAIL_SMTP_PASSWORD": "p"}},
		{"Mail", "HOLDCO_MAIL_FROM", map[string]string{"HOLDCO_MAIL_FROM": "Bounces <b@mail.example.com>"}},
		{"Mail", "HOLDCO_MAIL_INBOUND_SECRET", map[string]string{"HOLDCO_MAIL_INBOUND_SECRET": "short"}},
		{"Mail", "HOLDCO_MAIL_DAILY_SEND_LIMIT", map[string]string{"HOLDCO_MAIL_DAILY_SEND_LIMIT": "0"}},
		{"LLM", "HOLDCO_LLM_PROVIDER", map[string]string{"HOLDCO_LLM_PROVIDER": "gemini"}},
		{"LLM", "HOLDCO_LLM_MODEL", map[string]string{"HOLDCO_LLM_PROVIDER": "anthropic", "HOLDCO_LLM_API_KEY": "k"}},
		{"LLM", "HOLDCO_LLM_API_KEY", map[string]string{"HOLDCO_LLM_PROVIDER": "anthropic", "HOLDCO_LLM_MODEL": "m"}},
		{"LLM", "HOLDCO_LLM_API_KEY", map[string]string{"HOLDCO_LLM_PROVIDER": "anthropic", "HOLDCO_LLM_MODEL": "m", "HOLDCO_LLM_BASE_URL": "http://gw.example"}},
		{"LLM", "HOLDCO_LLM_API_KEY", map[string]string{"HOLDCO_LLM_PROVIDER": "openai", "HOLDCO_LLM_MODEL": "m"}},
		{"LLM", "HOLDCO_LLM_BASE_URL", map[string]string{"HOLDCO_LLM_BASE_URL": "localhost:11434"}},
		{"LLM", "HOLDCO_LLM_MAX_TOKENS", map[string]string{"HOLDCO_LLM_MAX_TOKENS": "0"}},
		{"LLM", "HOLDCO_LLM_TIMEOUT", map[string]string{"HOLDCO_LLM_TIMEOUT": "0s"}},
		{"LLM", "HOLDCO_LLM_SCRIPTED_STEP_DELAY", map[string]string{"HOLDCO_LLM_SCRIPTED_STEP_DELAY": "-1s"}},
		{"Founding", "HOLDCO_BUSINESS_LIMIT", map[string]string{"HOLDCO_BUSINESS_LIMIT": "0"}},
		{"Founding", "HOLDCO_FOUNDING_INTERVIEWS_PER_DAY", map[string]string{"HOLDCO_FOUNDING_INTERVIEWS_PER_DAY": "many"}},
		{"Founding", "HOLDCO_PLATFORM_COMPANY_CAP", map[string]string{"HOLDCO_PLATFORM_COMPANY_CAP": "-1"}},
		{"Founding", "HOLDCO_IDEA_DENY_TERMS", map[string]string{"HOLDCO_IDEA_DENY_TERMS": "casino, online gambling"}},
		{"Analytics", "HOLDCO_TRUSTED_PROXIES", map[string]string{"HOLDCO_TRUSTED_PROXIES": "10.0.0.0/8, proxy.internal"}},
		{"Analytics", "HOLDCO_ANALYTICS_QUEUE_EVENTS", map[string]string{"HOLDCO_ANALYTICS_QUEUE_EVENTS": "0"}},
		{"Growth", "HOLDCO_DOMAIN_TLDS", map[string]string{"HOLDCO_DOMAIN_TLDS": "com,.c0m"}},
		{"Growth", "HOLDCO_REGISTRAR_DELAY", map[string]string{"HOLDCO_REGISTRAR_DELAY": "soon"}},
		{"Tools", "HOLDCO_RESEARCH_BASE_URL", map[string]string{"HOLDCO_RESEARCH_API_KEY": "k", "HOLDCO_RESEARCH_BASE_URL": "search.example"}},
		{"Tools", "HOLDCO_RESEARCH_API_KEY", map[string]string{"HOLDCO_RESEARCH_BASE_URL": "http://search.example/res/v1"}},
		{"Tools", "HOLDCO_IMAGES_BASE_URL", map[string]string{"HOLDCO_IMAGES_BASE_URL": "localhost:8000/v1"}},
		{"Observability", "HOLDCO_METRICS_ADDR", map[string]string{"HOLDCO_METRICS_ADDR": "9464"}},
		{"Observability", "HOLDCO_PPROF_ADDR", map[string]string{"HOLDCO_PPROF_ADDR": "6060"}},
		{"Observability", "OTEL_EXPORTER_OTLP_ENDPOINT", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"}},
	}
	sections := map[string]bool{}
	for _, tc := range cases {
		sections[tc.section] = true
		t.Run(tc.section+"/"+tc.variable, func(t *testing.T) {
			_, err := Load(env(tc.env))
			var ce *Error
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.variable, ce.Var)
			assert.True(t, strings.HasPrefix(err.Error(), tc.variable+": "), err.Error())
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.NotContains(t, err.Error(), ":p@", "password not echoed")
		})
	}
	for _, s := range Settings {
		assert.True(t, sections[s.Section], "no validation case for section %s", s.Section)
	}
	_, err := Load(env(map[string]string{"DATABASE_URL": "mysql://u:secret@db/x"}))
	require.ErrorContains(t, err, "DATABASE_URL: unsupported scheme")
	assert.NotContains(t, err.Error(), "secret")
	_, err = Load(env(map[string]string{"DATABASE_URL": "postgres:///nohost"}))
	require.ErrorContains(t, err, "has no host")
}

func TestEverySettingIsDocumentedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Settings {
		assert.False(t, seen[s.Var], "duplicate %s", s.Var)
		seen[s.Var] = true
		assert.NotEmpty(t, s.Meaning)
		assert.NotEmpty(t, s.Section)
	}
}

var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's configuration table from Settings")

// TestReadmeTableIsSettings keeps README's configuration table equal to
// Settings, the one source of every variable's default and meaning.
// `go test ./config -run TestReadmeTableIsSettings -update-readme` rewrites
// it.
func TestReadmeTableIsSettings(t *testing.T) {
	const path = "../README.md"
	readme, err := os.ReadFile(path)
	require.NoError(t, err)
	const header = "| variable | section | default | meaning |\n"
	start := strings.Index(string(readme), header)
	require.GreaterOrEqual(t, start, 0, "README has no configuration table starting with %q", header)
	end := start + strings.Index(string(readme[start:]), "\n\n") + 1
	got, want := string(readme[start:end]), MarkdownTable()
	if *updateReadme && got != want {
		require.NoError(t, os.WriteFile(path, []byte(string(readme[:start])+want+string(readme[end:])), 0o644))
		return
	}
	assert.Equal(t, want, got, "README's table differs from config.Settings; run go test ./config -run TestReadmeTableIsSettings -update-readme")
}

// TestSitesURLNeedsAHostOfItsOwn: outside loopback, the sites listener may
// not share the API's host on another port (cookies ignore ports); the
// development layout on localhost stays allowed, and so does a host of its
// own.
func TestSitesURLNeedsAHostOfItsOwn(t *testing.T) {
	refused := []map[string]string{
		{"HOLDCO_PUBLIC_URL": "https://holdco.example", "HOLDCO_SITES_PUBLIC_URL": "https://holdco.example:8443"},
		{"HOLDCO_PUBLIC_URL": "http://203.0.113.7:8080", "HOLDCO_SITES_PUBLIC_URL": "http://203.0.113.7:8081"},
		{"HOLDCO_PUBLIC_URL": "https://Holdco.Example.:443", "HOLDCO_SITES_PUBLIC_URL": "http://holdco.example:8081/"},
	}
	for _, e := range refused {
		_, err := Load(env(e))
		var ce *Error
		require.ErrorAs(t, err, &ce, "%v", e)
		assert.Equal(t, "HOLDCO_SITES_PUBLIC_URL", ce.Var)
		assert.Contains(t, err.Error(), "host of HOLDCO_PUBLIC_URL")
		assert.Contains(t, err.Error(), "docs/auth.md")
	}
	allowed := []map[string]string{
		{"HOLDCO_PUBLIC_URL": "http://localhost:8080", "HOLDCO_SITES_PUBLIC_URL": "http://localhost:8081"},
		{"HOLDCO_PUBLIC_URL": "http://127.0.0.1:8080", "HOLDCO_SITES_PUBLIC_URL": "http://127.0.0.1:8081"},
		{"HOLDCO_PUBLIC_URL": "http://[::1]:8080", "HOLDCO_SITES_PUBLIC_URL": "http://[::1]:8081"},
		{"HOLDCO_PUBLIC_URL": "https://api.holdco.example", "HOLDCO_SITES_PUBLIC_URL": "https://holdco-sites.example"},
	}
	for _, e := range allowed {
		_, err := Load(env(e))
		assert.NoError(t, err, "%v", e)
	}
	assert.NoError(t, CheckSitesHost("http://localhost:8081", "http://localhost:8080"), "the default layout")
	assert.Error(t, CheckSitesHost("https://holdco.example:8081", "https://holdco.example"))
}

// TestSplitStateNamesTheVariable: a process of some roles on Postgres and
// an external Temporal keeps nothing on a disk of its own unless the
// operator says the directory is shared.
func TestSplitStateNamesTheVariable(t *testing.T) {
	cluster := map[string]string{"DATABASE_URL": "postgres://u:p@db:5432/holdco", "TEMPORAL_ADDRESS": "temporal:7233"}
	load := func(extra map[string]string) Config {
		m := map[string]string{}
		for k, v := range cluster {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		c, err := Load(env(m))
		require.NoError(t, err)
		return c
	}
	err := load(nil).SplitState(true, false)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "HOLDCO_BLOB_BACKEND", ce.Var)
	assert.NotContains(t, err.Error(), "\n")
	assert.NotContains(t, err.Error(), ":p@")
	require.ErrorAs(t, load(map[string]string{"HOLDCO_BLOB_BACKEND": "s3", "HOLDCO_BLOB_S3_BUCKET": "b", "HOLDCO_BLOB_S3_REGION": "r"}).SplitState(true, true), &ce)
	assert.Equal(t, "HOLDCO_REPO_BACKEND", ce.Var)
	assert.NoError(t, load(map[string]string{"HOLDCO_BLOB_BACKEND": "s3", "HOLDCO_BLOB_S3_BUCKET": "b", "HOLDCO_BLOB_S3_REGION": "r",
		"HOLDCO_REPO_BACKEND": "github", "HOLDCO_GITHUB_OWNER": "acme", "HOLDCO_GITHUB_TOKEN": "t"}).SplitState(true, true))
	assert.NoError(t, load(map[string]string{"HOLDCO_SHARED_DATA_DIR": "true"}).SplitState(true, true), "the operator says the volume is shared")
	assert.NoError(t, load(nil).SplitState(false, false), "a role that keeps nothing (oauth)")
	embedded, err := Load(env(map[string]string{"DATABASE_URL": "postgres://u:p@db:5432/holdco"}))
	require.NoError(t, err)
	assert.NoError(t, embedded.SplitState(true, true), "an embedded Temporal: one process")
	sqlite, err := Load(env(map[string]string{"TEMPORAL_ADDRESS": "temporal:7233"}))
	require.NoError(t, err)
	assert.NoError(t, sqlite.SplitState(true, true), "SQLite: one machine")
}
