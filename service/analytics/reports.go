package analytics

import (
	"context"
	"time"

	"holdco/models"
	"holdco/store"
)

// TopLimit is how many pages and referrers a summary lists.
const TopLimit = 10

// Metric is a figure of the period with the one of the period before and
// the relative change in percent (nil when the period before had none).
type Metric struct {
	Value    float64
	Previous float64
	Change   *float64
}

func metric(cur, prev float64) Metric {
	m := Metric{Value: cur, Previous: prev}
	if prev != 0 {
		c := (cur - prev) / prev * 100
		m.Change = &c
	}
	return m
}

// Named is a page or referrer with its page views and their change.
type Named struct {
	Name      string
	Pageviews Metric
}

// Point is one step of the trend: an hour (1d) or a day.
type Point struct {
	Start     time.Time
	Visitors  int64
	Pageviews int64
}

// Summary is a company's analytics over a range.
type Summary struct {
	// Key is the company's public analytics key and LoaderURL its loader
	// script, for the site's <script src> (PostHog clients take the key
	// as api_key, with /analytics as api_host).
	Key, LoaderURL string
	Range          string
	From, To       time.Time // first and last day of the period
	Visitors       Metric
	Pageviews      Metric
	Sessions       Metric
	BounceRate     Metric // percent of sessions with exactly one page view
	AvgSessionSecs Metric // mean session duration, seconds
	TopPages       []Named
	TopReferrers   []Named // "" is direct traffic
	Trend          []Point
	TrendStep      string // "hour" or "day"
}

// Summary reports the company's visitors, page views, sessions, bounce
// rate and mean session duration over range (vs the period before), its
// top pages and referrers, and a trend (hourly for 1d, daily otherwise).
// Everything is read from the rollups, after the events this process
// acknowledged are folded into them (settle).
func (s *Service) Summary(ctx context.Context, companyID, rangeName string) (Summary, error) {
	r, err := ParseRange(rangeName)
	if err != nil {
		return Summary{}, err
	}
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Summary{}, err
	}
	s.settle(ctx)
	out, err := s.summary(ctx, ac.Scope, r)
	if err != nil {
		return Summary{}, err
	}
	if out.Key, err = s.store.Analytics().AnalyticsKey(ctx, ac.Scope); err != nil {
		return Summary{}, err
	}
	out.LoaderURL = s.LoaderURL(out.Key)
	return out, nil
}

