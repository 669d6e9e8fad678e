// Package app composes holdco's processes by role (roles.go): each role
// binds its own listener and builds only the adapters it needs; the
// embedded default runs them all in one process. Start brings a process
// up; Run shuts it down in order: listeners, worker, Temporal, adapters,
// store.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"holdco/api"
	"holdco/config"
	"holdco/internal/httpfront"
	"holdco/observability"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// App is a started holdco process.
type App struct {
	cfg    config.Config
	roles  []Role
	logger *slog.Logger

	Store    *store.Store
	Temporal client.Client // nil when no role of the process needs it
	// Service are the use cases the process's roles serve (nil: none,
	// a sites process); parts is what they are (duty.uses).
	Service *usecases.Services
	parts   usecases.Parts
	mounts  map[string]http.Handler
	repos   *repoTools     // the worker's repositories, for the agents' tools
	dbs     companyQueries // the worker's company databases, for the agents' tools
	dev     EmbeddedTemporal

	listeners map[Role]*listener
	serveErr  chan error

	// Worker role.
	worker         worker.Worker
	workerIdentity string
	stopSweeper    func(context.Context)

	// Api role: drains the analytics capture queue.
	stopAnalytics func(context.Context)

	closers []func() error // adapters' resources, closed after Temporal

	// Observability (observability.go): the metrics listener, the tracer
	// provider (nil: no spans) and what flushes its exporter.
	metrics     *listener
	pprof       *listener
	tracer      trace.TracerProvider
	stopTracing func(context.Context) error
}

// Start brings every part of the requested roles up. Failures name the
// setting to fix. On error, whatever was started is stopped again.
func Start(ctx context.Context, cfg config.Config, roles []Role, logger *slog.Logger, opts ...Option) (_ *App, err error) {
	a := &App{cfg: cfg, roles: roles, logger: logger, serveErr: make(chan error, len(AllRoles)+1), listeners: map[Role]*listener{}}
	for _, r := range roles {
		a.parts |= duties[r].uses
	}
	for _, o := range opts {
		o(a)
	}
	defer func() {
		if err != nil {
			a.stop(context.Background())
		}
	}()
	if err := checkSplitState(cfg, roles); err != nil {
		return nil, err
	}

	// Bind every listener before the slow parts so a clash is reported at
	// once.
	for _, r := range AllRoles {
		if d := duties[r]; a.has(r) && d.listenVar != "" {
			if a.listeners[r], err = listen(r, d.listenVar, d.addr(cfg)); err != nil {
				return nil, err
			}
		}
	}
	if err = a.startObservability(ctx); err != nil {
		return nil, err
	}

	if a.Store, err = store.Open(ctx, cfg.Database.URL, logger, a.storeOptions()...); err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err = a.Store.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("DATABASE_URL: migrate %s: %w", config.Redact(cfg.Database.URL), err)
	}

	if slices.ContainsFunc(roles, func(r Role) bool { return duties[r].temporal }) {
		if err = a.connectTemporal(ctx); err != nil {
			return nil, err
		}
	}

	publicURL, sitesURL := a.publicURL(), a.sitesURL()
	if a.listeners[RoleAPI] != nil || a.listeners[RoleSites] != nil {
		if err = checkSitesOrigin(cfg, publicURL, sitesURL); err != nil {
			return nil, err
		}
	}

	// The worker first, so the listeners open on a process that can
	// already run what their requests start.
	if a.has(RoleWorker) {
		if err = a.startWorker(ctx, publicURL, sitesURL); err != nil {
			return nil, err
		}
	}
	// Without the worker, an API or connector process opens the companies'
	// repositories and databases for the tools that commit and query when
	// it reaches their one home: a hosted repository backend with
	// Postgres, or a data directory the operator says every process
	// mounts. Otherwise those tools answer not_configured.
	if a.repos == nil && (a.has(RoleAPI) || a.has(RoleMCP)) &&
		(cfg.SharedDataDir || (cfg.Repos.Backend != config.RepoLocal && cfg.Database.IsPostgres())) {
		if _, _, _, err = a.buildCompanyResources(ctx, sitesURL); err != nil {
			return nil, err
		}
	}
	handlers := map[Role]func(context.Context, string, string) (http.Handler, error){
		RoleAPI:   a.apiHandler,
		RoleMCP:   a.mcpHandler,
		RoleOAuth: a.oauthHandler,
		RoleSites: a.sitesHandler,
		// The worker's probes (the worker itself started above).
		RoleWorker: a.workerHealthHandler,
	}
	for _, r := range AllRoles {
		l := a.listeners[r]
		if l == nil {
			continue
		}
		h, err := handlers[r](ctx, publicURL, sitesURL)
		if err != nil {
			return nil, err
		}
		l.bounds = cfg.HTTP
		if r == RoleAPI && cfg.HTTP.CaptureFront {
			l.frontRoute, l.frontMaxBody, l.logger = api.FrontRoute, api.FrontMaxBody, a.logger
		}
		l.serve(a.instrument(r, h), a.serveErr)
	}
	a.serveMetrics()

	attrs := []any{"roles", roles, "database", config.Redact(cfg.Database.URL)}
	if a.Temporal != nil {
		attrs = append(attrs, "temporal", a.temporalAddress())
	}
	for _, r := range AllRoles {
		if l := a.listeners[r]; l != nil {
			attrs = append(attrs, string(r), "http://"+l.addr())
		}
	}
	if a.listeners[RoleAPI] != nil {
		attrs = append(attrs, "public_url", publicURL)
	}
	if a.listeners[RoleSites] != nil {
		attrs = append(attrs, "sites_url", sitesURL)
	}
	if a.dev != nil && a.dev.UIAddress() != "" {
		attrs = append(attrs, "temporal_ui", "http://"+a.dev.UIAddress())
	}
	if a.metrics != nil {
		attrs = append(attrs, "metrics", "http://"+a.metrics.addr()+"/metrics")
	}
	if a.pprof != nil {
		attrs = append(attrs, "pprof", "http://"+a.pprof.addr()+"/debug/pprof/")
	}
	logger.Info("holdco is ready", attrs...)
	return a, nil
}

