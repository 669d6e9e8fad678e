// Package app wires holdco's process together: configuration, store,
// Temporal (embedded or external), the worker and the REST listener, and
// shuts them down in order.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"holdco/api"
	"holdco/config"
	"holdco/devserver"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/workflows"
)

// Role is one duty a process can take on.
type Role string

const (
	RoleAPI    Role = "api"
	RoleWorker Role = "worker"
)

// AllRoles is what `holdco serve` runs by default.
var AllRoles = []Role{RoleAPI, RoleWorker}

// ParseRoles reads a comma-separated role list such as "api,worker".
func ParseRoles(s string) ([]Role, error) {
	var roles []Role
	for _, part := range strings.Split(s, ",") {
		r := Role(strings.TrimSpace(part))
		if r == "" {
			continue
		}
		if !slices.Contains(AllRoles, r) {
			return nil, fmt.Errorf("--roles: unknown role %q (valid: api, worker)", r)
		}
		if !slices.Contains(roles, r) {
			roles = append(roles, r)
		}
	}
	if len(roles) == 0 {
		return nil, errors.New("--roles: name at least one of api, worker")
	}
	return roles, nil
}

// App is a started holdco process.
type App struct {
	cfg    config.Config
	logger *slog.Logger

	Store    *store.Store
	Temporal client.Client
	Service  *usecases.Services // API role only
	dev      *devserver.Server
	worker   worker.Worker
	http     *http.Server
	listener net.Listener
	// Tenant sites: a listener and origin of their own.
	sitesHTTP     *http.Server
	sitesListener net.Listener
	serveErr      chan error
	closers       []func() error // adapters' resources, closed last

	// stopSweeper ends the provisioning sweeper (worker role).
	stopSweeper func()
}

// Start brings every part of the requested roles up. Failures name the
// setting to fix. On error, whatever was started is stopped again.
func Start(ctx context.Context, cfg config.Config, roles []Role, logger *slog.Logger) (_ *App, err error) {
	a := &App{cfg: cfg, logger: logger, serveErr: make(chan error, 1)}
	defer func() {
		if err != nil {
			a.stop(context.Background())
		}
	}()

	// Bind the REST port before the slow parts so a clash is reported at once.
	if slices.Contains(roles, RoleAPI) {
		if a.listener, err = net.Listen("tcp", cfg.APIAddr); err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return nil, fmt.Errorf("HOLDCO_API_ADDR: port %s is in use", portOf(cfg.APIAddr))
			}
			return nil, fmt.Errorf("HOLDCO_API_ADDR: cannot listen on %s: %w", cfg.APIAddr, err)
		}
		if a.sitesListener, err = listen("HOLDCO_SITES_ADDR", cfg.SitesAddr); err != nil {
			return nil, err
		}
	}

	if a.Store, err = store.Open(ctx, cfg.DatabaseURL, logger); err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err = a.Store.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("DATABASE_URL: migrate %s: %w", config.Redact(cfg.DatabaseURL), err)
	}

	if err = a.connectTemporal(ctx); err != nil {
		return nil, err
	}

	publicURL, sitesURL := cfg.ResolvePublicURL(cfg.APIAddr), cfg.ResolveSitesURL(cfg.SitesAddr)
	if a.listener != nil {
		publicURL = cfg.ResolvePublicURL(a.listener.Addr().String())
		sitesURL = cfg.ResolveSitesURL(a.sitesListener.Addr().String())
		if err = checkSitesOrigin(cfg, publicURL, sitesURL); err != nil {
			return nil, err
		}
	}
	prov, host, err := a.buildProvisioning(ctx, sitesURL)
	if err != nil {
		return nil, err
	}

	if slices.Contains(roles, RoleWorker) {
		a.worker = worker.New(a.Temporal, workflows.TaskQueue, worker.Options{})
		workflows.Register(a.worker, prov)
		siteConfig, err := a.buildSiteConfig(ctx, publicURL, host)
		if err != nil {
			return nil, err
		}
		workflows.RegisterSiteConfig(a.worker, siteConfig)
		if err = a.worker.Start(); err != nil {
			return nil, fmt.Errorf("start worker: %w", err)
		}
		a.startProvisioningSweeper()
	}

	if a.listener != nil {
		svc, mounts, err := a.buildService(ctx, publicURL, sitesURL, prov)
		if err != nil {
			return nil, err
		}
		a.Service = svc
		router := api.New(api.Deps{
			Logger:        logger,
			Service:       svc,
			SecureCookies: isHTTPS(publicURL),
			Mount:         mounts,
			Health: []api.HealthCheck{
				{Name: "database", Check: a.Store.Ping},
				{Name: "temporal", Check: func(ctx context.Context) error {
					_, err := a.Temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
					return err
				}},
			},
		})
		a.http = &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := a.http.Serve(a.listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.serveErr <- fmt.Errorf("REST server: %w", err)
			}
		}()
		a.sitesHTTP = &http.Server{Handler: a.sitesHandler(host), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := a.sitesHTTP.Serve(a.sitesListener); err != nil && !errors.Is(err, http.ErrServerClosed) {
				a.serveErr <- fmt.Errorf("sites server: %w", err)
			}
		}()
	}

	attrs := []any{"roles", roles, "database", config.Redact(cfg.DatabaseURL), "temporal", a.temporalAddress()}
	if a.listener != nil {
		attrs = append(attrs, "api", publicURL, "sites", sitesURL)
	}
	if a.dev != nil && a.dev.UIAddress() != "" {
		attrs = append(attrs, "temporal_ui", "http://"+a.dev.UIAddress())
	}
	logger.Info("holdco is ready", attrs...)
	return a, nil
}

