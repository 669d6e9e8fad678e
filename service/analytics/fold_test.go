package analytics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/analytics"
	"holdco/service/usecases"
	"holdco/testenv"
)

// foldedPageviews is the page views today's rollup holds (what the
// reports read), read from the store without folding first.
func (w world) foldedPageviews(t *testing.T) int64 {
	t.Helper()
	day := models.DayOf(w.e.Clock.Now())
	sc, err := w.e.Store.SystemCompanyScope(context.Background(), w.company.ID)
	require.NoError(t, err)
	days, err := w.e.Store.Analytics().AnalyticsDays(context.Background(), sc, day, day)
	require.NoError(t, err)
	if len(days) == 0 {
		return 0
	}
	return days[0].Pageviews
}

// Acknowledged events reach the reports' rollups by themselves, without a
// report asking: the folder folds them after FoldDelay.
func TestFolderFoldsAcknowledgedEventsInTheBackground(t *testing.T) {
	w := newWorld(t, analytics.Options{FoldDelay: 10 * time.Millisecond})
	for i := range 3 {
		w.capture(t, event(w.key, fmt.Sprint("bg", i), "$pageview", "https://site.example/", nil))
	}
	require.Eventually(t, func() bool { return w.foldedPageviews(t) == 3 }, 30*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return w.svc.Stats().Unfolded == 0 }, 30*time.Second, 5*time.Millisecond)
	assert.Equal(t, int64(3), w.svc.Stats().Folded)
	assert.Empty(t, inboxRows(t, w))
}

func inboxRows(t *testing.T, w world) []int64 {
	t.Helper()
	rows, err := w.e.SQL.Query("SELECT id FROM analytics_inbox")
	require.NoError(t, err)
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	return ids
}

// A report reads the events acknowledged just before it (it folds them
// first), however long the folder would still gather.
func TestReportReadsTheEventsJustAcknowledged(t *testing.T) {
	w := newWorld(t, analytics.Options{FoldDelay: time.Hour})
	w.capture(t, event(w.key, "r1", "$pageview", "https://site.example/a", nil))
	w.capture(t, event(w.key, "r2", "$pageview", "https://site.example/b", nil))
	assert.Zero(t, w.foldedPageviews(t), "not folded yet")
	s, err := w.svc.Summary(w.ctx, w.company.ID, "1d")
	require.NoError(t, err)
	assert.Equal(t, float64(2), s.Pageviews.Value)
	assert.Equal(t, float64(2), s.Visitors.Value)
}

// When folding falls MaxUnfolded events behind, capture answers 503
// (queue full) instead of growing the inbox; once folded it takes events
// again.
func TestCaptureAnswersQueueFullWhileFoldingIsBehind(t *testing.T) {
	w := newWorld(t, analytics.Options{FoldDelay: time.Hour, FoldEvents: 100, MaxUnfolded: 3})
	for i := range 3 {
		w.capture(t, event(w.key, fmt.Sprint("q", i), "$pageview", "https://site.example/", nil))
	}
	b := []byte(fmt.Sprintf(`{"api_key":%q,"event":"$pageview","distinct_id":"q9","properties":{"$current_url":"https://site.example/"}}`, w.key))
	_, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: b})
	require.ErrorIs(t, err, analytics.ErrQueueFull)
	w.svc.Flush(context.Background())
	assert.Equal(t, int64(3), w.foldedPageviews(t))
	res, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: b})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Accepted)
}

// Inbox rows a stopped process left (acknowledged, never folded) are
// folded by the next process to start, and by the sweep of any replica.
func TestInboxLeftByAStoppedProcessIsFolded(t *testing.T) {
	w := newWorld(t)
	left := []models.AnalyticsEvent{{CompanyID: w.company.ID, At: w.e.Clock.Now(), DistinctID: "ghost", Event: "$pageview", Path: "/"}}
	require.NoError(t, w.e.Store.Analytics().AppendAnalyticsInbox(context.Background(), left))
	next := w.e.Replica(t).Analytics
	next.StartFolder()
	require.Eventually(t, func() bool { return w.foldedPageviews(t) == 1 }, 30*time.Second, 5*time.Millisecond)

	// The sweep's pass leaves a row young enough for a folder to take…
	require.NoError(t, w.e.Store.Analytics().AppendAnalyticsInbox(context.Background(), left))
	n, err := w.svc.FoldLeftovers(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n)
	// …and folds one that has waited past twice the lag.
	sweeper := w.e.NewServices(t, usecases.Options{Analytics: analytics.Options{FoldMaxLag: time.Millisecond}}).Analytics
	time.Sleep(5 * time.Millisecond)
	n, err = sweeper.FoldLeftovers(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.Equal(t, int64(2), w.foldedPageviews(t))
}

// During a flood (events acknowledged at FoldDeferRate or more) the folder
// leaves them in the inbox for up to FoldMaxLag after its last fold, then
// folds between the commits; what is left is folded once the flood ends.
func TestFolderDefersToASaturatedWriter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		maxLag time.Duration
	}{{"within the lag", time.Hour}, {"past the lag", 100 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			// The folder measures the rate over FoldDelay: 3 s, so that a
			// loaded machine's stall of the writer (no commit for a whole
			// window reads as the flood's end) does not fold mid-flood.
			w := newWorld(t, analytics.Options{FoldDelay: 3 * time.Second, FoldEvents: 4,
				FoldDeferRate: 1, FoldMaxLag: tc.maxLag})
			// Each commit takes 20 ms; four clients keep a batch waiting.
			analytics.HoldWriter(w.svc, func() { time.Sleep(20 * time.Millisecond) })
			var (
				stop  atomic.Bool
				wg    sync.WaitGroup
				acked atomic.Int64
			)
			for c := range 4 {
				wg.Go(func() {
					for i := 0; !stop.Load(); i++ {
						b := []byte(fmt.Sprintf(`{"api_key":%q,"event":"$pageview","distinct_id":"c%d-%d","properties":{"$current_url":"https://site.example/"}}`, w.key, c, i))
						if _, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: b}); err != nil {
							t.Error(err)
							return
						}
						acked.Add(1)
					}
				})
			}
			if tc.maxLag == time.Hour {
				require.Eventually(t, func() bool { return acked.Load() >= 100 }, 60*time.Second, time.Millisecond)
				assert.Zero(t, w.foldedPageviews(t), "nothing folded during the flood")
			} else {
				require.Eventually(t, func() bool { return w.foldedPageviews(t) > 0 }, 60*time.Second, time.Millisecond,
					"folded between the commits once the lag passed")
			}
			stop.Store(true)
			wg.Wait()
			// Four events a fold transaction: hundreds of them take a while
			// on a loaded machine.
			require.Eventually(t, func() bool { return w.foldedPageviews(t) == acked.Load() }, testenv.EventualBound, 5*time.Millisecond, "all folded after")
		})
	}
}