func (a *App) has(r Role) bool { return slices.Contains(a.roles, r) }

// publicURL is the REST API's address for browsers: configured, or derived
// from the bound listener (or the configured address in a process without
// the api role, such as a worker writing a site's API address).
func (a *App) publicURL() string {
	if l := a.listeners[RoleAPI]; l != nil {
		return a.cfg.API.ResolvePublicURL(l.addr())
	}
	return a.cfg.API.ResolvePublicURL(a.cfg.API.Addr)
}

// sitesURL is where tenant sites are reached, like publicURL.
func (a *App) sitesURL() string {
	if l := a.listeners[RoleSites]; l != nil {
		return a.cfg.Sites.ResolvePublicURL(l.addr())
	}
	return a.cfg.Sites.ResolvePublicURL(a.cfg.Sites.Addr)
}

// mcpURL is where assistants reach the connector, like publicURL.
func (a *App) mcpURL() string {
	if l := a.listeners[RoleMCP]; l != nil {
		return a.cfg.MCP.ResolvePublicURL(l.addr())
	}
	return a.cfg.MCP.ResolvePublicURL(a.cfg.MCP.Addr)
}

// oauthURL is the authorization server's issuer, like publicURL.
func (a *App) oauthURL() string {
	if l := a.listeners[RoleOAuth]; l != nil {
		return a.cfg.OAuth.ResolvePublicURL(l.addr())
	}
	return a.cfg.OAuth.ResolvePublicURL(a.cfg.OAuth.Addr)
}

func (a *App) listenerAddr(r Role) string {
	if l := a.listeners[r]; l != nil {
		return l.addr()
	}
	return ""
}

// APIAddr is the REST listener's address (useful when started on port 0);
// empty without the api role.
func (a *App) APIAddr() string { return a.listenerAddr(RoleAPI) }

// APIFrontStats counts what the API listener's front served itself and
// the connections it handed to net/http (zero when it is off).
func (a *App) APIFrontStats() httpfront.Stats {
	if l := a.listeners[RoleAPI]; l != nil && l.front != nil {
		return l.front.Stats()
	}
	return httpfront.Stats{}
}

// SitesAddr is the sites listener's address; empty without the sites role.
func (a *App) SitesAddr() string { return a.listenerAddr(RoleSites) }

// MCPAddr is the connector's listener address; empty without the mcp role.
func (a *App) MCPAddr() string { return a.listenerAddr(RoleMCP) }

// WorkerHealthAddr is the worker's probe listener address; empty without
// the worker role.
func (a *App) WorkerHealthAddr() string { return a.listenerAddr(RoleWorker) }

