package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"holdco/api"
	"holdco/models"
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
	benchGET(b, w, "/companies/"+w.adaCo+"/dashboard")
}

// benchGET measures GET path with the personal access token, each answer
// 200.
func benchGET(b *testing.B, w *world, path string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
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
