package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// Capture's inbox: events appended by several writers while several
// folders (replicas) fold in small steps are each folded exactly once,
// with every field as captured, and the rollups equal a recount.
func TestAnalyticsInboxFoldsEveryEventOnce(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	c, sc := newAnalyticsCompany(t, s)
	base := time.Date(2026, 6, 1, 22, 0, 0, 0, time.UTC)
	const writers, batches = 4, 12
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 11))
			for b := range batches {
				batch := make([]models.AnalyticsEvent, 1+r.IntN(9))
				for i := range batch {
					batch[i] = models.AnalyticsEvent{CompanyID: c.ID, At: base.Add(time.Duration(r.IntN(240))*time.Minute + 123456789),
						DistinctID: fmt.Sprintf("v%d", r.IntN(5)), Event: "$pageview", Path: fmt.Sprintf("/p%d/%d", w, b),
						Referrer: "news.example", UTMSource: "ü-src", UTMMedium: "mail", UTMCampaign: "spring", Country: "DE",
						ScreenWidth: 1280 + i, ScreenHeight: 720}
				}
				if err := s.Analytics().AppendAnalyticsInbox(ctx, batch); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	done := make(chan struct{})
	var folders sync.WaitGroup
	for range 2 {
		folders.Go(func() {
			for {
				if _, err := s.Analytics().FoldAnalyticsInbox(ctx, 7); err != nil {
					errs <- err
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	wg.Wait()
	close(done)
	folders.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for {
		res, err := s.Analytics().FoldAnalyticsInbox(ctx, 7)
		require.NoError(t, err)
		require.False(t, res.Busy)
		if res.Events == 0 {
			break
		}
	}
	raw, err := s.Analytics().AnalyticsRawEvents(ctx, sc, "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	perPath := map[string]int{}
	for _, e := range raw {
		perPath[e.Path]++
		assert.Equal(t, "ü-src", e.UTMSource)
		assert.Equal(t, "news.example", e.Referrer)
		assert.Equal(t, 720, e.ScreenHeight)
		assert.GreaterOrEqual(t, e.ScreenWidth, 1280)
		assert.Equal(t, e.At, e.At.Truncate(time.Millisecond), "times are cut to milliseconds")
	}
	// Each writer's batch b had its own path: every batch is there whole.
	assert.Len(t, perPath, writers*batches)
	got, err := s.Analytics().AnalyticsRollups(ctx, sc)
	require.NoError(t, err)
	require.Equal(t, recount(raw), comparable(got))
}

// A fold is one transaction: when it fails (here an unreadable row among
// the ones it took) nothing is folded and every row stays in the inbox.
func TestAnalyticsInboxFailedFoldKeepsItsRows(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	c, sc := newAnalyticsCompany(t, s)
	at := time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
	ev := models.AnalyticsEvent{CompanyID: c.ID, At: at, DistinctID: "v", Event: "$pageview", Path: "/"}
	require.NoError(t, s.Analytics().AppendAnalyticsInbox(ctx, []models.AnalyticsEvent{ev, ev}))
	require.NoError(t, store.GormDB(s).Exec("INSERT INTO analytics_inbox (events, data, created_at) VALUES (1, ?, ?)", []byte{9, 9}, at).Error)
	_, err := s.Analytics().FoldAnalyticsInbox(ctx, 100)
	require.Error(t, err)
	var left int64
	require.NoError(t, store.GormDB(s).Table("analytics_inbox").Count(&left).Error)
	assert.Equal(t, int64(2), left)
	raw, err := s.Analytics().AnalyticsRawEvents(ctx, sc, "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	assert.Empty(t, raw)

	// A fold that stops before the bad row folds the good one.
	res, err := s.Analytics().FoldAnalyticsInbox(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, 2, res.Events)
	raw, err = s.Analytics().AnalyticsRawEvents(ctx, sc, "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	assert.Len(t, raw, 2)
}

// A fold takes whole rows, about maxEvents events, and says whether rows
// were left: taking fewer than maxEvents does not mean the inbox is empty
// (the folder once stopped catching up after one pass for that reason).
func TestAnalyticsInboxFoldSaysWhetherRowsAreLeft(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	c, sc := newAnalyticsCompany(t, s)
	at := time.Date(2026, 6, 2, 9, 0, 0, 0, time.UTC)
	for i := range 3 {
		ev := models.AnalyticsEvent{CompanyID: c.ID, At: at.Add(time.Duration(i) * time.Second), DistinctID: "v", Event: "$pageview", Path: "/"}
		require.NoError(t, s.Analytics().AppendAnalyticsInbox(ctx, []models.AnalyticsEvent{ev, ev, ev}))
	}
	for _, want := range []store.FoldResult{{Events: 3, More: true}, {Events: 3, More: true}, {Events: 3}, {}} {
		res, err := s.Analytics().FoldAnalyticsInbox(ctx, 5)
		require.NoError(t, err)
		assert.Equal(t, want, res)
	}
	res, err := s.Analytics().FoldAnalyticsInbox(ctx, 100)
	require.NoError(t, err)
	assert.Equal(t, store.FoldResult{}, res)
	raw, err := s.Analytics().AnalyticsRawEvents(ctx, sc, "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	assert.Len(t, raw, 9)
}

// BenchmarkAppendAnalyticsInbox is capture's acknowledged write: one row
// of 64 page views (what wrk -c64 of single events gives a commit).
// go test -run '^$' -bench AppendAnalyticsInbox ./store/
func BenchmarkAppendAnalyticsInbox(b *testing.B) {
	s := testenv.NewStore(b)
	c, _ := newAnalyticsCompany(b, s)
	events := make([]models.AnalyticsEvent, 64)
	at := time.Now().UTC()
	for i := range events {
		events[i] = models.AnalyticsEvent{CompanyID: c.ID, At: at, DistinctID: fmt.Sprintf("v%d", i*7919%10000), Event: "$pageview",
			Path: fmt.Sprintf("/p%d", i%20), Referrer: "news.example"}
	}
	for b.Loop() {
		if err := s.Analytics().AppendAnalyticsInbox(context.Background(), events); err != nil {
			b.Fatal(err)
		}
	}
}
