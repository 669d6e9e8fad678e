package app

import (
	"context"
	"net/http"
	"net/http/pprof"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/interceptor"

	"holdco/observability"
	"holdco/observability/tracing"
	"holdco/providers/blob/local"
	"holdco/store"
)

// Option changes how Start builds a process.
type Option func(*App)

// WithTracerProvider makes the process's spans with tp (tests record them
// in memory) instead of the OTLP exporter OTEL_EXPORTER_OTLP_ENDPOINT
// configures.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(a *App) { a.tracer = tp }
}

// startObservability binds the metrics listener (HOLDCO_METRICS_ADDR),
// binds and serves the profiling listener (HOLDCO_PPROF_ADDR) and makes
// the tracer provider: the one given, the OTLP exporter when configured,
// or none.
func (a *App) startObservability(ctx context.Context) error {
	if addr := a.cfg.Observability.MetricsAddr; addr != "" {
		l, err := listen("metrics", "HOLDCO_METRICS_ADDR", addr)
		if err != nil {
			return err
		}
		a.metrics = l
	}
	if addr := a.cfg.Observability.PprofAddr; addr != "" {
		l, err := listen("pprof", "HOLDCO_PPROF_ADDR", addr)
		if err != nil {
			return err
		}
		// Served at once: the start itself may be what is profiled.
		a.pprof = l
		a.pprof.serve(pprofHandler(), a.serveErr)
	}
	if a.tracer == nil && a.cfg.Observability.OTLPEndpoint != "" {
		names := make([]string, len(a.roles))
		for i, r := range a.roles {
			names[i] = string(r)
		}
		tp, err := tracing.NewOTLPProvider(ctx, a.cfg.Observability.OTLPEndpoint, attribute.String("holdco.roles", strings.Join(names, ",")))
		if err != nil {
			return err
		}
		a.tracer, a.stopTracing = tp, tp.Shutdown
	}
	return nil
}

// tracing reports whether the process makes spans.
func (a *App) tracing() bool { return a.tracer != nil }

// storeOptions open the process's store: its roles' pool, and a span per
// statement when the process traces.
func (a *App) storeOptions() []store.Option {
	opts := []store.Option{store.WithPool(dbPool(a.cfg.Database, a.roles))}
	if a.tracing() {
		opts = append(opts, store.WithTracerProvider(a.tracer))
	}
	return opts
}

// temporalInterceptors are the Temporal client's (and so its workers')
// interceptors: the tracing one when the process traces.
func (a *App) temporalInterceptors() ([]interceptor.ClientInterceptor, error) {
	if !a.tracing() {
		return nil, nil
	}
	i, err := tracing.TemporalInterceptor(a.tracer)
	if err != nil {
		return nil, err
	}
	return []interceptor.ClientInterceptor{i}, nil
}

// instrument wraps a role's listener handler: request metrics by route
// template and status class, and a server span per request when the
// process traces.
func (a *App) instrument(r Role, h http.Handler) http.Handler {
	var o observability.HTTPOptions
	if r == RoleSites {
		o.Route = sitesRoute
	}
	h = observability.MeasureHTTP(string(r), h, o)
	if a.tracing() {
		h = tracing.HTTP(string(r), h, a.tracer)
	}
	return h
}

// sitesRoute is the route label of the sites listener, which has no
// router: signed downloads, or a company's site (by handle or domain).
func sitesRoute(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, local.PathPrefix) {
		return local.PathPrefix + "{key...}"
	}
	return "/{site...}"
}

// serveMetrics serves /metrics once the process is up.
func (a *App) serveMetrics() {
	if a.metrics != nil {
		a.metrics.serve(observability.MetricsHandler(), a.serveErr)
	}
}

// pprofHandler serves net/http/pprof's pages under /debug/pprof/ on a mux
// of its own (never http.DefaultServeMux), 404 elsewhere.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// PprofAddr is the profiling listener's address; empty without
// HOLDCO_PPROF_ADDR.
func (a *App) PprofAddr() string {
	if a.pprof == nil {
		return ""
	}
	return a.pprof.addr()
}

// MetricsAddr is the metrics listener's address; empty without
// HOLDCO_METRICS_ADDR.
func (a *App) MetricsAddr() string {
	if a.metrics == nil {
		return ""
	}
	return a.metrics.addr()
}

// stopObservability closes the metrics and profiling listeners and
// flushes the spans still buffered.
func (a *App) stopObservability(ctx context.Context) {
	if a.metrics != nil {
		a.metrics.shutdown(ctx, a.logger)
	}
	if a.pprof != nil {
		a.pprof.shutdown(ctx, a.logger)
	}
	if a.stopTracing != nil {
		if err := a.stopTracing(ctx); err != nil {
			a.logger.Warn("trace exporter shutdown", "error", err)
		}
	}
}