// Hostile fields (NUL, invalid UTF-8, over-long values, 200 four-byte
// characters) are dropped or cut at capture, so what is acknowledged always
// folds: no inbox row can block the ones after it.
func TestHostileFieldsFoldLikeAnyOther(t *testing.T) {
	w := newWorld(t, analytics.Options{FoldDelay: time.Hour})
	long := strings.Repeat("é", 400)
	emoji := strings.Repeat("😀", 200)
	for i, props := range []map[string]any{
		{"$pathname": "/a\x00b", "utm_source": "bad\xffutf8", "$referrer": "https://" + strings.Repeat("r", 300) + ".example/"},
		{"$pathname": "/" + long, "utm_campaign": long, "utm_medium": "\x1b[31m"},
		{"$current_url": "https://site.example/" + long + "?utm_source=" + long},
	} {
		w.capture(t, event(w.key, fmt.Sprint("h", i), "$pageview", "https://site.example/", props))
	}
	w.capture(t, event(w.key, emoji, "$pageview", "https://site.example/", nil))
	n, err := w.svc.FoldNow(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(4), n)
	assert.Equal(t, int64(4), w.foldedPageviews(t))
	assert.Empty(t, inboxRows(t, w))
}

// Catching up folds the whole inbox even when its rows do not add up to
// FoldEvents exactly: a pass takes whole rows, so one that took fewer
// than FoldEvents has not necessarily emptied the inbox (the folder once
// stopped after a single pass and left the rest for FoldMaxLag).
func TestFolderCatchingUpFoldsEveryRow(t *testing.T) {
	// The folder itself waits an hour: only CatchUp folds here.
	w := newWorld(t, analytics.Options{FoldEvents: 5, FoldDelay: time.Hour, FoldDeferRate: 1, FoldMaxLag: time.Hour})
	for i := range 4 { // four rows of three events
		w.capture(t, map[string]any{"api_key": w.key, "batch": []any{
			event(w.key, fmt.Sprint("cu", i), "$pageview", "https://site.example/a", nil),
			event(w.key, fmt.Sprint("cu", i), "$pageview", "https://site.example/b", nil),
			event(w.key, fmt.Sprint("cu", i), "$pageview", "https://site.example/c", nil)}})
	}
	require.Len(t, inboxRows(t, w), 4)
	require.NoError(t, analytics.CatchUp(w.svc))
	assert.Empty(t, inboxRows(t, w))
	assert.Equal(t, int64(12), w.foldedPageviews(t))
	assert.Equal(t, int64(12), w.svc.Stats().Folded)
}

// While capture's writer commits, the catching-up fold takes passes of a
// quarter of FoldEvents and pauses after each (capture keeps about half
// of the write lock); otherwise, and for a report's or the sweep's fold,
// passes are FoldEvents.
func TestCatchingUpFoldYieldsToABusyWriter(t *testing.T) {
	w := newWorld(t, analytics.Options{FoldEvents: 400, FoldDelay: time.Hour, FoldMaxLag: time.Hour})
	size, yields := analytics.PassSize(w.svc, true)
	assert.Equal(t, 400, size)
	assert.False(t, yields, "the writer is idle")

	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	analytics.HoldWriter(w.svc, func() { once.Do(func() { close(held) }); <-release })
	body, err := json.Marshal(event(w.key, "busy", "$pageview", "https://site.example/", nil))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := w.svc.Capture(context.Background(), analytics.CaptureInput{Body: body, ContentType: "application/json", ClientIP: netip.MustParseAddr("8.8.8.8")})
		done <- err
	}()
	<-held
	size, yields = analytics.PassSize(w.svc, true)
	assert.Equal(t, 100, size)
	assert.True(t, yields, "the writer is committing")
	size, yields = analytics.PassSize(w.svc, false)
	assert.Equal(t, 400, size)
	assert.False(t, yields, "a report's or the sweep's fold does not yield")
	close(release)
	require.NoError(t, <-done)
}
