package store

import (
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"

	"holdco/models"
)

// RecordAnalyticsEvents stores a batch of captured events (their company
// ids resolved from public keys by the capture path) and updates every
// rollup in the same transaction: a crash keeps both or neither, so no
// event is lost from or counted twice in a rollup. Events are inserted in
// time order (a multi-row INSERT on SQLite, COPY on Postgres) and their
// times cut to milliseconds.
//
// Rollups are exact: a visitor's day is folded event by event in time
// order (models.VisitorDay.Fold); an event older than the visitor's last
// one refolds that visitor's day from its raw events. On Postgres the
// batch's companies are locked (transaction advisory locks, in id order)
// so concurrent writers on several replicas do not lose updates; SQLite
// serializes writers anyway.
func (s Analytics) RecordAnalyticsEvents(ctx context.Context, events []models.AnalyticsEvent) error {
	if len(events) == 0 {
		return nil
	}
	return s.record(ctx, func(context.Context, *Store) ([]models.AnalyticsEvent, error) { return events, nil })
}

// record runs one transaction that stores the events take returns (take
// runs first, inside it; none: nothing else is done) with their rollups.
func (s Analytics) record(ctx context.Context, take func(context.Context, *Store) ([]models.AnalyticsEvent, error)) error {
	if s.dialect != DialectPostgres {
		return s.store().InTx(withMemoryTemp(ctx), func(tx *Store) error {
			events, err := take(ctx, tx)
			if err != nil || len(events) == 0 {
				return err
			}
			prepareEvents(events)
			if err := tx.insertEventRows(ctx, events); err != nil {
				return err
			}
			return tx.rollUp(ctx, events)
		})
	}
	return s.store().inConnTx(ctx, func(tx *Store, raw func(func(*pgx.Conn) error) error) error {
		events, err := take(ctx, tx)
		if err != nil || len(events) == 0 {
			return err
		}
		prepareEvents(events)
		// Company ids are UUIDs: an array literal of them is safe.
		if err := tx.db.Exec(`SELECT COUNT(pg_advisory_xact_lock(hashtext('holdco.analytics.' || c)))
			FROM (SELECT unnest(CAST(? AS text[])) AS c ORDER BY 1) AS locks`, "{"+strings.Join(sortedCompanies(events), ",")+"}").Error; err != nil {
			return wrap("record analytics: lock", err)
		}
		err = raw(func(conn *pgx.Conn) error {
			_, err := conn.CopyFrom(ctx, pgx.Identifier{"analytics_events"}, eventColumns, pgx.CopyFromSlice(len(events), func(i int) ([]any, error) {
				return eventRow(events[i]), nil
			}))
			return err
		})
		if err != nil {
			return wrap("record analytics: copy events", err)
		}
		return tx.rollUp(ctx, events)
	})
}

// prepareEvents cuts the events' times to milliseconds, sets their days
// and sorts them by time (stable: same-time events keep their order).
func prepareEvents(events []models.AnalyticsEvent) {
	for i := range events {
		events[i].ID = 0
		events[i].At = events[i].At.UTC().Truncate(time.Millisecond)
		events[i].Day = models.DayOf(events[i].At)
	}
	slices.SortStableFunc(events, func(a, b models.AnalyticsEvent) int { return a.At.Compare(b.At) })
}

// inConnTx runs fn in one transaction on one pooled connection, with raw
// giving fn that connection's pgx handle (for COPY inside the transaction).
func (s *Store) inConnTx(ctx context.Context, fn func(tx *Store, raw func(func(*pgx.Conn) error) error) error) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return wrap("connection", err)
	}
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return wrap("connection", err)
	}
	defer conn.Close()
	db := s.db.Session(&gorm.Session{NewDB: true, Context: ctx})
	db.Statement.ConnPool = conn
	raw := func(f func(*pgx.Conn) error) error {
		return conn.Raw(func(dc any) error {
			c, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("not a pgx connection: %T", dc)
			}
			return f(c.Conn())
		})
	}
	return db.Transaction(func(gtx *gorm.DB) error {
		return fn(&Store{db: gtx, dialect: s.dialect, logger: s.logger, inTx: true, hooks: s.hooks}, raw)
	})
}

var eventColumns = []string{"company_id", "day", "at", "distinct_id", "event", "path", "referrer", "utm_source", "utm_medium",
	"utm_campaign", "country", "screen_width", "screen_height"}

