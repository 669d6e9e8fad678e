package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"holdco/models"
)

// Capture's inbox (migration 0037). Capture acknowledges a batch of events
// once AppendAnalyticsInbox has committed it as one row: one small insert
// and one sync, whatever the batch holds, so a request waits for little
// more than the disk. FoldAnalyticsInbox later takes the oldest rows,
// stores their events with RecordAnalyticsEvents' rollups and deletes the
// rows, all in one transaction: a crash keeps the rows or the fold, never
// both or neither, so an acknowledged event is counted exactly once. A
// fold of thousands of events does each rollup row once instead of once
// a commit.

// inboxFormat is the first byte of an inbox row's data: the encoding of
// its events (encodeInbox).
const inboxFormat = 1

// AppendAnalyticsInbox stores events as one inbox row and returns once the
// row is committed. Times are cut to milliseconds, as RecordAnalyticsEvents
// stores them.
func (s Analytics) AppendAnalyticsInbox(ctx context.Context, events []models.AnalyticsEvent) error {
	if len(events) == 0 {
		return nil
	}
	// One statement, in the SQLite write gate's queue like every single
	// write (gateSingleWrites).
	err := s.db.WithContext(ctx).Exec("INSERT INTO analytics_inbox (events, data, created_at) VALUES (?, ?, ?)", len(events), encodeInbox(events), now()).Error
	return wrap("analytics inbox: append", err)
}

// FoldResult is what one FoldAnalyticsInbox did.
type FoldResult struct {
	// Events is how many events were folded (0: the inbox was empty, or
	// Busy).
	Events int
	// Busy: another process was folding (Postgres), nothing was done.
	Busy bool
}

// FoldAnalyticsInbox folds the oldest inbox rows, about maxEvents events
// (at least one row), into analytics_events and the rollups, and deletes
// them, in one transaction. On Postgres one process folds at a time in the
// cluster (a transaction advisory lock; the others get Busy). The lock is
// the schema's, as the migrations' is: holdcos in other schemas of one
// database (the tests' pooled schemas) fold their own inboxes side by side.
func (s Analytics) FoldAnalyticsInbox(ctx context.Context, maxEvents int) (FoldResult, error) {
	var res FoldResult
	err := s.record(ctx, func(ctx context.Context, tx *Store) ([]models.AnalyticsEvent, error) {
		if tx.dialect == DialectPostgres {
			var got bool
			if err := tx.db.WithContext(ctx).Raw("SELECT pg_try_advisory_xact_lock(hashtext('holdco.analytics.fold.' || current_schema()))").Scan(&got).Error; err != nil {
				return nil, wrap("analytics inbox: fold lock", err)
			}
			if !got {
				res.Busy = true
				return nil, nil
			}
		}
		events, err := takeInbox(ctx, tx, maxEvents)
		res.Events = len(events)
		return events, err
	})
	if err != nil {
		return FoldResult{}, err
	}
	return res, nil
}

// AnalyticsInboxOldest returns when the oldest row waiting in the inbox
// was appended (false: the inbox is empty).
func (s Analytics) AnalyticsInboxOldest(ctx context.Context) (time.Time, bool, error) {
	var at []time.Time
	if err := s.db.WithContext(ctx).Raw("SELECT created_at FROM analytics_inbox ORDER BY id LIMIT 1").Scan(&at).Error; err != nil {
		return time.Time{}, false, wrap("analytics inbox: oldest", err)
	}
	if len(at) == 0 {
		return time.Time{}, false, nil
	}
	return at[0].UTC(), true, nil
}

// inboxScan bounds the rows the fold looks at to pick its share.
const inboxScan = 4096

