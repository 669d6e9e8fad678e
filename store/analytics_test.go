package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// newAnalyticsCompany makes a company (with its analytics key) to record
// events for.
func newAnalyticsCompany(t testing.TB, s *store.Store) (models.Company, store.CompanyScope) {
	t.Helper()
	ctx := context.Background()
	_, cong := signUp(t, s, "an"+handle("x")[2:])
	c, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(cong.ID), models.Company{Name: "Sites", Handle: handle("an")})
	require.NoError(t, err)
	return c, systemScope(t, s, c.ID)
}

func TestAnalyticsKeyMadeWithTheCompany(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	c, sc := newAnalyticsCompany(t, s)
	key, err := s.Analytics().AnalyticsKey(ctx, sc)
	require.NoError(t, err)
	assert.Len(t, key, 28)
	id, err := s.Analytics().AnalyticsCompanyByKey(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, c.ID, id)
	byHandle, err := s.Analytics().AnalyticsKeyByHandle(ctx, c.Handle)
	require.NoError(t, err)
	assert.Equal(t, key, byHandle)
	_, err = s.Analytics().AnalyticsCompanyByKey(ctx, "hca_nosuchkeyatall0000000000")
	assert.ErrorIs(t, err, models.ErrNotFound)
}

// recount computes every rollup from raw events, independently of the
// writer's incremental fold.
func recount(events []models.AnalyticsEvent) store.AnalyticsRollupRows {
	sort.SliceStable(events, func(i, j int) bool {
		if !events[i].At.Equal(events[j].At) {
			return events[i].At.Before(events[j].At)
		}
		return events[i].ID < events[j].ID
	})
	type vdKey struct{ day, id string }
	byVD := map[vdKey][]models.AnalyticsEvent{}
	var vdKeys []vdKey
	for _, e := range events {
		k := vdKey{e.Day, e.DistinctID}
		if byVD[k] == nil {
			vdKeys = append(vdKeys, k)
		}
		byVD[k] = append(byVD[k], e)
	}
	sort.Slice(vdKeys, func(i, j int) bool {
		return vdKeys[i].day < vdKeys[j].day || vdKeys[i].day == vdKeys[j].day && vdKeys[i].id < vdKeys[j].id
	})
	var out store.AnalyticsRollupRows
	daily := map[string]*models.AnalyticsDaily{}
	var days []string
	for _, k := range vdKeys {
		evs := byVD[k]
		v := models.VisitorDay{Day: k.day, DistinctID: k.id, Country: evs[0].Country, FirstAt: evs[0].At, LastAt: evs[len(evs)-1].At}
		for _, e := range evs {
			v.Hours |= 1 << e.At.UTC().Hour()
		}
		// Split into sessions at gaps over 30 minutes.
		var sessions [][]models.AnalyticsEvent
		for i, e := range evs {
			if i == 0 || e.At.Sub(evs[i-1].At) > 30*time.Minute {
				sessions = append(sessions, nil)
			}
			sessions[len(sessions)-1] = append(sessions[len(sessions)-1], e)
		}
		for _, ss := range sessions {
			pv := 0
			for _, e := range ss {
				if e.Event == "$pageview" {
					pv++
				}
			}
			if pv == 1 {
				v.Bounces++
			}
			v.DurationMS += ss[len(ss)-1].At.Sub(ss[0].At).Milliseconds()
			v.Pageviews += int64(pv)
			v.Events += int64(len(ss))
		}
		v.Sessions = int64(len(sessions))
		out.VisitorDays = append(out.VisitorDays, v)
		d := daily[k.day]
		if d == nil {
			d = &models.AnalyticsDaily{Day: k.day}
			daily[k.day] = d
			days = append(days, k.day)
		}
		d.Visitors++
		d.Pageviews += v.Pageviews
		d.Events += v.Events
		d.Sessions += v.Sessions
		d.Bounces += v.Bounces
		d.DurationMS += v.DurationMS
	}
	last := map[string]string{}
	for _, v := range out.VisitorDays {
		last[v.DistinctID] = max(last[v.DistinctID], v.Day)
	}
	var ids []string
	for id := range last {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		out.Visitors = append(out.Visitors, models.AnalyticsVisitor{DistinctID: id, LastDay: last[id]})
	}
	sort.Strings(days)
	for _, d := range days {
		out.Daily = append(out.Daily, *daily[d])
	}
	hours := map[string]map[string]bool{}
	hourPV := map[string]int64{}
	pages := map[[2]string]int64{}
	refs := map[[2]string]int64{}
	for _, e := range events {
		h := e.At.UTC().Format("2006-01-02T15")
		if hours[h] == nil {
			hours[h] = map[string]bool{}
		}
		hours[h][e.DistinctID] = true
		if e.Event != "$pageview" {
			continue
		}
		hourPV[h]++
		pages[[2]string{e.Day, e.Path}]++
		if e.Referrer != "-" {
			refs[[2]string{e.Day, e.Referrer}]++
		}
	}
	var hs []string
	for h := range hours {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	for _, h := range hs {
		out.Hourly = append(out.Hourly, models.AnalyticsHourly{Hour: h, Visitors: int64(len(hours[h])), Pageviews: hourPV[h]})
	}
	for _, k := range sortedPairs(pages) {
		out.Pages = append(out.Pages, models.AnalyticsDailyPage{Day: k[0], Path: k[1], Pageviews: pages[k]})
	}
	for _, k := range sortedPairs(refs) {
		out.Referrers = append(out.Referrers, models.AnalyticsDailyReferrer{Day: k[0], Referrer: k[1], Pageviews: refs[k]})
	}
	return out
}

func sortedPairs(m map[[2]string]int64) [][2]string {
	var ks [][2]string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i][0] < ks[j][0] || ks[i][0] == ks[j][0] && ks[i][1] < ks[j][1] })
	return ks
}