func eventRow(e models.AnalyticsEvent) []any {
	return []any{e.CompanyID, e.Day, e.At, e.DistinctID, e.Event, e.Path, e.Referrer, e.UTMSource, e.UTMMedium, e.UTMCampaign,
		e.Country, e.ScreenWidth, e.ScreenHeight}
}

func (s *Store) insertEventRows(ctx context.Context, events []models.AnalyticsEvent) error {
	rows := make([][]any, len(events))
	for i, e := range events {
		rows[i] = eventRow(e)
	}
	return s.execRows(ctx, "record analytics: insert events", "INSERT INTO analytics_events ("+strings.Join(eventColumns, ", ")+") VALUES ", "", rows)
}

// maxParams bounds a multi-row statement's parameters: the pure-Go SQLite
// driver binds and parses long statements slowly (a 5,000-row insert in
// 2,300-row statements took 1.9 s, in 50-row ones 0.3 s), and a chunk's
// statement is prepared once and reused for every full chunk.
const maxParams = 650

// execRows runs prefix + VALUES groups + suffix over rows, as many rows a
// statement as maxParams allows, and the rest in statements of a power of
// two rows: a few statement texts, each prepared once per connection and
// kept (a text of every length made the pure-Go SQLite parse a statement
// again in most statements of a small commit).
func (s *Store) execRows(ctx context.Context, op, prefix, suffix string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	width := len(rows[0])
	per := max(1, maxParams/width)
	pool := s.db.WithContext(ctx).Statement.ConnPool
	args := make([]any, 0, per*width)
	for i := 0; i < len(rows); {
		n := chunkLen(len(rows)-i, per)
		args = args[:0]
		for _, r := range rows[i : i+n] {
			args = append(args, r...)
		}
		i += n
		q := s.bindVars(prefix + placeholders(n, width) + suffix)
		if _, err := pool.ExecContext(ctx, q, args...); err != nil {
			return wrap(op, err)
		}
	}
	return nil
}

// chunkLen is how many of left rows the next statement takes: per, or
// the largest power of two not above left.
func chunkLen(left, per int) int {
	if left >= per {
		return per
	}
	return 1 << (bits.Len(uint(left)) - 1)
}

// bindVars numbers the ? marks of a statement sent past gorm ($1, $2, …
// on Postgres). The statements here hold no other question marks.
func (s *Store) bindVars(q string) string {
	if s.dialect != DialectPostgres {
		return q
	}
	return numberedPlaceholders(q)
}

