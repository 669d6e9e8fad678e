package analytics_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/analytics"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
)

type world struct {
	e       *servicetest.Env
	ctx     context.Context
	company models.Company
	key     string
	svc     *analytics.Service
}

func newWorld(t *testing.T, opts ...analytics.Options) world {
	t.Helper()
	var o usecases.Options
	if len(opts) > 0 {
		o.Analytics = opts[0]
	}
	e := servicetest.NewWith(t, o)
	// Mid-day, so a test's events stay on one UTC day.
	e.Clock.Advance(time.Until(time.Now().UTC().Truncate(24 * time.Hour).Add(36 * time.Hour)))
	ctx, cong := e.User(t, "site@example.com")
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Site Co"})
	require.NoError(t, err)
	key, err := e.Svc.Analytics.Key(ctx, c.ID)
	require.NoError(t, err)
	return world{e: e, ctx: ctx, company: c, key: key, svc: e.Svc.Analytics}
}

func event(key, id, name, url string, extra map[string]any) map[string]any {
	props := map[string]any{"$current_url": url, "$screen_width": 1280, "$screen_height": 800}
	for k, v := range extra {
		props[k] = v
	}
	return map[string]any{"api_key": key, "event": name, "distinct_id": id, "properties": props}
}

func (w world) capture(t *testing.T, body any, mod ...func(*analytics.CaptureInput)) analytics.CaptureResult {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	in := analytics.CaptureInput{Body: b, ContentType: "application/json", ClientIP: netip.MustParseAddr("8.8.8.8")}
	for _, m := range mod {
		m(&in)
	}
	res, err := w.svc.Capture(context.Background(), in)
	require.NoError(t, err)
	return res
}

func TestCaptureTakesEveryPostHogEncoding(t *testing.T) {
	w := newWorld(t)
	one := event(w.key, "v1", "$pageview", "https://site.example/", nil)
	batch := []any{event(w.key, "v1", "$pageview", "https://site.example/a", nil), event(w.key, "v2", "$pageview", "https://site.example/b", nil)}
	raw, _ := json.Marshal(batch)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(raw)
	require.NoError(t, zw.Close())

	assert.Equal(t, 1, w.capture(t, one).Accepted, "one event")
	assert.Equal(t, 2, w.capture(t, batch).Accepted, "an array")
	assert.Equal(t, 2, w.capture(t, map[string]any{"api_key": w.key, "batch": []any{
		map[string]any{"event": "$pageview", "distinct_id": "v3", "properties": map[string]any{"$current_url": "https://site.example/"}},
		map[string]any{"event": "signup", "distinct_id": 42, "properties": map[string]any{}}}}).Accepted, "{api_key, batch}; numeric distinct_id")
	for name, in := range map[string]analytics.CaptureInput{
		"gzip-js":     {Body: gz.Bytes(), ContentType: "text/plain", Compression: "gzip-js"},
		"gzip header": {Body: gz.Bytes(), ContentEncoding: "gzip"},
		"form base64": {Body: []byte("data=" + url.QueryEscape(base64.StdEncoding.EncodeToString(raw))), ContentType: "application/x-www-form-urlencoded"},
		"base64 body": {Body: []byte(base64.StdEncoding.EncodeToString(raw)), Compression: "base64"},
		"form gzip":   {Body: []byte("data=" + url.QueryEscape(gz.String()) + "&compression=gzip-js"), ContentType: "application/x-www-form-urlencoded"},
	} {
		res, err := w.svc.Capture(context.Background(), in)
		require.NoError(t, err, name)
		assert.Equal(t, 2, res.Accepted, name)
	}
	w.svc.Flush(context.Background())
	st := w.svc.Stats()
	assert.Equal(t, int64(15), st.Stored)
	assert.Zero(t, st.Malformed)
	assert.Zero(t, st.Queued)

	s, err := w.svc.Summary(w.ctx, w.company.ID, "1d")
	require.NoError(t, err)
	assert.Equal(t, float64(14), s.Pageviews.Value)
	assert.Equal(t, float64(4), s.Visitors.Value, "v1, v2, v3 and 42")
}