// comparable strips what only the store keeps (company ids, the fold's
// running state) so rollups compare with a recount.
func comparable(r store.AnalyticsRollupRows) store.AnalyticsRollupRows {
	var out store.AnalyticsRollupRows
	for _, v := range r.VisitorDays {
		v.CompanyID, v.CurPageviews = "", 0
		v.FirstAt, v.LastAt = v.FirstAt.UTC(), v.LastAt.UTC()
		out.VisitorDays = append(out.VisitorDays, v)
	}
	for _, v := range r.Visitors {
		v.CompanyID = ""
		out.Visitors = append(out.Visitors, v)
	}
	for _, d := range r.Daily {
		d.CompanyID = ""
		out.Daily = append(out.Daily, d)
	}
	for _, h := range r.Hourly {
		h.CompanyID = ""
		out.Hourly = append(out.Hourly, h)
	}
	for _, p := range r.Pages {
		p.CompanyID = ""
		out.Pages = append(out.Pages, p)
	}
	for _, x := range r.Referrers {
		x.CompanyID = ""
		out.Referrers = append(out.Referrers, x)
	}
	return out
}

// The rollups the writer maintains batch by batch equal a recount from
// the raw events, whatever the order events arrive in (late events refold
// a visitor's day), how they are split into batches, and where the gaps,
// days and hours fall.
func TestAnalyticsRollupsEqualARecountFromRawEvents(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 21, 0, 0, 0, time.UTC)
	rapid.Check(t, func(rt *rapid.T) {
		c, sc := newAnalyticsCompany(t, s)
		n := rapid.IntRange(1, 60).Draw(rt, "events")
		visitors := rapid.IntRange(1, 4).Draw(rt, "visitors")
		events := make([]models.AnalyticsEvent, n)
		at := base
		for i := range events {
			// Steps around the session gap, hours and days.
			step := rapid.SampledFrom([]time.Duration{0, time.Second, 10 * time.Minute, 29*time.Minute + 59*time.Second, 30 * time.Minute,
				30*time.Minute + time.Millisecond, 31 * time.Minute, 2 * time.Hour, 20 * time.Hour}).Draw(rt, "step")
			at = at.Add(step)
			events[i] = models.AnalyticsEvent{CompanyID: c.ID, At: at,
				DistinctID: fmt.Sprintf("v%d", rapid.IntRange(1, visitors).Draw(rt, "visitor")),
				Event:      rapid.SampledFrom([]string{"$pageview", "$pageview", "$pageleave", "signup"}).Draw(rt, "event"),
				Path:       rapid.SampledFrom([]string{"/", "/pricing", "/blog/a"}).Draw(rt, "path"),
				Referrer:   rapid.SampledFrom([]string{"", "-", "news.example", "search.example"}).Draw(rt, "referrer"),
				Country:    rapid.SampledFrom([]string{"US", "DE", ""}).Draw(rt, "country")}
		}
		// Arrival order: shuffled (late events), in batches of any size.
		seed := rapid.Uint64().Draw(rt, "seed")
		if rapid.Bool().Draw(rt, "shuffle") {
			r := rand.New(rand.NewPCG(seed, seed))
			r.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })
		}
		for len(events) > 0 {
			k := rapid.IntRange(1, len(events)).Draw(rt, "batch")
			batch := append([]models.AnalyticsEvent(nil), events[:k]...)
			require.NoError(rt, s.Analytics().RecordAnalyticsEvents(ctx, batch))
			events = events[k:]
		}
		raw, err := s.Analytics().AnalyticsRawEvents(ctx, sc, "0000-00-00", "9999-99-99")
		require.NoError(rt, err)
		require.Len(rt, raw, n)
		got, err := s.Analytics().AnalyticsRollups(ctx, sc)
		require.NoError(rt, err)
		require.Equal(rt, recount(raw), comparable(got))
	})
}

