package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"holdco/models"
)

// The inbox's encoding gives back every field it was given (times in
// milliseconds), and cut or damaged data is an error, never a panic.
func TestInboxEncodingRoundTrips(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 20).Draw(rt, "n")
		events := make([]models.AnalyticsEvent, n)
		// Each string is new or, as in a real commit, the event before's.
		str := rapid.StringN(0, 300, -1)
		field := func(i int, prev *string, label string) string {
			if i > 0 && rapid.Bool().Draw(rt, label+" repeated") {
				return *prev
			}
			return str.Draw(rt, label)
		}
		for i := range events {
			var p models.AnalyticsEvent
			if i > 0 {
				p = events[i-1]
			}
			e := &events[i]
			for k, f := range inboxFields(e) {
				*f = field(i, inboxFields(&p)[k], "field")
			}
			e.At = time.UnixMilli(rapid.Int64Range(0, 1<<45).Draw(rt, "ms")).UTC()
			e.ScreenWidth, e.ScreenHeight = rapid.IntRange(0, 100_000).Draw(rt, "w"), rapid.IntRange(0, 100_000).Draw(rt, "h")
		}
		data := encodeInbox(events)
		got, err := decodeInbox(nil, data)
		require.NoError(rt, err)
		require.Equal(rt, events, got)
		// Rows written in format 1 (before format 2) are still read.
		got, err = decodeInbox(nil, encodeInboxFormat1(events))
		require.NoError(rt, err)
		require.Equal(rt, events, got)
		cut := rapid.IntRange(0, len(data)-1).Draw(rt, "cut")
		if _, err := decodeInbox(nil, data[:cut]); err == nil && cut > 1 {
			// A cut at an event's end decodes the events before it: never
			// more than were encoded.
			short, _ := decodeInbox(nil, data[:cut])
			require.Less(rt, len(short), n)
		}
	})
}

// encodeInboxFormat1 is the encoding rows had before format 2: each
// string its length and bytes, each time absolute.
func encodeInboxFormat1(events []models.AnalyticsEvent) []byte {
	b := []byte{inboxFormat1}
	for i := range events {
		e := &events[i]
		for _, f := range inboxFields(e) {
			b = binary.AppendUvarint(b, uint64(len(*f)))
			b = append(b, *f...)
		}
		b = binary.AppendVarint(b, e.At.UnixMilli())
		b = binary.AppendUvarint(b, uint64(max(e.ScreenWidth, 0)))
		b = binary.AppendUvarint(b, uint64(max(e.ScreenHeight, 0)))
	}
	return b
}

// A commit of 64 page views of one site (what wrk -c64 gives) encodes in
// less than 2 KB: one SQLite page with no overflow, under Postgres's
// compression threshold. A damaged repeat (the first event's string given
// as "the one before") is an error.
func TestInboxRowOfOneSiteIsSmall(t *testing.T) {
	events := make([]models.AnalyticsEvent, 64)
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for i := range events {
		events[i] = models.AnalyticsEvent{CompanyID: "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", At: at.Add(time.Duration(i) * time.Millisecond),
			DistinctID: fmt.Sprintf("v%d", i*7919%10000), Event: "$pageview", Path: fmt.Sprintf("/p%d", i%20), Referrer: "news.example",
			Country: "FR", ScreenWidth: 1440, ScreenHeight: 900}
	}
	data := encodeInbox(events)
	require.Less(t, len(data), 2048)
	require.Greater(t, len(encodeInboxFormat1(events)), 5000)
	got, err := decodeInbox(nil, data)
	require.NoError(t, err)
	require.Equal(t, events, got)

	_, err = decodeInbox(nil, []byte{inboxFormat, 0})
	require.ErrorIs(t, err, errInboxData)
	_, err = decodeInbox(nil, []byte{3, 1})
	require.ErrorIs(t, err, errInboxData, "an unknown format")
}

// A pass looks at most scan rows: when it takes all of them, the row past
// them (read to know) says rows are left, so catching up goes on (rows of
// one event each fill the scan before maxEvents).
func TestTakeInboxSeesRowsPastItsScan(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "holdco.db"), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))
	for i := range 3 {
		ev := models.AnalyticsEvent{CompanyID: "c", At: time.UnixMilli(int64(i) * 1000).UTC(), DistinctID: "v", Event: "$pageview", Path: "/"}
		require.NoError(t, s.Analytics().AppendAnalyticsInbox(ctx, []models.AnalyticsEvent{ev}))
	}
	for _, want := range []struct {
		events int
		more   bool
	}{{2, true}, {1, false}, {0, false}} {
		events, more, err := takeInbox(ctx, s, 100, 2)
		require.NoError(t, err)
		require.Len(t, events, want.events)
		require.Equal(t, want.more, more, "after taking %d", want.events)
	}
}