func TestCaptureDropsUnknownKeysAndMalformedEventsWithoutFailing(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		name string
		body []byte
	}{
		{"not json", []byte("{nope")},
		{"a number", []byte("42")},
		{"no event", []byte(`{"api_key":"` + w.key + `","distinct_id":"x"}`)},
		{"no distinct id", []byte(`{"api_key":"` + w.key + `","event":"$pageview"}`)},
		{"distinct id with a NUL", []byte(`{"api_key":"` + w.key + `","event":"$pageview","distinct_id":"a\u0000b"}`)},
		{"properties not an object", []byte(`{"api_key":"` + w.key + `","event":"$pageview","distinct_id":"x","properties":[1]}`)},
		{"bad timestamp", []byte(`{"api_key":"` + w.key + `","event":"$pageview","distinct_id":"x","timestamp":"yesterday"}`)},
		{"too old", []byte(`{"api_key":"` + w.key + `","event":"$pageview","distinct_id":"x","timestamp":"2001-01-01T00:00:00Z"}`)},
		{"lz64", nil},
		{"bad gzip", []byte{0x1f, 0x8b, 1, 2, 3}},
	}
	for _, c := range cases {
		in := analytics.CaptureInput{Body: c.body}
		if c.name == "lz64" {
			in = analytics.CaptureInput{Body: []byte("data=abc"), Compression: "lz64"}
		}
		res, err := w.svc.Capture(context.Background(), in)
		require.NoError(t, err, c.name)
		assert.Zero(t, res.Accepted, c.name)
	}
	assert.Equal(t, int64(len(cases)), w.svc.Stats().Malformed)

	for _, key := range []string{"hca_unknownunknownunknown000", "short", strings.Repeat("k", 65), ""} {
		assert.Zero(t, w.capture(t, event(key, "x", "$pageview", "https://site.example/", nil)).Accepted)
	}
	assert.Equal(t, int64(4), w.svc.Stats().UnknownKey)

	assert.Zero(t, w.capture(t, event(w.key, "x", "$pageview", "https://site.example/", nil), func(in *analytics.CaptureInput) { in.DoNotTrack = true }).Accepted,
		"Do-Not-Track: nothing stored")

	// A batch mixing good and bad events keeps the good ones.
	assert.Equal(t, 1, w.capture(t, []any{event(w.key, "ok", "$pageview", "https://site.example/", nil), map[string]any{"api_key": w.key, "event": ""}}).Accepted)

	big := bytes.Repeat([]byte(" "), analytics.MaxDecodedBytes+10)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(big)
	require.NoError(t, zw.Close())
	_, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: gz.Bytes(), Compression: "gzip-js"})
	assert.True(t, models.IsCode(err, models.CodeTooLarge), "a gzip bomb is too_large: %v", err)
}

func TestCaptureAnswersQueueFullInsteadOfGrowing(t *testing.T) {
	w := newWorld(t, analytics.Options{QueueEvents: 3})
	batch := func(n int) []byte {
		out := make([]any, n)
		for i := range out {
			out[i] = event(w.key, fmt.Sprint(i), "$pageview", "https://site.example/", nil)
		}
		b, _ := json.Marshal(out)
		return b
	}
	// The writer is held before its first commit: the events of the
	// requests behind it wait in the queue.
	entered, release := make(chan struct{}, 8), make(chan struct{})
	analytics.HoldWriter(w.svc, func() { entered <- struct{}{}; <-release })
	results := make(chan error, 2)
	send := func() {
		_, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: batch(2)})
		results <- err
	}
	go send()
	<-entered // the first request's batch is being written
	go send()
	require.Eventually(t, func() bool { return w.svc.Stats().Queued == 2 }, 30*time.Second, time.Millisecond, "the second request waits in the queue")
	_, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: batch(2)})
	require.ErrorIs(t, err, analytics.ErrQueueFull, "all or none: 2 more do not fit in 3")
	assert.Equal(t, int64(2), w.svc.Stats().QueueFull)
	assert.Zero(t, w.svc.Stats().Stored, "nothing answered yet")
	close(release)
	require.NoError(t, <-results)
	require.NoError(t, <-results)
	st := w.svc.Stats()
	assert.Equal(t, int64(4), st.Stored, "each request answered once its events were stored")
	assert.Equal(t, int64(2), st.Commits, "the second request came while the first's batch was being written: two commits")
	assert.Positive(t, st.CommitTime, "the commits' time is counted")
	res, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: batch(2)})
	require.NoError(t, err)
	assert.Equal(t, 2, res.Accepted, "room again once written")

	// Stopping refuses more.
	w.svc.StopWriter(context.Background())
	assert.Equal(t, int64(6), w.svc.Stats().Stored)
	_, err = w.svc.Capture(context.Background(), analytics.CaptureInput{Body: batch(2)})
	require.ErrorIs(t, err, analytics.ErrStopped)
}

