package api_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"holdco/api"
)

// BenchmarkHealth is the REST stack's floor: routing, middleware, huma and
// JSON for GET /health (dependency probes are cached).
func BenchmarkHealth(b *testing.B) {
	r := api.New(api.Deps{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Health: []api.HealthCheck{
		{Name: "database", Check: func(context.Context) error { return nil }},
	}})
	req := httptest.NewRequest(http.MethodGet, "/health", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkMeWithPAT is an authenticated request: the credential lookup is
// cached, so it costs about as much as /health plus the two row reads of
// the answer.
func BenchmarkMeWithPAT(b *testing.B) {
	w := newWorld(b)
	req := httptest.NewRequest(http.MethodGet, "/auth/me", nil)
	req.Header.Set("Authorization", "Bearer "+w.creds[pat])
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}