// Companies' rollups stay apart, and a batch mixing companies rolls each
// up on its own.
func TestAnalyticsRollupsArePerCompany(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	a, sa := newAnalyticsCompany(t, s)
	b, sb := newAnalyticsCompany(t, s)
	at := time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC)
	var evs []models.AnalyticsEvent
	for i := range 10 {
		co := a.ID
		if i%3 == 0 {
			co = b.ID
		}
		evs = append(evs, models.AnalyticsEvent{CompanyID: co, At: at.Add(time.Duration(i) * time.Minute), DistinctID: "same", Event: "$pageview", Path: "/"})
	}
	require.NoError(t, s.Analytics().RecordAnalyticsEvents(ctx, evs))
	for _, x := range []struct {
		sc  store.CompanyScope
		pvs int64
	}{{sa, 6}, {sb, 4}} {
		days, err := s.Analytics().AnalyticsDays(ctx, x.sc, "2026-04-02", "2026-04-02")
		require.NoError(t, err)
		require.Len(t, days, 1)
		assert.Equal(t, x.pvs, days[0].Pageviews)
		assert.Equal(t, int64(1), days[0].Visitors)
		assert.Equal(t, int64(1), days[0].Sessions)
	}
}

// Writers on several replicas record events of the same visitors at once
// (late ones included); the rollups still equal a recount.
func TestAnalyticsConcurrentWritersKeepRollupsExact(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	c, sc := newAnalyticsCompany(t, s)
	base := time.Date(2026, 5, 3, 23, 0, 0, 0, time.UTC)
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 15 {
				batch := make([]models.AnalyticsEvent, 1+r.IntN(20))
				for i := range batch {
					batch[i] = models.AnalyticsEvent{CompanyID: c.ID, At: base.Add(time.Duration(r.IntN(180)) * time.Minute),
						DistinctID: fmt.Sprintf("v%d", r.IntN(3)), Event: "$pageview", Path: "/", Country: "FR"}
				}
				if err := s.Analytics().RecordAnalyticsEvents(ctx, batch); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		require.NoError(t, <-errs)
	}
	raw, err := s.Analytics().AnalyticsRawEvents(ctx, sc, "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	got, err := s.Analytics().AnalyticsRollups(ctx, sc)
	require.NoError(t, err)
	require.Equal(t, recount(raw), comparable(got))
}