// Capture answers once its events are committed: nothing needs to run in
// the background, and an answered event is in the database.
func TestCaptureAnswersOnceStored(t *testing.T) {
	w := newWorld(t)
	w.capture(t, event(w.key, "bg", "$pageview", "https://site.example/", nil))
	assert.Equal(t, int64(1), w.svc.Stats().Stored)
	assert.Equal(t, 1, storedEvents(t, w.e.SQL)["bg"], "in the inbox or folded")
}

// storedEvents counts the stored events per visitor: the folded ones and
// those waiting in the inbox (an acknowledged event is in one of them).
func storedEvents(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	// Both tables from one snapshot: the fold moves events from the inbox
	// to analytics_events in one transaction, and two reads on their own
	// could fall on either side of it and miss what it moved.
	tx, err := db.BeginTx(context.Background(), &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	out := map[string]int{}
	rows, err := tx.Query("SELECT distinct_id FROM analytics_events")
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		out[id]++
	}
	require.NoError(t, rows.Err())
	inbox, err := tx.Query("SELECT data FROM analytics_inbox")
	require.NoError(t, err)
	defer inbox.Close()
	for inbox.Next() {
		var data []byte
		require.NoError(t, inbox.Scan(&data))
		events, err := store.DecodeAnalyticsInbox(data)
		require.NoError(t, err)
		for _, e := range events {
			out[e.DistinctID]++
		}
	}
	require.NoError(t, inbox.Err())
	return out
}

func totalOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// A process killed mid-flood (here: its database gone from under the
// writer, so nothing can drain) has stored every event it answered: an
// acknowledgement follows the commit.
func TestAcknowledgedEventsSurviveAnAbruptStop(t *testing.T) {
	w := newWorld(t)
	const workers, each = 8, 100 // within the default burst of one address
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				id := fmt.Sprintf("w%d-%d", i, j)
				b, _ := json.Marshal(event(w.key, id, "$pageview", "https://site.example/", nil))
				res, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: b, ClientIP: netip.MustParseAddr("8.8.8.8")})
				if err == nil && res.Accepted == 1 {
					mu.Lock()
					acked = append(acked, id)
					mu.Unlock()
				}
			}
		}()
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 100 }, 60*time.Second, time.Millisecond)
	require.NoError(t, w.e.Store.Close(), "the abrupt stop")
	wg.Wait()

	stored := storedEvents(t, w.e.SQL)
	mu.Lock()
	defer mu.Unlock()
	var lost []string
	for _, id := range acked {
		if stored[id] == 0 {
			lost = append(lost, id)
		}
	}
	assert.Zero(t, len(lost), "events answered as stored but missing, of %d acknowledged (first: %v)", len(acked), lost[:min(len(lost), 5)])
	t.Logf("%d acknowledged, %d stored, %d requests refused after the stop", len(acked), len(stored), workers*each-len(acked))
}

