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
// its events (encodeInbox). Format 1 (rows written before format 2) is
// still read.
const (
	inboxFormat1 = 1
	inboxFormat  = 2
)

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
	// More: rows were left in the inbox past the ones folded (a pass
	// takes whole rows, about maxEvents events: fewer than maxEvents
	// does not mean the inbox is empty).
	More bool
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
		events, more, err := takeInbox(ctx, tx, maxEvents, inboxScan)
		res.Events, res.More = len(events), more
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

// takeInbox deletes the oldest rows holding about maxEvents events (at
// most scan rows) and returns their events in row order, and whether rows
// were left after them (one row past scan is read to know).
func takeInbox(ctx context.Context, s *Store, maxEvents, scan int) ([]models.AnalyticsEvent, bool, error) {
	db := s.db.WithContext(ctx)
	var counts []int
	if err := db.Raw("SELECT events FROM analytics_inbox ORDER BY id LIMIT ?", scan+1).Scan(&counts).Error; err != nil {
		return nil, false, wrap("analytics inbox: size", err)
	}
	if len(counts) == 0 {
		return nil, false, nil
	}
	rowsTaken, sum := 0, 0
	for _, n := range counts[:min(len(counts), scan)] {
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
		return nil, false, wrap("analytics inbox: take", err)
	}
	more := rowsTaken < len(counts)
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.ID, b.ID) })
	events := make([]models.AnalyticsEvent, 0, sum)
	for _, r := range rows {
		had := len(events)
		var err error
		if events, err = decodeInbox(events, r.Data); err == nil && len(events)-had != r.Events {
			err = fmt.Errorf("%w: %d events of %d", errInboxData, len(events)-had, r.Events)
		}
		if err != nil {
			return nil, false, wrap("analytics inbox: row "+strconv.FormatInt(r.ID, 10), err)
		}
	}
	return events, more, nil
}

// inboxFields are an event's strings in the order the encodings write
// them.
func inboxFields(e *models.AnalyticsEvent) [9]*string {
	return [...]*string{&e.CompanyID, &e.DistinctID, &e.Event, &e.Path, &e.Referrer, &e.UTMSource, &e.UTMMedium, &e.UTMCampaign, &e.Country}
}

// encodeInbox writes events as inboxFormat: per event its strings
// (company, visitor, event, path, referrer, the three UTM fields,
// country), each a uvarint 0 when it is the previous event's, else its
// length + 1 and its bytes; then its time in Unix milliseconds (the first
// event's, then the difference from the event before, a varint) and the
// screen's width and height (uvarints). The events of one commit share
// most strings (one site, one event name, few referrers), so a row of 64
// page views is about 1.5 KB instead of 7: it fits in the table's page
// on SQLite (no overflow pages to write) and stays under Postgres's
// compression threshold.
func encodeInbox(events []models.AnalyticsEvent) []byte {
	size := 1
	for i := range events {
		e := &events[i]
		size += 9*binary.MaxVarintLen16 + 3*binary.MaxVarintLen64 + len(e.DistinctID) + len(e.Path)
	}
	b := make([]byte, 0, size)
	b = append(b, inboxFormat)
	var prev [9]*string
	var prevMS int64
	for i := range events {
		e := &events[i]
		fields := inboxFields(e)
		for k, f := range fields {
			if i > 0 && *f == *prev[k] {
				b = append(b, 0)
				continue
			}
			b = binary.AppendUvarint(b, uint64(len(*f))+1)
			b = append(b, *f...)
		}
		prev = fields
		ms := e.At.UnixMilli()
		b = binary.AppendVarint(b, ms-prevMS)
		prevMS = ms
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
	if len(b) == 0 || b[0] != inboxFormat && b[0] != inboxFormat1 {
		return events, fmt.Errorf("%w: format %v", errInboxData, b[:min(len(b), 1)])
	}
	v1 := b[0] == inboxFormat1
	b = b[1:]
	// str reads a string: format 1's is its length and bytes; format 2's
	// is 0 for the previous event's (prev), else its length + 1 and bytes.
	str := func(prev string, first bool) (string, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return "", false
		}
		b = b[k:]
		if !v1 {
			if n == 0 {
				return prev, !first
			}
			n--
		}
		if uint64(len(b)) < n {
			return "", false
		}
		s := string(b[:n])
		b = b[n:]
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
	var prev models.AnalyticsEvent
	var prevMS int64
	for first := true; len(b) > 0; first = false {
		var e models.AnalyticsEvent
		ok := true
		fields, before := inboxFields(&e), inboxFields(&prev)
		for k, f := range fields {
			var fine bool
			*f, fine = str(*before[k], first)
			ok = ok && fine
		}
		ms, fine := num()
		if !v1 {
			ms += prevMS
		}
		prevMS = ms
		e.At = time.UnixMilli(ms).UTC()
		w, fineW := unum()
		h, fineH := unum()
		if !ok || !fine || !fineW || !fineH {
			return events, errInboxData
		}
		e.ScreenWidth, e.ScreenHeight = w, h
		events = append(events, e)
		prev = e
	}
	return events, nil
}
