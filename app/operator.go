package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"

	"holdco/config"
	"holdco/observability"
	"holdco/service/usecases"
	"holdco/store"
)

// Operator is what `holdco admin` commands run on: the configured
// database, the use cases an admin endpoint calls, and a client of the
// running Temporal cluster (or of the embedded server of a running
// `holdco serve`) when one answers. It binds no listener and runs no
// worker.
type Operator struct {
	a *App
	// Service are the domains' use cases (usecases.Domains).
	Service *usecases.Services
	// Temporal is nil when no Temporal server answered; use cases that
	// need it then answer so (health cannot check resources).
	Temporal client.Client
	// TemporalErr says why Temporal is nil.
	TemporalErr error
}

// operatorDialTimeout bounds the wait for Temporal: an operator's command
// should not hang on a server that is down.
const operatorDialTimeout = 5 * time.Second

// OpenOperator opens (and migrates) the store, dials Temporal and builds
// the use cases. Close releases them.
func OpenOperator(ctx context.Context, cfg config.Config, logger *slog.Logger) (_ *Operator, err error) {
	// The admin endpoints' use cases are the domains' (health and heal,
	// user sign-in, tasks, traces).
	a := &App{cfg: cfg, logger: logger, listeners: map[Role]*listener{}, serveErr: make(chan error, 1), parts: usecases.Domains}
	defer func() {
		if err != nil {
			a.stop(context.Background())
		}
	}()
	if a.Store, err = store.Open(ctx, cfg.Database.URL, logger); err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if err = a.Store.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("DATABASE_URL: migrate %s: %w", config.Redact(cfg.Database.URL), err)
	}
	op := &Operator{a: a}
	addr := cfg.Temporal.Address
	if cfg.Temporal.Embedded() {
		addr = net.JoinHostPort(cfg.Temporal.Host, strconv.Itoa(cfg.Temporal.Port))
	}
	dialCtx, cancel := context.WithTimeout(ctx, operatorDialTimeout)
	defer cancel()
	c, derr := client.DialContext(dialCtx, client.Options{HostPort: addr, Namespace: cfg.Temporal.Namespace,
		Logger: TemporalLogger(logger), MetricsHandler: observability.TemporalMetrics(), ConnectionOptions: temporalConnection(cfg.Temporal)})
	if derr != nil {
		op.TemporalErr = fmt.Errorf("temporal at %s does not answer: %w", addr, derr)
	} else {
		a.Temporal, op.Temporal = c, c
	}
	if op.Service, _, err = a.services(ctx, a.publicURL(), a.sitesURL()); err != nil {
		return nil, err
	}
	return op, nil
}

// Store is the operator's database.
func (o *Operator) Store() *store.Store { return o.a.Store }

// Close releases Temporal, the adapters and the store.
func (o *Operator) Close() { o.a.stop(context.Background()) }