func TestCaptureLimitsEventsPerAddressAndPerKey(t *testing.T) {
	w := newWorld(t, analytics.Options{AddressRate: 5, KeyRate: 8}) // bursts of 50 and 80 events
	send := func(ip string, n int, key string) error {
		evs := make([]any, n)
		for i := range evs {
			evs[i] = event(key, ip+fmt.Sprint(i), "$pageview", "https://site.example/", nil)
		}
		b, _ := json.Marshal(evs)
		_, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: b, ClientIP: netip.MustParseAddr(ip)})
		return err
	}
	retryAfter := func(err error) int64 {
		t.Helper()
		require.True(t, models.IsCode(err, models.CodeRateLimited), "rate_limited: %v", err)
		var de *models.Error
		require.ErrorAs(t, err, &de)
		secs, ok := de.Extra["retry_after_seconds"].(int64)
		require.True(t, ok, "retry_after_seconds")
		return secs
	}
	for range 5 {
		require.NoError(t, send("8.8.8.8", 10, w.key))
	}
	err := send("8.8.8.8", 1, w.key)
	assert.Equal(t, int64(1), retryAfter(err), "one event comes back in 0.2 s")
	assert.Equal(t, int64(1), retryAfter(send("8.8.8.8", 1, "hca_unknownunknownunknown000")), "unknown keys count too (and the address is refused before decoding)")

	// Another address: its own bucket, until the key's is empty.
	require.NoError(t, send("1.1.1.1", 30, w.key))
	err = send("1.1.1.1", 1, w.key)
	assert.Contains(t, err.Error(), "this site", "the key's limit: 80 events")
	assert.GreaterOrEqual(t, retryAfter(err), int64(1))

	// Time refills both.
	w.e.Clock.Advance(2 * time.Second)
	require.NoError(t, send("8.8.8.8", 10, w.key))

	// An IPv6 client counts by its /64.
	w.e.Clock.Advance(time.Minute)
	require.NoError(t, send("2001:4860::1", 50, w.key))
	retryAfter(send("2001:4860::2", 1, w.key))

	assert.Equal(t, 140, totalOf(storedEvents(t, w.e.SQL)), "nothing over a limit is stored")
	assert.Positive(t, w.svc.Stats().RateLimited)
}

// One request carries at most MaxBatchEvents events: a larger batch
// passed a full bucket before (a request costs at most one burst), 60
// times the address's rate in one body. At the default rates a full
// batch is the address's whole burst.
func TestCaptureRefusesBatchesLargerThanMaxBatchEvents(t *testing.T) {
	w := newWorld(t, analytics.Options{AddressRate: 100, KeyRate: 1000}) // the defaults
	send := func(ip string, n int) error {
		evs := make([]any, n)
		for i := range evs {
			evs[i] = event(w.key, fmt.Sprint("v", i), "$pageview", "https://site.example/", nil)
		}
		b, _ := json.Marshal(map[string]any{"api_key": w.key, "batch": evs})
		_, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: b, ClientIP: netip.MustParseAddr(ip)})
		return err
	}
	err := send("8.8.8.8", analytics.MaxBatchEvents+1)
	require.True(t, models.IsCode(err, models.CodeTooLarge), "%v", err)
	assert.Contains(t, err.Error(), "at most 1000 events")
	require.NoError(t, send("8.8.8.8", analytics.MaxBatchEvents), "a full batch on a full bucket")
	assert.True(t, models.IsCode(send("8.8.8.8", 1), models.CodeRateLimited), "the batch took the address's burst")
	assert.Equal(t, analytics.MaxBatchEvents, totalOf(storedEvents(t, w.e.SQL)), "nothing of the refused batch is stored")

	// A full batch after an idle while, with one event owed to the
	// cluster's count from before, passes: it was refused once.
	w.e.Clock.Advance(20 * time.Second)
	require.NoError(t, send("8.8.8.8", 1))
	w.e.Clock.Advance(20 * time.Second)
	require.NoError(t, send("8.8.8.8", analytics.MaxBatchEvents), "a full bucket takes a full batch")
}

func TestUnknownCountryIsEmpty(t *testing.T) {
	w := newWorld(t)
	w.capture(t, event(w.key, "lan", "$pageview", "https://site.example/", nil), func(in *analytics.CaptureInput) { in.ClientIP = netip.MustParseAddr("10.1.2.3") })
	w.svc.Flush(context.Background())
	cs, err := w.svc.Countries(w.ctx, w.company.ID, "1d")
	require.NoError(t, err)
	require.Len(t, cs.Countries, 1)
	assert.Equal(t, analytics.Country{Country: "", Visitors: 1, Pageviews: 1}, cs.Countries[0], "unknown, not ZZ (the API's null)")
}

