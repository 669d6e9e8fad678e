package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"holdco/api"
	"holdco/models"
	"holdco/observability"
	"holdco/service/analytics"
	"holdco/service/usecases"
	"holdco/testenv"
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
	benchGET(b, w, "/auth/me")
}

// BenchmarkDashboardWithPAT is GET /companies/{id}/dashboard with a
// personal access token for a company with ten activity events, ten
// documents and three open tasks: the use case's statements plus the
// REST layer (huma's encoding of the answer).
func BenchmarkDashboardWithPAT(b *testing.B) {
	w, path := dashboardWorld(b)
	benchGET(b, w, path)
}

// BenchmarkDashboardWithPATParallel is the dashboard with 64 requests in
// flight, as wrk's connections send them (without the network): ns/op is
// the inverse of the throughput on this machine's cores, cpu-ns/op the
// process's CPU time per request.
func BenchmarkDashboardWithPATParallel(b *testing.B) {
	w, path := dashboardWorld(b)
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+w.creds[pat])
	b.SetParallelism(32) // 64 clients on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := httptest.NewRecorder()
			w.handler.ServeHTTP(rec, req.Clone(req.Context()))
			if rec.Code != http.StatusOK {
				b.Error(rec.Code, rec.Body.String())
				return
			}
		}
	})
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// dashboardWorld is a company with ten activity events, ten documents
// and three open tasks, and the path of its dashboard.
func dashboardWorld(b *testing.B) (*world, string) {
	st, db, style := testenv.NewStoreAndSQL(b)
	w := newWorldOn(b, st, usecases.Options{})
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	var events, docs [][]any
	for i := range 10 {
		at := start.Add(time.Duration(i) * time.Minute)
		id, _ := uuid.NewV7()
		events = append(events, []any{id.String(), w.adaCo, string(models.ActivityDocumentUpdated), "user", fmt.Sprintf("event %d", i), "", "{}", at})
		docs = append(docs, []any{w.adaCo, fmt.Sprintf("doc-%05d", i), "Doc", "content", "visible", 7, 1, "user", at, at})
	}
	testenv.BulkInsert(b, db, style, "activity_events",
		[]string{"id", "company_id", "kind", "actor", "summary", "subject", "data", "created_at"}, events)
	testenv.BulkInsert(b, db, style, "company_documents",
		[]string{"company_id", "document_type", "title", "content", "visibility", "size_bytes", "revision", "updated_by", "created_at", "updated_at"}, docs)
	for i := range 3 {
		w.call(http.MethodPost, "/companies/"+w.adaCo+"/tasks", pat, fmt.Sprintf(`{"title":"task %d"}`, i), http.StatusCreated, nil)
	}
	return w, "/companies/" + w.adaCo + "/dashboard"
}

// benchGET measures GET path with the personal access token, each answer
// 200, one request at a time: ns/op is mostly the round trip to a
// database server; cpu-ns/op is this process's CPU time per request (on
// Postgres, without the server's), the figure to compare.
func benchGET(b *testing.B, w *world, path string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+w.creds[pat])
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		rec := httptest.NewRecorder()
		w.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkCapture is POST /analytics/e/ with one page view as the loader
// sends it (scripts/benchanalytics/event.lua), through the listener's
// metrics middleware and the router, 64 requests in flight (wrk -c64
// without the network; the flood guard off, as in make bench). Each
// answer 200 follows its inbox commit, so ns/op is the inverse of the
// throughput on this machine's cores and allocs/op include the writer's
// share per request; cpu-ns/op is the process's CPU time (user and
// system, every goroutine: handler, writer, SQLite) per request, the
// figure wrk's rate depends on once the cores are busy. The request is
// built by hand (not httptest.NewRequest) so that the harness costs
// little.
// go test -run '^$' -bench 'Capture$' -benchmem -cpuprofile cpu.out ./api/
func BenchmarkCapture(b *testing.B) {
	w := newWorldWith(b, usecases.Options{Analytics: analytics.Options{AddressRate: -1, KeyRate: -1}})
	key := w.analyticsKey()
	h := observability.MeasureHTTP("api", w.handler, observability.HTTPOptions{})
	bodies := make([][]byte, 1000)
	for i := range bodies {
		bodies[i] = fmt.Appendf(nil, `{"event":"$pageview","distinct_id":"v%d","properties":{"token":"%s","$current_url":"https://shop.example/p%d","$referrer":"https://news.example/"}}`,
			rand.IntN(10000)+1, key, rand.IntN(20)+1)
	}
	target, _ := url.Parse("http://holdco.test/analytics/e/")
	b.SetParallelism(32) // 64 clients on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for i := rand.IntN(len(bodies)); pb.Next(); i = (i + 1) % len(bodies) {
			req := (&http.Request{Method: http.MethodPost, URL: target, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: target.Host,
				Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(bodies[i])),
				ContentLength: int64(len(bodies[i])), RemoteAddr: "8.8.8.8:40000"}).WithContext(context.Background())
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Error(rec.Code, rec.Body.String())
				return
			}
		}
	})
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time the process used so far (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