// takeInbox deletes the oldest rows holding about maxEvents events and
// returns their events in row order.
func takeInbox(ctx context.Context, s *Store, maxEvents int) ([]models.AnalyticsEvent, error) {
	db := s.db.WithContext(ctx)
	var counts []int
	if err := db.Raw("SELECT events FROM analytics_inbox ORDER BY id LIMIT ?", inboxScan).Scan(&counts).Error; err != nil {
		return nil, wrap("analytics inbox: size", err)
	}
	if len(counts) == 0 {
		return nil, nil
	}
	rowsTaken, sum := 0, 0
	for _, n := range counts {
		if rowsTaken > 0 && sum+n > maxEvents {
			break
		}
		rowsTaken++
		sum += n
	}
	type row struct {
		ID     int64
		Events int
		Data   []byte
	}
	var rows []row
	// Postgres may show a row with a lower id only after a higher one (ids
	// are handed out before commit): the rows are deleted and folded by the
	// ids this statement returns, never by a range.
	if err := db.Raw("DELETE FROM analytics_inbox WHERE id IN (SELECT id FROM analytics_inbox ORDER BY id LIMIT ?) RETURNING id, events, data", rowsTaken).
		Scan(&rows).Error; err != nil {
		return nil, wrap("analytics inbox: take", err)
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.ID, b.ID) })
	events := make([]models.AnalyticsEvent, 0, sum)
	for _, r := range rows {
		had := len(events)
		var err error
		if events, err = decodeInbox(events, r.Data); err == nil && len(events)-had != r.Events {
			err = fmt.Errorf("%w: %d events of %d", errInboxData, len(events)-had, r.Events)
		}
		if err != nil {
			return nil, wrap("analytics inbox: row "+strconv.FormatInt(r.ID, 10), err)
		}
	}
	return events, nil
}

// encodeInbox writes events as inboxFormat: per event its strings
// (company, visitor, event, path, referrer, the three UTM fields, country),
// each a length and bytes, then its time in Unix milliseconds and the
// screen's width and height, as varints.
func encodeInbox(events []models.AnalyticsEvent) []byte {
	size := 1
	for i := range events {
		e := &events[i]
		size += 9*binary.MaxVarintLen16 + 3*binary.MaxVarintLen64 + len(e.CompanyID) + len(e.DistinctID) + len(e.Event) + len(e.Path) +
			len(e.Referrer) + len(e.UTMSource) + len(e.UTMMedium) + len(e.UTMCampaign) + len(e.Country)
	}
	b := make([]byte, 0, size)
	b = append(b, inboxFormat)
	for i := range events {
		e := &events[i]
		for _, f := range [...]string{e.CompanyID, e.DistinctID, e.Event, e.Path, e.Referrer, e.UTMSource, e.UTMMedium, e.UTMCampaign, e.Country} {
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
		}
		b = binary.AppendVarint(b, e.At.UnixMilli())
		b = binary.AppendUvarint(b, uint64(max(e.ScreenWidth, 0)))
		b = binary.AppendUvarint(b, uint64(max(e.ScreenHeight, 0)))
	}
	return b
}

var errInboxData = errors.New("unreadable inbox data")

// DecodeAnalyticsInbox reads the events of one inbox row's data column
// (an operator's or a test's look at what waits to be folded).
func DecodeAnalyticsInbox(data []byte) ([]models.AnalyticsEvent, error) {
	return decodeInbox(nil, data)
}

// decodeInbox appends the events of one row's data to events.
func decodeInbox(events []models.AnalyticsEvent, b []byte) ([]models.AnalyticsEvent, error) {
	if len(b) == 0 || b[0] != inboxFormat {
		return events, fmt.Errorf("%w: format %v", errInboxData, b[:min(len(b), 1)])
	}
	b = b[1:]
	str := func() (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return "", false
		}
		s := string(b[k : k+int(n)])
		b = b[k+int(n):]
		return s, true
	}
	num := func() (int64, bool) {
		v, k := binary.Varint(b)
		b = b[max(k, 0):]
		return v, k > 0
	}
	unum := func() (int, bool) {
		v, k := binary.Uvarint(b)
		b = b[max(k, 0):]
		return int(min(v, 1<<31)), k > 0
	}
	for len(b) > 0 {
		var e models.AnalyticsEvent
		ok := true
		for _, f := range [...]*string{&e.CompanyID, &e.DistinctID, &e.Event, &e.Path, &e.Referrer, &e.UTMSource, &e.UTMMedium, &e.UTMCampaign, &e.Country} {
			var fine bool
			*f, fine = str()
			ok = ok && fine
		}
		ms, fine := num()
		e.At = time.UnixMilli(ms).UTC()
		w, fineW := unum()
		h, fineH := unum()
		if !ok || !fine || !fineW || !fineH {
			return events, errInboxData
		}
		e.ScreenWidth, e.ScreenHeight = w, h
		events = append(events, e)
	}
	return events, nil
}