// Raw events past the retention go; the rollups, and so the reports, stay.
func TestPurgeRawEventsKeepsRollups(t *testing.T) {
	w := newWorld(t)
	clock := w.e.Clock
	now := clock.Now()
	clock.Advance(-20 * 24 * time.Hour)
	w.capture(t, event(w.key, "old", "$pageview", "https://site.example/", nil))
	clock.Advance(now.Sub(clock.Now()))
	w.capture(t, event(w.key, "new", "$pageview", "https://site.example/", nil))
	before, err := w.svc.Summary(w.ctx, w.company.ID, "30d")
	require.NoError(t, err)

	n, err := w.svc.PurgeRawEvents(context.Background(), 8)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	var ids []string
	rows, err := w.e.SQL.Query("SELECT distinct_id FROM analytics_events")
	require.NoError(t, err)
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Close())
	assert.Equal(t, []string{"new"}, ids)
	after, err := w.svc.Summary(w.ctx, w.company.ID, "30d")
	require.NoError(t, err)
	assert.Equal(t, before, after, "reports read rollups")
	assert.Equal(t, float64(2), after.Pageviews.Value)

	n, err = w.svc.PurgeRawEvents(context.Background(), 0)
	require.NoError(t, err)
	assert.Zero(t, n, "0 keeps everything")
}

func TestSummaryKPIsChangeAndTrend(t *testing.T) {
	w := newWorld(t)
	clock := w.e.Clock
	today := clock.Now().UTC().Truncate(24 * time.Hour)
	at := func(t0 time.Time) func(*analytics.CaptureInput) {
		return func(*analytics.CaptureInput) { clock.Advance(t0.Sub(clock.Now())) }
	}
	// Yesterday: one visitor, one page view (a bounce).
	y := today.Add(-24 * time.Hour).Add(10 * time.Hour)
	w.capture(t, event(w.key, "old", "$pageview", "https://site.example/", map[string]any{"$referrer": "https://news.example/x"}), at(y))
	// Today, 10:00: a visits /, then /pricing 5 minutes later (one session
	// of 300 s, no bounce), comes back at 11:00 on / (a new session, a
	// bounce). b lands on /pricing from search, once (a bounce).
	t0 := today.Add(10 * time.Hour)
	w.capture(t, event(w.key, "a", "$pageview", "https://site.example/?utm_source=mail", map[string]any{"$referrer": "https://news.example/x"}), at(t0))
	w.capture(t, event(w.key, "a", "$pageview", "https://site.example/pricing", map[string]any{"$referrer": "https://site.example/"}), at(t0.Add(5*time.Minute)))
	w.capture(t, event(w.key, "a", "$pageview", "https://site.example/", map[string]any{"$referrer": "$direct"}), at(t0.Add(60*time.Minute)))
	w.capture(t, event(w.key, "b", "$pageview", "https://site.example/pricing", map[string]any{"$referring_domain": "www.search.example"}), at(t0.Add(61*time.Minute)))
	w.svc.Flush(context.Background())

	s, err := w.svc.Summary(w.ctx, w.company.ID, "1d")
	require.NoError(t, err)
	assert.Equal(t, w.key, s.Key)
	assert.Equal(t, "http://holdco.test/analytics/v1.js?c="+w.key, s.LoaderURL)
	assert.Equal(t, float64(2), s.Visitors.Value)
	assert.Equal(t, float64(4), s.Pageviews.Value)
	assert.Equal(t, float64(1), s.Pageviews.Previous)
	require.NotNil(t, s.Pageviews.Change)
	assert.InDelta(t, 300, *s.Pageviews.Change, 1e-9, "4 vs 1 is +300%")
	assert.Equal(t, float64(3), s.Sessions.Value)
	assert.InDelta(t, 200.0/3, s.BounceRate.Value, 1e-9)
	assert.Equal(t, float64(100), s.BounceRate.Previous)
	assert.InDelta(t, 100, s.AvgSessionSecs.Value, 1e-9, "300 s over 3 sessions")
	assert.Equal(t, "hour", s.TrendStep)
	require.Len(t, s.Trend, 24)
	assert.Equal(t, int64(1), s.Trend[10].Visitors)
	assert.Equal(t, int64(2), s.Trend[10].Pageviews)
	assert.Equal(t, int64(2), s.Trend[11].Visitors)
	require.Len(t, s.TopPages, 2)
	assert.Equal(t, "/", s.TopPages[0].Name)
	assert.Equal(t, float64(2), s.TopPages[0].Pageviews.Value)
	assert.Equal(t, float64(1), s.TopPages[0].Pageviews.Previous)
	names := map[string]float64{}
	for _, r := range s.TopReferrers {
		names[r.Name] = r.Pageviews.Value
	}
	assert.Equal(t, map[string]float64{"news.example": 1, "search.example": 1, "": 1}, names, "the site itself is not a referrer")

	s7, err := w.svc.Summary(w.ctx, w.company.ID, "")
	require.NoError(t, err)
	assert.Equal(t, "30d", s7.Range)
	assert.Equal(t, "day", s7.TrendStep)
	require.Len(t, s7.Trend, 30)
	assert.Equal(t, float64(3), s7.Visitors.Value, "old, a and b")
	assert.Nil(t, s7.Visitors.Change, "nothing in the period before")
	assert.Equal(t, int64(2), s7.Trend[29].Visitors)
	assert.Equal(t, int64(1), s7.Trend[28].Visitors)

	cs, err := w.svc.Countries(w.ctx, w.company.ID, "7d")
	require.NoError(t, err)
	require.Len(t, cs.Countries, 1)
	assert.Equal(t, analytics.Country{Country: "US", Visitors: 3, Pageviews: 5}, cs.Countries[0])

	d, err := w.e.Svc.Dashboard(w.ctx, w.company.ID)
	require.NoError(t, err)
	require.NotNil(t, d.Analytics)
	assert.Equal(t, float64(5), d.Analytics.Pageviews.Value)
	assert.Equal(t, float64(4), d.Analytics.Sessions.Value)

	out, err := w.e.Svc.Tools.Call(w.ctx, w.company.ID, "get_analytics", json.RawMessage(`{"range":"1d"}`))
	require.NoError(t, err)
	var rep map[string]any
	require.NoError(t, json.Unmarshal(out, &rep))
	assert.Equal(t, float64(4), rep["pageviews"].(map[string]any)["value"], "the tool reads the same summary")
	assert.Equal(t, "US", rep["countries"].([]any)[0].(map[string]any)["country"])
}

