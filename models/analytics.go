package models

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
	"time"
)

// Analytics rows. Raw events are kept per (company, day); the summaries
// read the rollups, which the capture writer updates in the transaction
// that inserts the events (store/analytics.go), so a crash never leaves
// events without their rollup or a rollup without its events.

// AnalyticsKeyMinLen and AnalyticsKeyMaxLen bound a public analytics key
// (the loader's `c`).
const (
	AnalyticsKeyMinLen = 8
	AnalyticsKeyMaxLen = 64
)

// SessionGap is the inactivity after which a visitor's next event starts a
// new session.
const SessionGap = 30 * time.Minute

// AnalyticsKey is a company's public analytics key: it names the company
// in the loader script and in captured events. It is not a secret.
type AnalyticsKey struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	Key       string `gorm:"size:64;not null;uniqueIndex:idx_analytics_keys_key"`
	CreatedAt time.Time
}

func (AnalyticsKey) TableName() string { return "analytics_keys" }

// AnalyticsEvent is one captured event, without the client's IP (only the
// country derived from it).
type AnalyticsEvent struct {
	ID           int64     `gorm:"primaryKey;autoIncrement"`
	CompanyID    string    `gorm:"size:36;not null"`
	Day          string    `gorm:"size:10;not null"` // UTC date of At, 2006-01-02
	At           time.Time `gorm:"not null"`
	DistinctID   string    `gorm:"size:200;not null"`
	Event        string    `gorm:"size:200;not null"`
	Path         string    `gorm:"size:500;not null"`
	Referrer     string    `gorm:"size:253;not null"` // external referring host; "" direct; "-" the site itself
	UTMSource    string    `gorm:"size:200;not null"`
	UTMMedium    string    `gorm:"size:200;not null"`
	UTMCampaign  string    `gorm:"size:200;not null"`
	Country      string    `gorm:"size:2;not null"`
	ScreenWidth  int       `gorm:"not null"`
	ScreenHeight int       `gorm:"not null"`
}

func (AnalyticsEvent) TableName() string { return "analytics_events" }

// ReferrerInternal is an event's Referrer when the page was reached from
// the site itself (not counted among referrers); "" is a direct visit.
const ReferrerInternal = "-"

// PageviewEvent is the event name of a page view (PostHog's).
const PageviewEvent = "$pageview"

// IsPageview reports whether the event is a page view.
func (e AnalyticsEvent) IsPageview() bool { return e.Event == PageviewEvent }

// VisitorDay is one visitor's (distinct id's) activity on one UTC day,
// folded from their events in time order: sessions end after SessionGap
// of inactivity (and at midnight UTC); a bounce is a session with exactly
// one page view; a session lasts from its first to its last event.
type VisitorDay struct {
	CompanyID    string    `gorm:"primaryKey;size:36"`
	Day          string    `gorm:"primaryKey;size:10"`
	DistinctID   string    `gorm:"primaryKey;size:200"`
	Country      string    `gorm:"size:2;not null"` // of the day's first event
	FirstAt      time.Time `gorm:"not null"`
	LastAt       time.Time `gorm:"not null"`
	Events       int64     `gorm:"not null"`
	Pageviews    int64     `gorm:"not null"`
	Sessions     int64     `gorm:"not null"`
	Bounces      int64     `gorm:"not null"`
	DurationMS   int64     `gorm:"not null"`
	CurPageviews int64     `gorm:"not null"` // page views of the last session so far
	Hours        int64     `gorm:"not null"` // bit h set: seen in hour h (UTC) of the day
}

func (VisitorDay) TableName() string { return "analytics_visitor_days" }