// OAuthAddr is the authorization server's listener address; empty without
// the oauth role.
func (a *App) OAuthAddr() string { return a.listenerAddr(RoleOAuth) }

// TemporalUIAddr is the embedded Temporal UI's address, if it runs.
func (a *App) TemporalUIAddr() string {
	if a.dev == nil {
		return ""
	}
	return a.dev.UIAddress()
}

// Run blocks until ctx ends (Ctrl-C) or a server fails, then shuts down:
// in-flight requests finish, the worker stops, then Temporal, the
// adapters and the store.
func (a *App) Run(ctx context.Context) error {
	var err error
	select {
	case <-ctx.Done():
	case err = <-a.serveErr:
	case err = <-a.uiErrors():
		err = fmt.Errorf("HOLDCO_TEMPORAL_UI_PORT: Temporal UI stopped: %w", err)
	}
	a.logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	a.stop(shutdownCtx)
	a.logger.Info("stopped")
	return err
}

func (a *App) uiErrors() <-chan error {
	if a.dev == nil {
		return nil
	}
	return a.dev.UIErrors()
}

// stop shuts down in order: listeners (in-flight requests finish), the
// sweeper and the worker, Temporal, the adapters, the store.
func (a *App) stop(ctx context.Context) {
	for _, r := range AllRoles {
		if l := a.listeners[r]; l != nil {
			l.shutdown(ctx, a.logger)
		}
	}
	if a.stopAnalytics != nil {
		a.stopAnalytics(ctx)
	}
	if a.Service != nil && a.Service.Turns != nil {
		// The turns' workflow starts under way, while the client is open.
		a.Service.Turns.Close(ctx)
	}
	if a.stopSweeper != nil {
		a.stopSweeper(ctx)
	}
	if a.worker != nil {
		a.worker.Stop()
	}
	if a.Temporal != nil {
		a.Temporal.Close()
	}
	if a.dev != nil {
		a.dev.Stop()
	}
	for _, closeFn := range a.closers {
		if err := closeFn(); err != nil {
			a.logger.Warn("close", "error", err)
		}
	}
	if a.Store != nil {
		if err := a.Store.Close(); err != nil {
			a.logger.Warn("store close", "error", err)
		}
	}
	a.stopObservability(ctx)
}

// temporalConnection is how the client talks to Temporal. The SDK gzips
// every request (and the server its answers) by default; the embedded
// server is in this process, reached over loopback, where compressing is
// CPU spent on both sides of each of a turn's dozen round trips for
// nothing (docs/benchmarks.md, Agent turns). A cluster elsewhere keeps the
// SDK's default.
func temporalConnection(t config.Temporal) client.ConnectionOptions {
	if t.Embedded() {
		return client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}}
	}
	return client.ConnectionOptions{}
}

func (a *App) temporalAddress() string {
	if a.cfg.Temporal.Embedded() {
		return "embedded " + a.dev.Address()
	}
	return a.cfg.Temporal.Address
}

// connectTemporal starts the embedded server when no cluster is configured,
// dials it, waits until the namespace answers and registers holdco's search
// attributes.
func (a *App) connectTemporal(ctx context.Context) error {
	cfg := a.cfg
	interceptors, err := a.temporalInterceptors()
	if err != nil {
		return err
	}
	opts := client.Options{
		HostPort:          cfg.Temporal.Address,
		Namespace:         cfg.Temporal.Namespace,
		Logger:            TemporalLogger(a.logger),
		MetricsHandler:    observability.TemporalMetrics(),
		Interceptors:      interceptors,
		ConnectionOptions: temporalConnection(cfg.Temporal),
	}
	if !cfg.Temporal.Embedded() {
		dialCtx, cancel := context.WithTimeout(ctx, externalDialTimeout)
		defer cancel()
		c, err := client.DialContext(dialCtx, opts)
		if err != nil {
			return fmt.Errorf("TEMPORAL_ADDRESS: cannot reach Temporal at %s: %w", opts.HostPort, err)
		}
		a.Temporal = c
		if err := waitForNamespace(dialCtx, c, cfg.Temporal.Namespace); err != nil {
			return fmt.Errorf("TEMPORAL_NAMESPACE: namespace %q on %s is not available: %w", cfg.Temporal.Namespace, opts.HostPort, err)
		}
	} else if err := a.startEmbeddedTemporal(ctx, opts); err != nil {
		return err
	}
	if err := workflows.EnsureSearchAttributes(ctx, a.Temporal, cfg.Temporal.Namespace); err != nil {
		// An external cluster may not let holdco manage its namespace; the
		// operator registers the attributes then.
		a.logger.Warn("could not register search attributes; register them on the cluster", "error", err, "attributes", contract.SearchAttributes())
	}
	return nil
}