func TestReportsCheckRangeAndOwner(t *testing.T) {
	w := newWorld(t)
	for _, r := range []string{"2d", "30", "all", "1D"} {
		_, err := w.svc.Summary(w.ctx, w.company.ID, r)
		assert.True(t, models.IsCode(err, models.CodeBadRequest), r)
		_, err = w.svc.Countries(w.ctx, w.company.ID, r)
		assert.True(t, models.IsCode(err, models.CodeBadRequest), r)
	}
	bob, _ := w.e.User(t, "bob@example.com")
	_, err := w.svc.Summary(bob, w.company.ID, "7d")
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = w.svc.Countries(w.ctx, uuid.NewString(), "7d")
	assert.True(t, models.IsCode(err, models.CodeNotFound))
}

func TestLoaderScripts(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	s, err := w.svc.Loader(ctx, w.key)
	require.NoError(t, err)
	body := string(s.Body)
	assert.Contains(t, body, `"`+w.key+`"`)
	assert.Contains(t, body, `"http://holdco.test/analytics/e/"`)
	assert.Contains(t, body, "doNotTrack")
	assert.Less(t, len(body), 4096, "small")
	again, _ := w.svc.Loader(ctx, w.key)
	assert.Equal(t, s.ETag, again.ETag)

	byHandle, err := w.svc.LoaderByHandle(ctx, w.company.Handle)
	require.NoError(t, err)
	assert.Equal(t, s, byHandle, "the beacon snippet is the same loader")

	unknown, err := w.svc.Loader(ctx, "hca_doesnotexist00000000000")
	require.NoError(t, err)
	assert.Contains(t, string(unknown.Body), `var key = ""`)
	noHandle, err := w.svc.LoaderByHandle(ctx, "no-such-company")
	require.NoError(t, err)
	assert.Equal(t, unknown, noHandle, "an unknown key and an unknown handle look alike")

	_, err = w.svc.Loader(ctx, "short")
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = w.svc.LoaderByHandle(ctx, strings.Repeat("h", 65))
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
}