// APIAddr is the REST listener's address (useful when started on port 0).
func (a *App) APIAddr() string {
	if a.listener == nil {
		return ""
	}
	return a.listener.Addr().String()
}

// SitesAddr is the sites listener's address (useful when started on port
// 0).
func (a *App) SitesAddr() string {
	if a.sitesListener == nil {
		return ""
	}
	return a.sitesListener.Addr().String()
}

// TemporalUIAddr is the embedded Temporal UI's address, if it runs.
func (a *App) TemporalUIAddr() string {
	if a.dev == nil {
		return ""
	}
	return a.dev.UIAddress()
}

// Run blocks until ctx ends (Ctrl-C) or a server fails, then shuts down:
// in-flight requests finish, the worker stops, then Temporal and the store.
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

func (a *App) stop(ctx context.Context) {
	if a.http != nil {
		if err := a.http.Shutdown(ctx); err != nil {
			a.logger.Warn("REST server shutdown", "error", err)
		}
	} else if a.listener != nil {
		_ = a.listener.Close()
	}
	if a.sitesHTTP != nil {
		if err := a.sitesHTTP.Shutdown(ctx); err != nil {
			a.logger.Warn("sites server shutdown", "error", err)
		}
	} else if a.sitesListener != nil {
		_ = a.sitesListener.Close()
	}
	if a.stopSweeper != nil {
		a.stopSweeper()
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
}

func (a *App) temporalAddress() string {
	if a.cfg.EmbeddedTemporal() {
		return "embedded " + a.dev.Address()
	}
	return a.cfg.TemporalAddress
}

// connectTemporal starts the embedded server when no cluster is configured,
// dials it, waits until the namespace answers and registers holdco's search
// attributes.
func (a *App) connectTemporal(ctx context.Context) error {
	cfg := a.cfg
	setting, address := "TEMPORAL_ADDRESS", cfg.TemporalAddress
	if cfg.EmbeddedTemporal() {
		dev, err := devserver.Start(ctx, devserver.Options{
			DatabaseFile:     filepath.Join(cfg.DataDir, "temporal.db"),
			Host:             cfg.TemporalHost,
			FrontendPort:     cfg.TemporalPort,
			UIPort:           cfg.TemporalUIPort,
			Namespace:        cfg.TemporalNamespace,
			SearchAttributes: workflows.SearchAttributes(),
			Logger:           a.logger,
			LogLevel:         max(cfg.LogLevel, slog.LevelWarn),
		})
		if err != nil {
			var pe *devserver.PortInUseError
			if errors.As(err, &pe) {
				if pe.Port == cfg.TemporalUIPort {
					return fmt.Errorf("HOLDCO_TEMPORAL_UI_PORT: port %d is in use", pe.Port)
				}
				return fmt.Errorf("HOLDCO_TEMPORAL_PORT: port %d is in use", pe.Port)
			}
			return fmt.Errorf("HOLDCO_DATA_DIR: embedded Temporal server: %w", err)
		}
		a.dev = dev
		setting, address = "HOLDCO_TEMPORAL_PORT", dev.Address()
	}

	dialCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, err := client.DialContext(dialCtx, client.Options{
		HostPort:  address,
		Namespace: cfg.TemporalNamespace,
		Logger:    sdklog.NewStructuredLogger(a.logger.With("component", "temporal-sdk")),
	})
	if err != nil {
		return fmt.Errorf("%s: cannot reach Temporal at %s: %w", setting, address, err)
	}
	a.Temporal = c
	if err := waitForNamespace(dialCtx, c, cfg.TemporalNamespace); err != nil {
		return fmt.Errorf("TEMPORAL_NAMESPACE: namespace %q on %s is not available: %w", cfg.TemporalNamespace, address, err)
	}
	if err := workflows.EnsureSearchAttributes(ctx, c, cfg.TemporalNamespace); err != nil {
		// An external cluster may not let holdco manage its namespace; the
		// operator registers the attributes then.
		a.logger.Warn("could not register search attributes; register them on the cluster", "error", err, "attributes", workflows.SearchAttributes())
	}
	return nil
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

// listen binds addr, naming setting in the one-line error.
func listen(setting, addr string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%s: port %s is in use", setting, portOf(addr))
		}
		return nil, fmt.Errorf("%s: cannot listen on %s: %w", setting, addr, err)
	}
	return l, nil
}

func portOf(addr string) string {
	if _, p, err := net.SplitHostPort(addr); err == nil {
		return p
	}
	return addr
}
