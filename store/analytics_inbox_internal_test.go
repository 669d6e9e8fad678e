package store

import (
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
		str := rapid.StringN(0, 300, -1)
		for i := range events {
			events[i] = models.AnalyticsEvent{CompanyID: str.Draw(rt, "company"), DistinctID: str.Draw(rt, "visitor"), Event: str.Draw(rt, "event"),
				Path: str.Draw(rt, "path"), Referrer: str.Draw(rt, "referrer"), UTMSource: str.Draw(rt, "src"), UTMMedium: str.Draw(rt, "medium"),
				UTMCampaign: str.Draw(rt, "campaign"), Country: str.Draw(rt, "country"),
				At:          time.UnixMilli(rapid.Int64Range(0, 1<<45).Draw(rt, "ms")).UTC(),
				ScreenWidth: rapid.IntRange(0, 100_000).Draw(rt, "w"), ScreenHeight: rapid.IntRange(0, 100_000).Draw(rt, "h")}
		}
		data := encodeInbox(events)
		got, err := decodeInbox(nil, data)
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
