package analytics_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
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
	batch := func(n int) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = event(w.key, fmt.Sprint(i), "$pageview", "https://site.example/", nil)
		}
		return out
	}
	assert.Equal(t, 2, w.capture(t, batch(2)).Accepted)
	b, _ := json.Marshal(batch(2))
	_, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: b})
	require.ErrorIs(t, err, analytics.ErrQueueFull, "all or none: 2 more do not fit in 3")
	assert.Equal(t, int64(2), w.svc.Stats().QueueFull)
	w.svc.Flush(context.Background())
	assert.Equal(t, 2, w.capture(t, batch(2)).Accepted, "room again once written")

	// Stopping drains the queue and refuses more.
	w.svc.StopWriter(context.Background())
	assert.Equal(t, int64(4), w.svc.Stats().Stored)
	_, err = w.svc.Capture(context.Background(), analytics.CaptureInput{Body: b})
	require.ErrorIs(t, err, analytics.ErrStopped)
}

func TestWriterFlushesInTheBackground(t *testing.T) {
	w := newWorld(t, analytics.Options{FlushEvery: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.svc.RunWriter(ctx) }()
	w.capture(t, event(w.key, "bg", "$pageview", "https://site.example/", nil))
	require.Eventually(t, func() bool { return w.svc.Stats().Stored == 1 }, testenv.EventualBound, 5*time.Millisecond)
	cancel()
	<-done
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
