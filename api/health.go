package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"regexp"
	"sync"
	"time"
)

// HealthCheck probes one dependency; nil means healthy.
type HealthCheck struct {
	Name  string
	Check func(ctx context.Context) error
}

// healthTTL bounds how often dependencies are probed however often
// /health is polled.
const (
	healthTTL     = time.Second
	healthTimeout = 2 * time.Second
)

type healthHandler struct {
	checks []HealthCheck
	logger *slog.Logger

	mu      sync.Mutex
	at      time.Time
	body    map[string]string
	healthy bool
}

func newHealthHandler(checks []HealthCheck, logger *slog.Logger) *healthHandler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &healthHandler{checks: checks, logger: logger}
}

type healthOutput struct {
	Status int
	Body   map[string]string
}

func (h *healthHandler) get(ctx context.Context, _ *struct{}) (*healthOutput, error) {
	body, healthy := h.result(ctx)
	status := http.StatusOK
	if !healthy {
		status = http.StatusServiceUnavailable
	}
	return &healthOutput{Status: status, Body: body}, nil
}

// HealthHandler answers GET /health for the listeners beside the REST API
// (the connector's, the authorization server's) exactly as the API does:
// the same body, and the same probes cached for healthTTL and shared by
// concurrent pollers, so polling them costs no more than polling the API.
func HealthHandler(checks []HealthCheck, logger *slog.Logger) http.Handler {
	h := newHealthHandler(checks, logger)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, healthy := h.result(r.Context())
		status := http.StatusOK
		if !healthy {
			status = http.StatusServiceUnavailable
		}
		b, _ := json.Marshal(body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
	})
}

// result returns the cached probe results, refreshing them when stale. The
// lock is held while probing so concurrent pollers share one probe.
func (h *healthHandler) result(ctx context.Context) (map[string]string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.body != nil && time.Since(h.at) < healthTTL {
		return h.body, h.healthy
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healthTimeout)
	defer cancel()
	body := map[string]string{"version": Version}
	healthy := true
	errs := make([]error, len(h.checks))
	var wg sync.WaitGroup
	for i, c := range h.checks {
		wg.Go(func() { errs[i] = c.Check(ctx) })
	}
	wg.Wait()
	for i, c := range h.checks {
		if errs[i] != nil {
			// /health is anonymous: a dependency's error names hosts, users
			// and databases, so callers see only that it is unavailable and
			// operators find the error in the log.
			body[c.Name] = "unavailable"
			healthy = false
			h.logger.WarnContext(ctx, "health check failed", "dependency", c.Name, "error", withoutURLPasswords(errs[i].Error()))
		} else {
			body[c.Name] = "ok"
		}
	}
	body["status"] = "ok"
	if !healthy {
		body["status"] = "degraded"
	}
	h.body, h.healthy, h.at = body, healthy, time.Now()
	return body, healthy
}

// urlPassword matches the password in a URL's user info.
var urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:/@\s]*):[^@/\s]*@`)

// withoutURLPasswords hides the password of any URL quoted in msg.
func withoutURLPasswords(msg string) string {
	return urlPassword.ReplaceAllString(msg, "${1}:xxxxx@")
}