// The period before a 30-day range is closed (no event can still arrive
// for it): its distinct visitors are counted once and kept.
func TestClosedPeriodVisitorsAreCountedOnce(t *testing.T) {
	w := newWorld(t)
	clock := w.e.Clock
	now := clock.Now()
	for i, ago := range []int{40, 39, 35} { // "p" twice, "q" once, all in the previous period
		clock.Advance(now.AddDate(0, 0, -ago).Sub(clock.Now()))
		w.capture(t, event(w.key, []string{"p", "p", "q"}[i], "$pageview", "https://site.example/", nil))
	}
	clock.Advance(now.Sub(clock.Now()))
	w.capture(t, event(w.key, "p", "$pageview", "https://site.example/", nil))
	w.svc.Flush(context.Background())
	for range 2 {
		s, err := w.svc.Summary(w.ctx, w.company.ID, "30d")
		require.NoError(t, err)
		assert.Equal(t, float64(1), s.Visitors.Value)
		assert.Equal(t, float64(2), s.Visitors.Previous, "p and q, each once")
		require.NotNil(t, s.Visitors.Change)
		assert.InDelta(t, -50, *s.Visitors.Change, 1e-9)
	}
	var kept int64
	require.NoError(t, w.e.SQL.QueryRow("SELECT COUNT(*) FROM analytics_period_visitors").Scan(&kept))
	assert.Equal(t, int64(1), kept)
}

// retryAfterSeconds is a rate_limited error's retry_after_seconds.
func retryAfterSeconds(t *testing.T, err error) int64 {
	t.Helper()
	require.True(t, models.IsCode(err, models.CodeRateLimited), "rate_limited: %v", err)
	var de *models.Error
	require.ErrorAs(t, err, &de)
	secs, ok := de.Extra["retry_after_seconds"].(int64)
	require.True(t, ok, "retry_after_seconds")
	return secs
}

// sendOne captures one page view for key from ip through p.
func sendOne(p *analytics.Service, key, ip string) error {
	b, _ := json.Marshal(event(key, "v-"+ip, "$pageview", "https://site.example/", nil))
	_, err := p.Capture(context.Background(), analytics.CaptureInput{Body: b, ClientIP: netip.MustParseAddr(ip)})
	return err
}

// Two processes (two analytics services on one database): one address and
// one key are counted once for both, not once each, give or take one chunk
// (a second of the rate) per process; a refusal says when to retry; the
// database is charged at most once per half chunk, not per event, and a
// client sending less than half a chunk never touches it.
func TestCaptureLimitIsCountedOnceAcrossProcesses(t *testing.T) {
	opts := analytics.Options{AddressRate: 10, KeyRate: 30} // bursts of 100 and 300 events, chunks of 10 and 30
	w := newWorld(t, opts)
	procs := []*analytics.Service{w.svc, w.e.NewServices(t, usecases.Options{Analytics: opts}).Analytics}
	charges := func() (address, key int64) {
		for _, p := range procs {
			a, k := analytics.SharedCharges(p)
			address, key = address+a, key+k
		}
		return address, key
	}

	// One address, one event a request, alternately through the two.
	accepted := 0
	var refused error
	for i := range 300 {
		switch err := sendOne(procs[i%2], w.key, "8.8.8.8"); {
		case err == nil:
			accepted++
		default:
			refused = err
		}
	}
	assert.GreaterOrEqual(t, accepted, 100, "the burst is admitted")
	assert.LessOrEqual(t, accepted, 100+2*10, "once for both processes (each one process's burst: 200 before)")
	secs := retryAfterSeconds(t, refused)
	assert.True(t, secs >= 1 && secs <= 2, "retry when a chunk is back (~1.1 s): %d", secs)
	addrCharges, _ := charges()
	assert.LessOrEqual(t, addrCharges, int64(accepted/5+4), "a transaction per half chunk at most, none per refused event")

	// Time refills the shared bucket for both: 3 s is 30 more.
	w.e.Clock.Advance(3 * time.Second)
	for i := range 100 {
		if sendOne(procs[i%2], w.key, "8.8.8.8") == nil {
			accepted++
		}
	}
	assert.GreaterOrEqual(t, accepted, 130)
	assert.LessOrEqual(t, accepted, 130+2*10)

	// One key from many addresses (one event each): the key's burst of 300
	// once for both; the addresses stay below half a chunk and are never
	// charged.
	ctx, cong := w.e.User(t, "second@example.com")
	c, err := w.e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Second Site"})
	require.NoError(t, err)
	key, err := w.e.Svc.Analytics.Key(ctx, c.ID)
	require.NoError(t, err)
	byKey := 0
	addrBefore, keyBefore := charges()
	for i := range 700 {
		switch err := sendOne(procs[i%2], key, fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)); {
		case err == nil:
			byKey++
		default:
			refused = err
		}
	}
	assert.GreaterOrEqual(t, byKey, 300)
	assert.LessOrEqual(t, byKey, 300+2*30, "once for both processes (600 before)")
	assert.Contains(t, refused.Error(), "this site")
	assert.GreaterOrEqual(t, retryAfterSeconds(t, refused), int64(1))
	addrAfter, keyCharges := charges()
	assert.Equal(t, addrBefore, addrAfter, "an address sending less than half a chunk is not charged")
	assert.LessOrEqual(t, keyCharges-keyBefore, int64(byKey/15+4))

	t.Logf("one address: %d admitted (%d charges); one key: %d admitted (%d charges)", accepted, addrAfter, byKey, keyCharges-keyBefore)

	assert.Equal(t, accepted+byKey, totalOf(storedEvents(t, w.e.SQL)), "every admitted event is stored, nothing refused")
}

