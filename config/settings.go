package config

import (
	"strings"
)

// Setting documents one environment variable. The README's configuration
// table is rendered from Settings (MarkdownTable) and a test keeps the two
// equal, so this list is the one place a variable is described.
type Setting struct {
	// Section is the Config field the variable fills (Database, API, …);
	// "process" for the settings of the process as a whole.
	Section string
	Var     string
	// Default is applied by Load unless it is a description such as
	// "(empty)" or "<data dir>/holdco.db" (those are resolved in code).
	Default string
	// Meaning is Markdown (code in backticks).
	Meaning string
}

// Settings is the table of every variable Load reads, grouped by section.
var Settings = []Setting{
	{"process", "HOLDCO_DATA_DIR", "./data", "directory for the embedded default's files (SQLite databases of holdco and Temporal, the local adapters' repositories, company databases and sites)"},
	{"process", "HOLDCO_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"process", "HOLDCO_LOG_FORMAT", "text", "text or json"},
	{"process", "HOLDCO_SHUTDOWN_TIMEOUT", "15s", "how long in-flight requests may run after Ctrl-C/SIGTERM"},
	{"process", "HOLDCO_SHARED_DATA_DIR", "false", "`true` says the local blob directory and repositories are a volume every process mounts; without it a process running only some roles on Postgres and an external Temporal refuses to start on `local` blobs or repositories (see \"Running a cluster\")"},

	{"HTTP", "HOLDCO_HTTP_READ_TIMEOUT", "5m", "bound on reading one request, body included, on every listener (a 25 MiB upload needs about 0.7 Mbit/s); a slower client is disconnected"},
	{"HTTP", "HOLDCO_HTTP_WRITE_TIMEOUT", "5m", "bound on answering one request, from the end of its headers to the last byte (downloads included), on every listener; no endpoint streams"},
	{"HTTP", "HOLDCO_HTTP_IDLE_TIMEOUT", "2m", "how long a kept-alive connection may wait for its next request"},
	{"HTTP", "HOLDCO_HTTP_CAPTURE_FRONT", "true", "serve analytics capture POSTs on the API listener with holdco's lean HTTP/1.1 front (about 1.2–1.5 times net/http's rate; every other request, and a connection from its first other request on, goes to net/http); `false` leaves all to net/http (docs/analytics.md, \"The capture front\")"},

	{"Database", "DATABASE_URL", "<data dir>/holdco.db", "`postgres://user:pass@host:5432/db` switches the store to Postgres; otherwise a SQLite file path"},
	{"Database", "HOLDCO_DB_MAX_CONNS", "0", "most Postgres connections this process opens; 0: by its roles (20 with api, mcp or worker, else 5). Processes × this ≤ the server's max_connections (docs/scaling.md)"},
	{"Database", "HOLDCO_DB_MAX_IDLE_CONNS", "0", "Postgres connections kept open while idle; 0: all of the maximum"},
	{"Database", "HOLDCO_DB_CONN_MAX_LIFETIME", "30m", "a Postgres connection is replaced after this long (lets a failover or a pooler's rebalancing reach every process)"},

	{"Temporal", "TEMPORAL_ADDRESS", "(empty)", "host:port of a Temporal cluster; when empty the embedded Temporal server is started"},
	{"Temporal", "TEMPORAL_NAMESPACE", "default", "Temporal namespace holdco's workflows run in"},
	{"Temporal", "HOLDCO_TEMPORAL_HOST", "127.0.0.1", "IP the embedded Temporal server and UI bind to"},
	{"Temporal", "HOLDCO_TEMPORAL_PORT", "7233", "embedded Temporal frontend (gRPC) port"},
	{"Temporal", "HOLDCO_TEMPORAL_UI_PORT", "8233", "embedded Temporal Web UI port; 0 disables it"},
	{"Temporal", "HOLDCO_TEMPORAL_START_TIMEOUT", "2m", "how long start waits for the embedded Temporal server to answer (it can take more than 15 s on a loaded machine); start fails after it"},

	{"API", "HOLDCO_API_ADDR", ":8080", "REST API listener (`api` role)"},
	{"API", "HOLDCO_PUBLIC_URL", "http://localhost:<api port>", "address browsers and the CLI use to reach the REST API (sign-in callbacks are built from it)"},
	{"API", "HOLDCO_FRONTEND_URL", "<public URL>", "web app address: sign-in returns there, logout lands on its `/login`, account links open its `/dashboard?conglomerate_id=<id>`; by default holdco's own minimal pages"},

	{"Sites", "HOLDCO_SITES_ADDR", ":8083", "listener of company sites (`sites` role; served at `<sites URL>/<handle>/`); a separate origin from the API so a tenant's script cannot reach holdco's sessions"},
	{"Sites", "HOLDCO_SITES_PUBLIC_URL", "http://localhost:<sites port>", "address browsers use to reach the sites listener; must be an origin of its own (not the public or frontend URL's) and, outside loopback, a host other than the public URL's"},

	{"Worker", "HOLDCO_WORKER_HEALTH_ADDR", ":8084", "listener of the `worker` role's probes: `GET /health` (the process runs) and `GET /ready` (database and Temporal answer and this worker polls its task queue)"},

	{"MCP", "HOLDCO_MCP_ADDR", ":8081", "listener of the connector for AI assistants (`mcp` role): MCP 2026-07-28 at the root path, `GET /health`, the protected resource metadata (docs/connector.md)"},
	{"MCP", "HOLDCO_MCP_PUBLIC_URL", "http://localhost:<mcp port>", "address assistants use to reach the connector (the OAuth resource its tokens are bound to); an origin of its own"},

	{"OAuth", "HOLDCO_OAUTH_ADDR", ":8082", "listener of the OAuth authorization server (`oauth` role; see docs/oauth.md)"},
	{"OAuth", "HOLDCO_OAUTH_PUBLIC_URL", "http://localhost:<oauth port>", "the authorization server's issuer (its bare origin) as browsers and assistants reach it; an origin of its own"},
	{"OAuth", "HOLDCO_OAUTH_CLIENTS", "(empty)", "pre-registered assistants, a JSON array of `{\"client_id\", \"client_name\", \"redirect_uris\": [...], \"application_type\"}` (`web` or `native`, default `web`); shown as registered with holdco on the consent page"},

	{"Identity", "OIDC_ISSUER", "(empty)", "issuer URL of the identity provider users sign in with; when empty the embedded development provider runs at `<public URL>/dev-idp`"},
	{"Identity", "OIDC_CLIENT_ID", "(empty)", "client id registered at `OIDC_ISSUER` (redirect URIs `<public URL>/auth/callback`, `<public URL>/auth/cli/callback` and the authorization server's `<oauth URL>/oidc/callback`)"},
	{"Identity", "OIDC_CLIENT_SECRET", "(empty)", "client secret registered at `OIDC_ISSUER`"},
	{"Identity", "HOLDCO_SECRET_KEY", "(empty)", "at least 32 characters; signs web session tokens and login state; when empty a random key is created in the database and shared by all replicas"},

	{"Payments", "STRIPE_SECRET_KEY", "(empty)", "Stripe secret key of the platform account (credits and plans); when empty payments are off and payment links are `null` with a reason"},
	{"Payments", "STRIPE_CONNECT_SECRET_KEY", "(empty)", "Stripe secret key of the Connect platform account (payout onboarding); empty uses `STRIPE_SECRET_KEY`"},
	{"Payments", "STRIPE_WEBHOOK_SECRET", "(empty)", "signing secret (`whsec_…`) of the webhook endpoint `<public URL>/webhooks/stripe`; required with `STRIPE_SECRET_KEY`"},
	{"Payments", "STRIPE_CONNECT_WEBHOOK_SECRET", "(empty)", "signing secret of the Connect webhook endpoint `<public URL>/webhooks/stripe/connect` (events of connected accounts: the companies' own sales); when empty companies cannot sell (`sales_not_configured`)"},
	{"Payments", "STRIPE_API_BASE", "(empty)", "Stripe API address override (for example a local stripe-mock); empty uses Stripe's"},
	{"Payments", "STRIPE_FOUNDER_PRICE_ID", "(empty)", "recurring price (`price_…`) of the Founder plan; empty: the plan is not for sale (upgrade links `null`)"},
	{"Payments", "STRIPE_HOSTING_PRICE_ID", "(empty)", "recurring price of the Hosting plan (sites online, no agents), when sold"},
	{"Payments", "HOLDCO_CREDIT_PRICE_CENTS", "10", "price of one credit in US cents"},
	{"Payments", "HOLDCO_FOUNDER_MONTHLY_CREDITS", "100", "credits granted with each paid Founder invoice"},
	{"Blob", "HOLDCO_BLOB_BACKEND", "local", "where files' bytes live: `local` (a directory; downloads are signed expiring URLs served on the sites origin) or `s3` (any S3-protocol store; presigned URLs)"},
	{"Blob", "HOLDCO_BLOB_DIR", "<data dir>/blobs", "the local backend's directory (shared by the `api`, `sites` and `worker` processes); also holds the site deploys"},
	{"Blob", "HOLDCO_BLOB_S3_BUCKET", "(empty)", "S3 bucket (required with `s3`)"},
	{"Blob", "HOLDCO_BLOB_S3_REGION", "(empty)", "S3 region (required with `s3`; `us-east-1` for most self-hosted stores)"},
	{"Blob", "HOLDCO_BLOB_S3_ENDPOINT", "(empty)", "URL of a store other than AWS S3 (MinIO, R2, …)"},
	{"Blob", "HOLDCO_BLOB_S3_PATH_STYLE", "false", "address the bucket as `<endpoint>/<bucket>/<key>` (most self-hosted stores)"},
	{"Blob", "HOLDCO_BLOB_S3_ACCESS_KEY_ID", "(empty)", "S3 access key; with the secret below, or both empty for the SDK's default credential chain"},
	{"Blob", "HOLDCO_BLOB_S3_SECRET_ACCESS_KEY", "(empty)", "S3 secret key"},
	{"Blob", "HOLDCO_BLOB_URL_TTL", "5m", "how long a download link works (1s to 168h)"},
	{"Blob", "HOLDCO_BLOB_MAX_FILE_BYTES", "26214400", "largest file accepted (25 MiB); larger uploads answer 413 before their body is read"},
	{"Blob", "HOLDCO_BLOB_QUOTA_BYTES", "1073741824", "what one company's files may take in all (1 GiB)"},

	{"Repos", "HOLDCO_REPO_BACKEND", "local", "where company code repositories live: `local` (bare repositories under `HOLDCO_REPO_DIR`; in a cluster a volume every worker, API and connector process mounts) or `github` (private repositories of a GitHub organization, through its REST API)"},
	{"Repos", "HOLDCO_REPO_DIR", "<data dir>/repos", "the local backend's directory"},
	{"Repos", "HOLDCO_GITHUB_OWNER", "(empty)", "GitHub organization the repositories are created in (required with `github`)"},
	{"Repos", "HOLDCO_GITHUB_TOKEN", "(empty)", "token allowed to create and write the organization's repositories (required with `github`)"},
	{"Repos", "HOLDCO_GITHUB_API_URL", "(empty)", "REST API address of a GitHub Enterprise server (`https://host/api/v3/`); empty uses GitHub's"},
	{"Repos", "HOLDCO_GITHUB_REPO_PREFIX", "holdco-", "start of every repository's name; the company id follows"},

	{"Mail", "HOLDCO_MAIL_DOMAIN", "mail.localhost", "mail domain of the company inboxes: a company receives and sends as `<handle>@<domain>` (see docs/email.md)"},
	{"Mail", "HOLDCO_MAIL_BACKEND", "local", "`local` keeps sent messages and received bodies in a mailbox under the data dir (offline); `smtp` sends through `HOLDCO_MAIL_SMTP_HOST`"},
	{"Mail", "HOLDCO_MAIL_SMTP_HOST", "(empty)", "submission server; required with `HOLDCO_MAIL_BACKEND=smtp`"},
	{"Mail", "HOLDCO_MAIL_SMTP_PORT", "587", "submission server port (465 with `HOLDCO_MAIL_SMTP_TLS=tls`)"},
	{"Mail", "HOLDCO_MAIL_SMTP_USER", "(empty)", "SMTP user name; empty sends without authentication"},
	{"Mail", "HOLDCO_MAIL_SMTP_PASSWORD", "(empty)", "SMTP password"},
	{"Mail", "HOLDCO_MAIL_SMTP_TLS", "starttls", "`starttls` (required upgrade), `tls` (TLS from the first byte) or `none` (a relay on a private network only)"},
	{"Mail", "HOLDCO_MAIL_FROM", "(empty)", "envelope sender (bounce address) of every sent message; empty uses the company's own address"},
	{"Mail", "HOLDCO_MAIL_INBOUND_SECRET", "(empty)", "at least 32 characters; HMAC-SHA256 key of `POST /webhooks/email/inbound` deliveries; empty disables inbound mail (404)"},
	{"Mail", "HOLDCO_MAIL_DAILY_SEND_LIMIT", "50", "messages one company may send per UTC day (429 `rate_limited` above)"},

	{"LLM", "HOLDCO_LLM_PROVIDER", "scripted", "language model of the agents: `scripted` (deterministic, offline, really calls tools; see docs/llm.md), `anthropic` (Messages API) or `openai` (Chat Completions: OpenAI, Ollama, vLLM…)"},
	{"LLM", "HOLDCO_LLM_MODEL", "(empty)", "model name, required with `anthropic` and `openai` (for example `claude-sonnet-4-5`, `gpt-4.1`, `llama3.2`)"},
	{"LLM", "HOLDCO_LLM_API_KEY", "(empty)", "the provider's API key; required with `anthropic`, and with `openai` unless `HOLDCO_LLM_BASE_URL` names a local server"},
	{"LLM", "HOLDCO_LLM_BASE_URL", "(empty)", "provider address override: with `openai` any compatible server up to `/v1` (Ollama: `http://localhost:11434/v1`); empty uses the provider's"},
	{"LLM", "HOLDCO_LLM_MAX_TOKENS", "4096", "cap on the tokens of one model answer"},
	{"LLM", "HOLDCO_LLM_TIMEOUT", "120s", "bound on one model call, stream included; a call past it fails as `timeout` and is retried by the turn's retry policy"},
	{"LLM", "HOLDCO_LLM_SCRIPTED_STEP_DELAY", "200ms", "time each call of the `scripted` model takes (its text streams over it); `0s` in tests"},
	{"LLM", "HOLDCO_AGENT_RUN_EVERY", "24h", "period of each active company's scheduled agent run (a Temporal Schedule per company); `0s` turns scheduled runs off"},

	{"Founding", "HOLDCO_BUSINESS_LIMIT", "10", "companies (not archived) one account may have; a new business beyond it is `business_limit_reached` (see docs/founding.md)"},
	{"Founding", "HOLDCO_FOUNDING_INTERVIEWS_PER_DAY", "5", "founding interviews one account may open in 24 hours (429 `rate_limited` beyond)"},
	{"Founding", "HOLDCO_PLATFORM_COMPANY_CAP", "100000", "companies (not archived) the whole platform runs; beyond it no business starts (`business_limit_reached`, scope platform)"},
	{"Founding", "HOLDCO_IDEA_DENY_TERMS", "(empty)", "comma-separated words an idea may not contain (whole words, any case): such an idea is `idea_not_allowed`; there is no moderation call"},

	{"Analytics", "HOLDCO_TRUSTED_PROXIES", "(empty)", "comma-separated IP addresses or CIDR prefixes of the reverse proxies in front of holdco; only requests from them may name the client in `X-Forwarded-For` (analytics capture derives the visitor's country from the client's address and never stores it)"},
	{"Analytics", "HOLDCO_ANALYTICS_QUEUE_EVENTS", "100000", "captured events that may wait for the writer's commit (each capture request is answered once its events are committed to the inbox, docs/analytics.md); beyond it capture answers 503 with `Retry-After` instead of growing memory"},
	{"Analytics", "HOLDCO_ANALYTICS_ADDRESS_RATE", "100", "captured events per second one client address may send (an IPv6 address counts by its /64), with bursts of 10 seconds' worth; beyond it capture answers 429 with `Retry-After`. Counted once for the cluster (each process charges the shared bucket in chunks of one second's worth; at most one chunk per process over): `0` turns the limit off"},
	{"Analytics", "HOLDCO_ANALYTICS_KEY_RATE", "1000", "captured events per second stored for one company's public key, with bursts of 10 seconds' worth; beyond it capture answers 429 with `Retry-After`. Counted once for the cluster like the address rate: `0` turns the limit off"},
	{"Analytics", "HOLDCO_ANALYTICS_RAW_RETENTION", "90d", "how long raw analytics events are kept (whole days, at least `8d`; `0` keeps them for ever); the sweeper deletes older ones hourly, the rollups the reports read are kept"},

	{"Growth", "HOLDCO_DOMAIN_TLDS", "com,net,org,io,co,app,dev", "TLDs of a bare name's domain suggestion grid (comma-separated, 1 to 20)"},
	{"Growth", "HOLDCO_REGISTRAR_DELAY", "30s", "how long the local registrar (under `<data dir>/registrar`, shared by the `api` and `worker` processes) takes to register a paid domain"},

	{"Tools", "HOLDCO_RESEARCH_API_KEY", "(empty)", "Brave Search API key (`X-Subscription-Token`) of the agents' and the connector's `web_research`; empty: the tool answers `not_configured` (see docs/agent-tools.md)"},
	{"Tools", "HOLDCO_RESEARCH_BASE_URL", "(empty)", "Brave Search API address override, up to `/res/v1` (a proxy or a test server); empty uses Brave's"},
	{"Tools", "HOLDCO_IMAGES_API_KEY", "(empty)", "API key of the OpenAI Images API (or a compatible server) used by `generate_image`; empty (and no `HOLDCO_IMAGES_BASE_URL`): the tool answers `not_configured`"},
	{"Tools", "HOLDCO_IMAGES_BASE_URL", "(empty)", "address of an OpenAI-compatible Images API up to `/v1` (a local server needs no key); empty uses OpenAI's"},
	{"Tools", "HOLDCO_IMAGES_MODEL", "gpt-image-1", "image model `generate_image` asks for (`dall-e-*` models are asked for base64)"},

	{"Observability", "HOLDCO_METRICS_ADDR", "(empty)", "listener of this process's Prometheus metrics (`GET /metrics`), apart from the public listeners, for example `127.0.0.1:9464` or, in a container, `:9464`; empty: no metrics listener (see docs/observability.md)"},
	{"Observability", "HOLDCO_PPROF_ADDR", "(empty)", "listener of this process's Go profiles (`net/http/pprof` under `/debug/pprof/`: CPU, heap, goroutines, …), apart from the public listeners, for example `127.0.0.1:6060`; empty: no profiling listener. Bind it to loopback or a private network only (see docs/observability.md)"},
	{"Observability", "OTEL_EXPORTER_OTLP_ENDPOINT", "(empty)", "OpenTelemetry collector that traces are exported to over OTLP/gRPC (`http://collector:4317`); empty: no traces. The other standard `OTEL_*` variables (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`, …) apply too"},
}

// defaultOf is the value Load uses when name is unset; descriptive
// defaults ("(empty)", "<…>") yield "".
func defaultOf(name string) string {
	for _, s := range Settings {
		if s.Var == name {
			if strings.HasPrefix(s.Default, "(") || strings.Contains(s.Default, "<") {
				return ""
			}
			return s.Default
		}
	}
	return ""
}

// MarkdownTable renders Settings as the README's configuration table.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| variable | section | default | meaning |\n|---|---|---|---|\n")
	for _, s := range Settings {
		def := s.Default
		if !strings.HasPrefix(def, "(") {
			def = "`" + def + "`"
		}
		b.WriteString("| `" + s.Var + "` | " + s.Section + " | " + def + " | " + s.Meaning + " |\n")
	}
	return b.String()
}
