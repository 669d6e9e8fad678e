package analytics_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/analytics"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/service/usecases"
)

// BenchmarkRecordEvents stores batches of page views with their rollups
// (multi-row INSERT on SQLite, COPY on Postgres with TEST_DATABASE_URL):
// 1,000 visitors browsing a site, in time order. The 64-event batch is
// what wrk -c64 of single events gives the writer (one commit per round).
// go test -run '^$' -bench RecordEvents ./service/analytics/
func BenchmarkRecordEvents(b *testing.B) {
	for _, batch := range []int{64, 500, 5000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			e := servicetest.New(b)
			ctx, cong := e.User(b, "bench@example.com")
			c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Bench"})
			require.NoError(b, err)
			at := time.Now().UTC().Add(-time.Hour)
			r := rand.New(rand.NewPCG(1, 2))
			events := make([]models.AnalyticsEvent, batch)
			n := 0
			for b.Loop() {
				for i := range events {
					at = at.Add(time.Millisecond)
					events[i] = models.AnalyticsEvent{CompanyID: c.ID, At: at, DistinctID: "v" + strconv.Itoa(r.IntN(1000)), Event: "$pageview",
						Path: "/p" + strconv.Itoa(r.IntN(20)), Referrer: "", Country: "US"}
				}
				if err := e.Store.Analytics().RecordAnalyticsEvents(context.Background(), events); err != nil {
					b.Fatal(err)
				}
				n += batch
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkSummaryOverManyEvents reads the 90-day summary (and the 1-day
// one) of a company with HOLDCO_BENCH_EVENTS stored events (default
// 1,000,000; docs/benchmarks.md has 10,000,000) spread over the 180 days
// the 90-day summary and its previous period cover: ~55k events a day
// from ~11k visitor-days, 200k distinct visitors. The events go through
// the writer's path (RecordAnalyticsEvents) in time order.
// HOLDCO_BENCH_EVENTS=10000000 go test -run '^$' -bench SummaryOverManyEvents -benchtime 20x -timeout 2h ./service/analytics/
func BenchmarkSummaryOverManyEvents(b *testing.B) {
	total := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("HOLDCO_BENCH_EVENTS")); err == nil && v > 0 {
		total = v
	}
	e := servicetest.New(b)
	ctx, cong := e.User(b, "bench@example.com")
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Bench"})
	require.NoError(b, err)
	now := e.Clock.Now().UTC()
	first := now.Truncate(24*time.Hour).AddDate(0, 0, -179)
	const days = 180
	perDay := total / days
	r := rand.New(rand.NewPCG(3, 4))
	seedStart := time.Now()
	batch := make([]models.AnalyticsEvent, 0, 50_000)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if err := e.Store.Analytics().RecordAnalyticsEvents(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
	}
	for d := range days {
		day := first.AddDate(0, 0, d)
		// A visitor-day is 5 events a few minutes apart; visitors start
		// through the day, in time order.
		step := 24 * time.Hour / time.Duration(perDay)
		for i := range perDay {
			at := day.Add(time.Duration(i) * step)
			if at.After(now) {
				break
			}
			batch = append(batch, models.AnalyticsEvent{CompanyID: c.ID, At: at,
				DistinctID: "v" + strconv.Itoa((d*perDay/5+i/5)%200_000), Event: "$pageview",
				Path: "/p" + strconv.Itoa(r.IntN(50)), Referrer: []string{"", "-", "news.example", "search.example"}[r.IntN(4)],
				Country: []string{"US", "DE", "FR", "GB"}[r.IntN(4)]})
			if len(batch) == cap(batch) {
				flush()
			}
		}
	}
	flush()
	b.Logf("seeded %d events in %s", total, time.Since(seedStart).Round(time.Second))
	for _, rng := range []string{"90d", "1d"} {
		b.Run("range="+rng, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := e.Svc.Analytics.Summary(ctx, c.ID, rng); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100].Milliseconds()), "p99-ms")
		})
	}
}

// BenchmarkCaptureClosedLoop is wrk -c64 without HTTP: 64 clients, each
// sending one page view (a JSON body, as the loader does) and the next
// once it is answered (stored), b.N requests in all. Its events/s is
// capture's rate through the use case and the group commit, its CPU
// profile where a request's time goes outside the HTTP stack.
// go test -run '^$' -bench CaptureClosedLoop -benchtime 20000x ./service/analytics/
func BenchmarkCaptureClosedLoop(b *testing.B) {
	const clients = 64
	e := servicetest.NewWith(b, usecases.Options{Analytics: analytics.Options{AddressRate: -1, KeyRate: -1}})
	ctx, cong := e.User(b, "bench@example.com")
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Bench"})
	require.NoError(b, err)
	key, err := e.Svc.Analytics.Key(ctx, c.ID)
	require.NoError(b, err)
	bodies := make([][]byte, 1000)
	for i := range bodies {
		bodies[i] = fmt.Appendf(nil, `{"event":"$pageview","distinct_id":"v%d","properties":{"token":"%s","$current_url":"https://shop.example/p%d","$referrer":"https://news.example/"}}`,
			rand.IntN(10000), key, rand.IntN(20))
	}
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				_, err := e.Svc.Analytics.Capture(context.Background(), analytics.CaptureInput{Body: bodies[i%int64(len(bodies))],
					ContentType: "application/json", ClientIP: netip.MustParseAddr("8.8.8.8")})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