// While the shared buckets cannot be read, capture counts in the process's
// memory (its own limit, answered 429 past it, never 500) and goes back to
// the shared bucket after the backoff.
func TestCaptureLimitFallsBackToTheProcessWhenTheDatabaseFails(t *testing.T) {
	w := newWorld(t, analytics.Options{AddressRate: 10, KeyRate: 1000}) // a burst of 100 a process, chunks of 10
	_, err := w.e.SQL.Exec("ALTER TABLE rate_buckets RENAME TO rate_buckets_away")
	require.NoError(t, err)
	accepted := 0
	for range 150 {
		err := sendOne(w.svc, w.key, "8.8.8.8")
		if err == nil {
			accepted++
			continue
		}
		retryAfterSeconds(t, err)
	}
	assert.Equal(t, 100, accepted, "the process's own burst")
	failed, _ := analytics.SharedCharges(w.svc)
	assert.Equal(t, int64(1), failed, "one failed charge, then memory only for the backoff")

	_, err = w.e.SQL.Exec("ALTER TABLE rate_buckets_away RENAME TO rate_buckets")
	require.NoError(t, err)
	w.e.Clock.Advance(6 * time.Second) // past the backoff; 60 events back
	accepted = 0
	for range 100 {
		if sendOne(w.svc, w.key, "8.8.8.8") == nil {
			accepted++
		}
	}
	assert.Equal(t, 60, accepted)
	charged, _ := analytics.SharedCharges(w.svc)
	assert.Greater(t, charged, failed, "charged to the shared bucket again")
	var rows int
	require.NoError(t, w.e.SQL.QueryRow("SELECT COUNT(*) FROM rate_buckets").Scan(&rows))
	assert.Positive(t, rows)
}

// Requests at once on two processes' flood guards (each on its own
// connection pool to one database) admit the shared burst once, give or
// take a chunk per process, whatever their interleaving.
func TestFloodGuardConcurrentRequestsOnTwoProcesses(t *testing.T) {
	st := testenv.NewReplicaStores(t, 2)
	guards := []*analytics.Limiter{analytics.NewSharedLimiter(20, st[0], "test/capture"), analytics.NewSharedLimiter(20, st[1], "test/capture")} // a burst of 200, chunks of 20
	now := time.Now().UTC()
	var (
		admitted atomic.Int64
		wg       sync.WaitGroup
	)
	for i := range 8 {
		wg.Go(func() {
			for j := range 60 {
				n := 1 + (i+j)%3
				ok, wait, err := guards[i%2].Take(context.Background(), "198.51.100.4", n, now)
				if !assert.NoError(t, err) {
					return
				}
				if ok {
					admitted.Add(int64(n))
				} else {
					assert.Positive(t, wait)
				}
			}
		})
	}
	wg.Wait()
	// 960 events asked for. A refused batch may have paid part of itself
	// (less than a batch of 3), kept for its retry.
	assert.GreaterOrEqual(t, admitted.Load(), int64(200-2*2))
	assert.LessOrEqual(t, admitted.Load(), int64(200+2*20), "once for both (each alone admits its burst: 400)")
}
