package api

import (
	"context"
	"net/http"
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

	mu      sync.Mutex
	at      time.Time
	body    map[string]string
	healthy bool
}

func newHealthHandler(checks []HealthCheck) *healthHandler {
	return &healthHandler{checks: checks}
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
			body[c.Name] = "error: " + errs[i].Error()
			healthy = false
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
