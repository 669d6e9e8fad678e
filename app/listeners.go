package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"holdco/api"
	"holdco/config"
	"holdco/internal/httpfront"
	"holdco/models"
	"holdco/observability"
)

// listener is one role's HTTP listener. It is bound before anything slow
// starts, so a port clash is reported at once.
type listener struct {
	role    Role
	setting string // the variable its address comes from
	ln      net.Listener
	srv     *http.Server
	// bounds are the connection timeouts (HOLDCO_HTTP_*_TIMEOUT).
	bounds config.HTTP
	// front, when set, serves the listener's busiest requests (a site's
	// analytics) with a lean HTTP/1.1 loop ahead of srv
	// (internal/httpfront).
	front *httpfront.Server
	// frontRoute picks those requests (api.FrontRoute), frontMaxBody is
	// their longest body; nil: net/http serves everything.
	frontRoute   func(method, path string) bool
	frontMaxBody int64
	logger       *slog.Logger
}

// listen binds addr, naming setting in the one-line error.
func listen(role Role, setting, addr string) (*listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%s: port %s is in use", setting, portOf(addr))
		}
		return nil, fmt.Errorf("%s: cannot listen on %s: %w", setting, addr, err)
	}
	return &listener{role: role, setting: setting, ln: ln}, nil
}

func (l *listener) addr() string { return l.ln.Addr().String() }

// serve answers with h until shutdown; a failure is sent to errs.
func (l *listener) serve(h http.Handler, errs chan<- error) {
	l.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: l.bounds.ReadTimeout, WriteTimeout: l.bounds.WriteTimeout, IdleTimeout: l.bounds.IdleTimeout}
	serve := l.srv.Serve
	if l.frontRoute != nil {
		l.front = &httpfront.Server{HTTP: l.srv, Route: l.frontRoute, MaxBody: l.frontMaxBody, Logger: l.logger}
		l.front.OnServe, l.front.OnHandOff = observability.FrontCounters(string(l.role))
		serve = l.front.Serve
	}
	go func() {
		if err := serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			select {
			case errs <- fmt.Errorf("%s listener (%s): %w", l.role, l.setting, err):
			default:
			}
		}
	}()
}

// shutdown lets in-flight requests finish (up to ctx), or closes a
// listener that never served.
func (l *listener) shutdown(ctx context.Context, logger *slog.Logger) {
	if l.srv == nil {
		_ = l.ln.Close()
		return
	}
	shutdown := l.srv.Shutdown
	if l.front != nil {
		shutdown = l.front.Shutdown
	}
	if err := shutdown(ctx); err != nil {
		logger.Warn("listener shutdown", "role", l.role, "error", err)
	}
}

func portOf(addr string) string {
	if _, p, err := net.SplitHostPort(addr); err == nil {
		return p
	}
	return addr
}

// reservedHandler is what a listener serves before its adapter lands (the
// connector on mcp, the authorization server on oauth): GET /health with
// the REST API's body shape and cached probes (api.HealthHandler), and a
// JSON not_found for everything else.
func reservedHandler(checks []api.HealthCheck, logger *slog.Logger) http.Handler {
	health := api.HealthHandler(checks, logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/health" {
			writeJSON(w, http.StatusNotFound, map[string]string{
				"error":  string(models.CodeNotFound),
				"detail": "No route matches " + r.Method + " " + r.URL.Path + ".",
			})
			return
		}
		health.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