// numberedPlaceholders is q with its ? marks as Postgres's $1, $2, … (q
// holds no other question marks).
func numberedPlaceholders(q string) string {
	var b strings.Builder
	b.Grow(len(q) + len(q)/2)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

type visitorDayKey struct{ company, day, distinctID string }

type visitorDayState struct {
	old, cur models.VisitorDay
	existed  bool
	refold   bool
}

type dayKey struct{ company, day string }
type hourKey struct{ company, hour string }
type nameKey struct{ company, day, name string }

// rollUp updates the rollups for events, which are already inserted in
// this transaction and sorted by time.
func (s *Store) rollUp(ctx context.Context, events []models.AnalyticsEvent) error {
	states := map[visitorDayKey]*visitorDayState{}
	var keys []visitorDayKey
	for _, e := range events {
		k := visitorDayKey{e.CompanyID, e.Day, e.DistinctID}
		if states[k] == nil {
			states[k] = &visitorDayState{}
			keys = append(keys, k)
		}
	}
	if err := s.loadVisitorDays(ctx, keys, states); err != nil {
		return err
	}
	for _, e := range events {
		st := states[visitorDayKey{e.CompanyID, e.Day, e.DistinctID}]
		if st.refold {
			continue
		}
		if st.cur.Events > 0 && e.At.Before(st.cur.LastAt) {
			st.refold = true
			continue
		}
		st.cur.Fold(e.At, e.Country, e.IsPageview())
	}
	if err := s.refoldVisitorDays(ctx, keys, states); err != nil {
		return err
	}

	daily := map[dayKey]*models.AnalyticsDaily{}
	var days []dayKey
	vdRows := make([][]any, 0, len(keys))
	for _, k := range keys {
		st := states[k]
		c := st.cur
		vdRows = append(vdRows, []any{k.company, k.day, k.distinctID, c.Country, c.FirstAt, c.LastAt, c.Events, c.Pageviews, c.Sessions,
			c.Bounces, c.DurationMS, c.CurPageviews, c.Hours})
		dk := dayKey{k.company, k.day}
		d := daily[dk]
		if d == nil {
			d = &models.AnalyticsDaily{}
			daily[dk] = d
			days = append(days, dk)
		}
		if !st.existed {
			d.Visitors++
		}
		d.Pageviews += c.Pageviews - st.old.Pageviews
		d.Events += c.Events - st.old.Events
		d.Sessions += c.Sessions - st.old.Sessions
		d.Bounces += c.Bounces - st.old.Bounces
		d.DurationMS += c.DurationMS - st.old.DurationMS
	}
	set := func(cols ...string) string {
		out := ""
		for i, c := range cols {
			if i > 0 {
				out += ", "
			}
			out += c + " = excluded." + c
		}
		return out
	}
	add := func(table string, cols ...string) string {
		out := ""
		for i, c := range cols {
			if i > 0 {
				out += ", "
			}
			out += c + " = " + s.existing(table, c) + " + excluded." + c
		}
		return out
	}
	if err := s.execRows(ctx, "record analytics: visitor days",
		"INSERT INTO analytics_visitor_days (company_id, day, distinct_id, country, first_at, last_at, events, pageviews, sessions, bounces, duration_ms, cur_pageviews, hours) VALUES ",
		" ON CONFLICT (company_id, day, distinct_id) DO UPDATE SET "+set("country", "first_at", "last_at", "events",
			"pageviews", "sessions", "bounces", "duration_ms", "cur_pageviews", "hours"), vdRows); err != nil {
		return err
	}
	dailyRows := make([][]any, 0, len(days))
	for _, dk := range days {
		d := daily[dk]
		dailyRows = append(dailyRows, []any{dk.company, dk.day, d.Visitors, d.Pageviews, d.Events, d.Sessions, d.Bounces, d.DurationMS})
	}
	if err := s.execRows(ctx, "record analytics: daily",
		"INSERT INTO analytics_daily (company_id, day, visitors, pageviews, events, sessions, bounces, duration_ms) VALUES ",
		" ON CONFLICT (company_id, day) DO UPDATE SET "+add("analytics_daily", "visitors", "pageviews", "events", "sessions", "bounces", "duration_ms"),
		dailyRows); err != nil {
		return err
	}

	// Each visitor's last day (a late event never moves it back).
	lastDay := map[[2]string]string{}
	var visitors [][2]string
	for _, k := range keys {
		if states[k].existed {
			continue // the visitor's last day is this day or later already
		}
		v := [2]string{k.company, k.distinctID}
		if d, ok := lastDay[v]; !ok || k.day > d {
			if !ok {
				visitors = append(visitors, v)
			}
			lastDay[v] = k.day
		}
	}
	visitorRows := make([][]any, len(visitors))
	for i, v := range visitors {
		visitorRows[i] = []any{v[0], v[1], lastDay[v]}
	}
	if err := s.execRows(ctx, "record analytics: visitors", "INSERT INTO analytics_visitors (company_id, distinct_id, last_day) VALUES ",
		" ON CONFLICT (company_id, distinct_id) DO UPDATE SET last_day = excluded.last_day WHERE excluded.last_day > "+
			s.existing("analytics_visitors", "last_day"), visitorRows); err != nil {
		return err
	}

	hourly := hourlyDeltas(events, keys, states)
	if err := s.execRows(ctx, "record analytics: hourly", "INSERT INTO analytics_hourly (company_id, hour, visitors, pageviews) VALUES ",
		" ON CONFLICT (company_id, hour) DO UPDATE SET "+add("analytics_hourly", "visitors", "pageviews"), hourly); err != nil {
		return err
	}

	pages, referrers := map[nameKey]int64{}, map[nameKey]int64{}
	var pageKeys, refKeys []nameKey
	for _, e := range events {
		if !e.IsPageview() {
			continue
		}
		pk := nameKey{e.CompanyID, e.Day, e.Path}
		if pages[pk] == 0 {
			pageKeys = append(pageKeys, pk)
		}
		pages[pk]++
		if e.Referrer == models.ReferrerInternal {
			continue
		}
		rk := nameKey{e.CompanyID, e.Day, e.Referrer}
		if referrers[rk] == 0 {
			refKeys = append(refKeys, rk)
		}
		referrers[rk]++
	}
	for _, t := range []struct {
		table, col string
		keys       []nameKey
		counts     map[nameKey]int64
	}{{"analytics_daily_pages", "path", pageKeys, pages}, {"analytics_daily_referrers", "referrer", refKeys, referrers}} {
		rows := make([][]any, len(t.keys))
		for i, k := range t.keys {
			rows[i] = []any{k.company, k.day, k.name, t.counts[k]}
		}
		if err := s.execRows(ctx, "record analytics: "+t.table, "INSERT INTO "+t.table+" (company_id, day, "+t.col+", pageviews) VALUES ",
			" ON CONFLICT (company_id, day, "+t.col+") DO UPDATE SET "+add(t.table, "pageviews"), rows); err != nil {
			return err
		}
	}
	return nil
}

// loadVisitorDays reads the stored state of the visitor-days of keys.
func (s *Store) loadVisitorDays(ctx context.Context, keys []visitorDayKey, states map[visitorDayKey]*visitorDayState) error {
	for part := range keyChunks(keys) {
		var rows []models.VisitorDay
		q := "SELECT v.* FROM (VALUES " + placeholders(len(part), 3) + ") AS k JOIN analytics_visitor_days v " +
			"ON v.company_id = k.column1 AND v.day = k.column2 AND v.distinct_id = k.column3"
		if err := s.db.WithContext(ctx).Raw(q, keyArgs(part)...).Scan(&rows).Error; err != nil {
			return wrap("record analytics: read visitor days", err)
		}
		for _, r := range rows {
			st := states[visitorDayKey{r.CompanyID, r.Day, r.DistinctID}]
			r.FirstAt, r.LastAt = r.FirstAt.UTC(), r.LastAt.UTC()
			st.old, st.cur, st.existed = r, r, true
		}
	}
	return nil
}

// refoldVisitorDays recomputes the visitor-days an out-of-order event
// touched from all their raw events (the batch's included).
func (s *Store) refoldVisitorDays(ctx context.Context, keys []visitorDayKey, states map[visitorDayKey]*visitorDayState) error {
	var redo []visitorDayKey
	for _, k := range keys {
		if st := states[k]; st.refold {
			st.cur = models.VisitorDay{CompanyID: k.company, Day: k.day, DistinctID: k.distinctID}
			redo = append(redo, k)
		}
	}
	for part := range keyChunks(redo) {
		var rows []models.AnalyticsEvent
		q := "SELECT e.company_id, e.day, e.distinct_id, e.at, e.event, e.country FROM (VALUES " + placeholders(len(part), 3) +
			") AS k JOIN analytics_events e ON e.company_id = k.column1 AND e.day = k.column2 AND e.distinct_id = k.column3 ORDER BY e.at, e.id"
		if err := s.db.WithContext(ctx).Raw(q, keyArgs(part)...).Scan(&rows).Error; err != nil {
			return wrap("record analytics: refold visitor days", err)
		}
		for _, e := range rows {
			states[visitorDayKey{e.CompanyID, e.Day, e.DistinctID}].cur.Fold(e.At.UTC(), e.Country, e.IsPageview())
		}
	}
	return nil
}

// keyChunks cuts keys into reads of 128 keys or a power of two fewer
// (few statement texts, each kept prepared).
func keyChunks(keys []visitorDayKey) func(func([]visitorDayKey) bool) {
	return func(yield func([]visitorDayKey) bool) {
		const per = 128
		for i := 0; i < len(keys); {
			n := chunkLen(len(keys)-i, per)
			if !yield(keys[i : i+n]) {
				return
			}
			i += n
		}
	}
}

func keyArgs(keys []visitorDayKey) []any {
	args := make([]any, 0, 3*len(keys))
	for _, k := range keys {
		args = append(args, k.company, k.day, k.distinctID)
	}
	return args
}

// hourlyDeltas returns each touched hour's visitor and page-view
// increments as rows: a visitor counts in an hour whose bit their
// visitor-day did not have before this batch.
func hourlyDeltas(events []models.AnalyticsEvent, keys []visitorDayKey, states map[visitorDayKey]*visitorDayState) [][]any {
	deltas := map[hourKey]*[2]int64{}
	var hours []hourKey
	touch := func(k hourKey) *[2]int64 {
		d := deltas[k]
		if d == nil {
			d = &[2]int64{}
			deltas[k] = d
			hours = append(hours, k)
		}
		return d
	}
	for _, e := range events {
		if e.IsPageview() {
			touch(hourKey{e.CompanyID, models.HourOf(e.At)})[1]++
		}
	}
	for _, k := range keys {
		st := states[k]
		added := st.cur.Hours &^ st.old.Hours
		for h := range 24 {
			if added&(1<<h) != 0 {
				touch(hourKey{k.company, k.day + "T" + fmt.Sprintf("%02d", h)})[0]++
			}
		}
	}
	out := make([][]any, 0, len(hours))
	for _, k := range hours {
		d := deltas[k]
		out = append(out, []any{k.company, k.hour, d[0], d[1]})
	}
	return out
}