func (s *Service) summary(ctx context.Context, sc store.CompanyScope, r Range) (Summary, error) {
	p := r.period(s.now())
	from, to, prevFrom := models.DayOf(p.From), models.DayOf(p.To), models.DayOf(p.PrevFrom)
	out := Summary{Range: r.Name, From: p.From, To: p.To}
	days, err := s.store.Analytics().AnalyticsDays(ctx, sc, prevFrom, to)
	if err != nil {
		return Summary{}, err
	}
	var cur, prev models.AnalyticsDaily
	byDay := map[string]models.AnalyticsDaily{}
	for _, d := range days {
		t := &prev
		if d.Day >= from {
			t = &cur
			byDay[d.Day] = d
		}
		t.Visitors += d.Visitors
		t.Pageviews += d.Pageviews
		t.Sessions += d.Sessions
		t.Bounces += d.Bounces
		t.DurationMS += d.DurationMS
	}
	// A visitor of several days counts once in the period: a day's
	// rollup counts visitors of that day only, so longer periods count
	// distinct ids over the visitor-day rollup.
	if r.Days > 1 {
		if cur.Visitors, err = s.store.Analytics().AnalyticsVisitorsSince(ctx, sc, from); err != nil {
			return Summary{}, err
		}
		// No event older than maxEventAge is taken, so a period that ended
		// before that day is closed: its count is made once.
		closed := models.DayOf(p.PrevTo) < models.DayOf(s.now().Add(-maxEventAge))
		if prev.Visitors, err = s.store.Analytics().AnalyticsPeriodVisitors(ctx, sc, prevFrom, models.DayOf(p.PrevTo), closed); err != nil {
			return Summary{}, err
		}
	}
	out.Visitors = metric(float64(cur.Visitors), float64(prev.Visitors))
	out.Pageviews = metric(float64(cur.Pageviews), float64(prev.Pageviews))
	out.Sessions = metric(float64(cur.Sessions), float64(prev.Sessions))
	out.BounceRate = metric(ratio(cur.Bounces*100, cur.Sessions), ratio(prev.Bounces*100, prev.Sessions))
	out.AvgSessionSecs = metric(ratio(cur.DurationMS, cur.Sessions*1000), ratio(prev.DurationMS, prev.Sessions*1000))

	for _, t := range []struct {
		dim string
		dst *[]Named
	}{{"pages", &out.TopPages}, {"referrers", &out.TopReferrers}} {
		rows, err := s.store.Analytics().AnalyticsTop(ctx, sc, t.dim, prevFrom, from, to, TopLimit)
		if err != nil {
			return Summary{}, err
		}
		*t.dst = make([]Named, len(rows))
		for i, x := range rows {
			(*t.dst)[i] = Named{Name: x.Name, Pageviews: metric(float64(x.Pageviews), float64(x.PrevPageviews))}
		}
	}

	if r.Days == 1 {
		out.TrendStep = "hour"
		hours, err := s.store.Analytics().AnalyticsHours(ctx, sc, models.HourOf(p.From), models.HourOf(p.To.Add(23*time.Hour)))
		if err != nil {
			return Summary{}, err
		}
		byHour := map[string]models.AnalyticsHourly{}
		for _, h := range hours {
			byHour[h.Hour] = h
		}
		for i := range 24 {
			at := p.From.Add(time.Duration(i) * time.Hour)
			h := byHour[models.HourOf(at)]
			out.Trend = append(out.Trend, Point{Start: at, Visitors: h.Visitors, Pageviews: h.Pageviews})
		}
		return out, nil
	}
	out.TrendStep = "day"
	for at := p.From; !at.After(p.To); at = at.AddDate(0, 0, 1) {
		d := byDay[models.DayOf(at)]
		out.Trend = append(out.Trend, Point{Start: at, Visitors: d.Visitors, Pageviews: d.Pageviews})
	}
	return out, nil
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Country is a country's visitors and page views in a period ("" when the
// visitor's address had no known country).
type Country struct {
	Country   string
	Visitors  int64
	Pageviews int64
}

// Countries is a company's visitors and page views per country.
type Countries struct {
	Range     string
	From, To  time.Time
	Countries []Country
}

// Countries reports visitors and page views per country over range, a
// visitor's day counted in the country of its first event; most visitors
// first.
func (s *Service) Countries(ctx context.Context, companyID, rangeName string) (Countries, error) {
	r, err := ParseRange(rangeName)
	if err != nil {
		return Countries{}, err
	}
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Countries{}, err
	}
	s.settle(ctx)
	p := r.period(s.now())
	rows, err := s.store.Analytics().AnalyticsCountries(ctx, ac.Scope, models.DayOf(p.From), models.DayOf(p.To))
	if err != nil {
		return Countries{}, err
	}
	out := Countries{Range: r.Name, From: p.From, To: p.To, Countries: make([]Country, len(rows))}
	for i, x := range rows {
		out.Countries[i] = Country{Country: x.Name, Visitors: x.Visitors, Pageviews: x.Pageviews}
	}
	return out, nil
}

// Headline is the dashboard's analytics section: the default range's
// visitor-days, page views, sessions and bounce rate with their change.
type Headline struct {
	Range      string
	Visitors   Metric // sum of daily visitors (a visitor of two days counts twice)
	Pageviews  Metric
	Sessions   Metric
	BounceRate Metric
}

// HeadlineDays are the days the dashboard's analytics section sums: the
// default range up to today and the period of the same length before it
// (the dashboard reads their sums with its other figures, in one
// statement: store.CompanySummary), after the events this process
// acknowledged are folded (settle: nothing to do, no statement, when none
// wait).
func (s *Service) HeadlineDays(ctx context.Context) store.HeadlineDays {
	s.settle(ctx)
	r, _ := ParseRange(DefaultRange)
	p := r.period(s.now())
	return store.HeadlineDays{PrevFrom: models.DayOf(p.PrevFrom), From: models.DayOf(p.From), To: models.DayOf(p.To)}
}

// HeadlineOf is the dashboard's analytics section from the daily rollups'
// sums over HeadlineDays's current period and the one before.
func HeadlineOf(cur, prev models.AnalyticsDaily) Headline {
	return Headline{Range: DefaultRange, Visitors: metric(float64(cur.Visitors), float64(prev.Visitors)),
		Pageviews:  metric(float64(cur.Pageviews), float64(prev.Pageviews)),
		Sessions:   metric(float64(cur.Sessions), float64(prev.Sessions)),
		BounceRate: metric(ratio(cur.Bounces*100, cur.Sessions), ratio(prev.Bounces*100, prev.Sessions))}
}
