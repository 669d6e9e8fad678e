package analytics

import (
	"context"
	"time"
)

// RetentionEvery is how often the api role deletes raw events past their
// retention.
const RetentionEvery = time.Hour

// retentionChunk is the most rows one delete statement takes.
const retentionChunk = 2000

// PurgeRawEvents deletes the raw events of days before the last keepDays
// UTC days (today is one of them) and returns how many went; 0 keeps
// everything. The rollups the reports read are kept, so reports of any
// range are unchanged; only a late event's refold reads raw events, and
// only of the last 7 days (config keeps at least 8).
func (s *Service) PurgeRawEvents(ctx context.Context, keepDays int) (int64, error) {
	if keepDays <= 0 {
		return 0, nil
	}
	before := s.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -(keepDays - 1)).Format(time.DateOnly)
	return s.store.Analytics().DeleteAnalyticsEventsBefore(ctx, before, retentionChunk)
}