// externalDialTimeout bounds the first call to an external cluster.
const externalDialTimeout = 15 * time.Second

// embeddedPatience is how long the start waits for the embedded server
// before it says, once, that it is still waiting.
const embeddedPatience = 15 * time.Second

// startEmbeddedTemporal starts the embedded server and waits, up to
// HOLDCO_TEMPORAL_START_TIMEOUT, until it answers and serves the
// namespace. The server runs in this process on ports checked free just
// before, so a server that does not answer in time is a slow start (a
// loaded machine), not a configuration mistake: the error says so and
// names the setting that gives it longer.
func (a *App) startEmbeddedTemporal(ctx context.Context, opts client.Options) error {
	cfg := a.cfg
	dev, err := startEmbedded(ctx, embeddedStarter(), EmbeddedTemporalOptions{
		DatabaseFile:     filepath.Join(cfg.DataDir, "temporal.db"),
		Host:             cfg.Temporal.Host,
		FrontendPort:     cfg.Temporal.Port,
		UIPort:           cfg.Temporal.UIPort,
		Namespace:        cfg.Temporal.Namespace,
		SearchAttributes: contract.SearchAttributes(),
		Logger:           a.logger,
		LogLevel:         max(cfg.Log.Level, slog.LevelWarn),
	})
	if err != nil {
		var pe *PortInUseError
		if errors.As(err, &pe) {
			if pe.Port == cfg.Temporal.UIPort {
				return fmt.Errorf("HOLDCO_TEMPORAL_UI_PORT: port %d is in use", pe.Port)
			}
			return fmt.Errorf("HOLDCO_TEMPORAL_PORT: port %d is in use", pe.Port)
		}
		if errors.Is(err, errNoEmbeddedTemporal) {
			return err
		}
		return fmt.Errorf("HOLDCO_DATA_DIR: embedded Temporal server: %w", err)
	}
	a.dev = dev
	opts.HostPort = dev.Address()
	wait := cfg.Temporal.StartTimeout
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	slow := time.AfterFunc(embeddedPatience, func() {
		a.logger.Info("still waiting for the embedded Temporal server to answer", "address", opts.HostPort, "timeout", wait.String())
	})
	defer slow.Stop()
	tooSlow := func(err error) error {
		return fmt.Errorf("HOLDCO_TEMPORAL_START_TIMEOUT: the embedded Temporal server on %s did not answer within %s "+
			"(the machine is likely overloaded; give it longer with HOLDCO_TEMPORAL_START_TIMEOUT): %v", opts.HostPort, wait, err)
	}
	c, err := dialUntil(waitCtx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return tooSlow(err)
	}
	a.Temporal = c
	if err := waitForNamespace(waitCtx, c, cfg.Temporal.Namespace); err != nil {
		var nf *serviceerror.NamespaceNotFound
		if errors.As(err, &nf) || ctx.Err() != nil {
			return fmt.Errorf("TEMPORAL_NAMESPACE: namespace %q on %s is not available: %w", cfg.Temporal.Namespace, opts.HostPort, err)
		}
		return tooSlow(err)
	}
	return nil
}

// dialUntil dials until a dial succeeds or ctx ends: each dial's first
// call gives up after a few seconds, and a server still starting answers
// it Unavailable. The last error is returned.
func dialUntil(ctx context.Context, opts client.Options) (client.Client, error) {
	for {
		c, err := client.DialContext(ctx, opts)
		if err == nil {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitForNamespace polls until the frontend serves the namespace; the
// embedded server accepts connections a moment before that.
func waitForNamespace(ctx context.Context, c client.Client, namespace string) error {
	for {
		_, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
		if err == nil {
			return nil
		}
		var nf *serviceerror.NamespaceNotFound
		if errors.As(err, &nf) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// healthChecks are the dependencies a listener's /health reports on.
func (a *App) healthChecks(withTemporal bool) []api.HealthCheck {
	checks := []api.HealthCheck{{Name: "database", Check: a.Store.Ping}}
	if withTemporal && a.Temporal != nil {
		checks = append(checks, api.HealthCheck{Name: "temporal", Check: func(ctx context.Context) error {
			_, err := a.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
			return err
		}})
	}
	return checks
}