// Fold adds the next event (at, pageview) of the visitor's day, which must
// not be earlier than LastAt. Folding a day's events in order from the
// zero value gives the day's exact figures.
func (v *VisitorDay) Fold(at time.Time, country string, pageview bool) {
	switch {
	case v.Events == 0:
		v.Sessions, v.FirstAt, v.Country, v.CurPageviews = 1, at, country, 0
	case at.Sub(v.LastAt) > SessionGap:
		v.Sessions++
		v.CurPageviews = 0
	default:
		v.DurationMS += at.Sub(v.LastAt).Milliseconds()
	}
	v.Events++
	v.LastAt = at
	v.Hours |= 1 << at.UTC().Hour()
	if pageview {
		v.Pageviews++
		v.CurPageviews++
		switch v.CurPageviews {
		case 1:
			v.Bounces++
		case 2:
			v.Bounces--
		}
	}
}

// AnalyticsDaily is a company's day: visitors (distinct ids), page views,
// events, sessions, bounces and the sessions' summed duration.
type AnalyticsDaily struct {
	CompanyID  string `gorm:"primaryKey;size:36"`
	Day        string `gorm:"primaryKey;size:10"`
	Visitors   int64  `gorm:"not null"`
	Pageviews  int64  `gorm:"not null"`
	Events     int64  `gorm:"not null"`
	Sessions   int64  `gorm:"not null"`
	Bounces    int64  `gorm:"not null"`
	DurationMS int64  `gorm:"not null"`
}

func (AnalyticsDaily) TableName() string { return "analytics_daily" }

// AnalyticsHourly is a company's hour (2006-01-02T15, UTC): visitors and
// page views, for the one-day trend. Its visitors are exact: a visitor
// counts in an hour when the hour's bit of their VisitorDay is first set.
type AnalyticsHourly struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	Hour      string `gorm:"primaryKey;size:13"`
	Visitors  int64  `gorm:"not null"`
	Pageviews int64  `gorm:"not null"`
}

func (AnalyticsHourly) TableName() string { return "analytics_hourly" }

// AnalyticsDailyPage counts a path's page views on a day.
type AnalyticsDailyPage struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	Day       string `gorm:"primaryKey;size:10"`
	Path      string `gorm:"primaryKey;size:500"`
	Pageviews int64  `gorm:"not null"`
}

func (AnalyticsDailyPage) TableName() string { return "analytics_daily_pages" }

// AnalyticsDailyReferrer counts the page views a referring host (or ""
// for direct visits) brought on a day.
type AnalyticsDailyReferrer struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	Day       string `gorm:"primaryKey;size:10"`
	Referrer  string `gorm:"primaryKey;size:253"`
	Pageviews int64  `gorm:"not null"`
}

func (AnalyticsDailyReferrer) TableName() string { return "analytics_daily_referrers" }

// AnalyticsVisitor is a visitor's last day with events: the visitors of
// a period ending today are those whose last day is in it.
type AnalyticsVisitor struct {
	CompanyID  string `gorm:"primaryKey;size:36"`
	DistinctID string `gorm:"primaryKey;size:200"`
	LastDay    string `gorm:"size:10;not null"`
}

func (AnalyticsVisitor) TableName() string { return "analytics_visitors" }

// AnalyticsPeriodVisitors is the distinct visitors of a closed period (no
// event can still arrive for its days), counted once.
type AnalyticsPeriodVisitors struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	FromDay   string `gorm:"primaryKey;size:10"`
	ToDay     string `gorm:"primaryKey;size:10"`
	Visitors  int64  `gorm:"not null"`
}

func (AnalyticsPeriodVisitors) TableName() string { return "analytics_period_visitors" }

// DayOf and HourOf name the UTC day and hour of t as the rollups key them.
func DayOf(t time.Time) string  { return t.UTC().Format("2006-01-02") }
func HourOf(t time.Time) string { return t.UTC().Format("2006-01-02T15") }

// NewAnalyticsKey makes a public analytics key: "hca_" and 24 base32
// characters (120 random bits), so keys cannot be guessed from each other.
func NewAnalyticsKey() string {
	b := make([]byte, 15)
	_, _ = rand.Read(b)
	return "hca_" + strings.ToLower(base32.StdEncoding.EncodeToString(b))
}
