package store

import (
	"context"
	"slices"
	"strings"

	"holdco/models"
)

// Analytics keys. A company's key is made with the company (CreateCompany)
// and never changes; it is public (it sits in the loader script), so look-
// ups by key are how capture finds the company, like a site by its handle.

func (s *Store) createAnalyticsKey(ctx context.Context, companyID string) error {
	k := models.AnalyticsKey{CompanyID: companyID, Key: models.NewAnalyticsKey(), CreatedAt: now()}
	return wrap("create analytics key", s.db.WithContext(ctx).Create(&k).Error)
}

// AnalyticsKey returns the scope's company's public analytics key.
func (s Analytics) AnalyticsKey(ctx context.Context, c CompanyScope) (string, error) {
	if err := c.check("analytics key"); err != nil {
		return "", err
	}
	var k models.AnalyticsKey
	err := s.db.WithContext(ctx).Where("company_id = ?", c.id).Take(&k).Error
	return k.Key, wrap("analytics key", err)
}

// AnalyticsCompanyByKey returns the id of the non-archived company whose
// public analytics key is key, or models.ErrNotFound.
func (s Analytics) AnalyticsCompanyByKey(ctx context.Context, key string) (string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Table("analytics_keys AS k").Joins("JOIN companies c ON c.id = k.company_id").
		Where("k.key = ? AND c.status <> ?", key, models.CompanyArchived).Limit(1).Pluck("k.company_id", &ids).Error
	if err == nil && len(ids) == 0 {
		err = models.ErrNotFound
	}
	if err != nil {
		return "", wrap("analytics company by key", err)
	}
	return ids[0], nil
}

// AnalyticsKeyByHandle returns the public analytics key of the
// non-archived company with this handle, or models.ErrNotFound.
func (s Analytics) AnalyticsKeyByHandle(ctx context.Context, handle string) (string, error) {
	var keys []string
	err := s.db.WithContext(ctx).Table("analytics_keys AS k").Joins("JOIN companies c ON c.id = k.company_id").
		Where("c.handle = ? AND c.status <> ?", handle, models.CompanyArchived).Limit(1).Pluck("k.key", &keys).Error
	if err == nil && len(keys) == 0 {
		err = models.ErrNotFound
	}
	if err != nil {
		return "", wrap("analytics key by handle", err)
	}
	return keys[0], nil
}

// Reads of the rollups. Days are 2006-01-02 strings, ranges inclusive.

// AnalyticsDays returns the company's daily rollups from..to, by day.
func (s Analytics) AnalyticsDays(ctx context.Context, c CompanyScope, from, to string) ([]models.AnalyticsDaily, error) {
	if err := c.check("analytics days"); err != nil {
		return nil, err
	}
	out := []models.AnalyticsDaily{}
	err := s.db.WithContext(ctx).Where("company_id = ? AND day >= ? AND day <= ?", c.id, from, to).Order("day").Find(&out).Error
	return out, wrap("analytics days", err)
}

// AnalyticsHours returns the company's hourly rollups from..to (hours as
// 2006-01-02T15), by hour.
func (s Analytics) AnalyticsHours(ctx context.Context, c CompanyScope, from, to string) ([]models.AnalyticsHourly, error) {
	if err := c.check("analytics hours"); err != nil {
		return nil, err
	}
	out := []models.AnalyticsHourly{}
	err := s.db.WithContext(ctx).Where("company_id = ? AND hour >= ? AND hour <= ?", c.id, from, to).Order("hour").Find(&out).Error
	return out, wrap("analytics hours", err)
}

// AnalyticsVisitorsSince counts the company's visitors from day from to
// today: those whose last day with events is from or later (one index
// range of analytics_visitors, not a distinct count over visitor-days).
func (s Analytics) AnalyticsVisitorsSince(ctx context.Context, c CompanyScope, from string) (int64, error) {
	if err := c.check("analytics visitors"); err != nil {
		return 0, err
	}
	var n int64
	err := s.db.WithContext(ctx).Model(&models.AnalyticsVisitor{}).Where("company_id = ? AND last_day >= ?", c.id, from).Count(&n).Error
	return n, wrap("analytics visitors", err)
}

// AnalyticsPeriodVisitors counts the company's distinct visitors from..to
// over the visitor-day rollup. A closed period (no event can still arrive
// for its days) is counted once and kept.
func (s Analytics) AnalyticsPeriodVisitors(ctx context.Context, c CompanyScope, from, to string, closed bool) (int64, error) {
	if err := c.check("analytics period visitors"); err != nil {
		return 0, err
	}
	db := s.db.WithContext(ctx)
	if closed {
		var kept []int64
		if err := db.Model(&models.AnalyticsPeriodVisitors{}).Where("company_id = ? AND from_day = ? AND to_day = ?", c.id, from, to).
			Pluck("visitors", &kept).Error; err != nil {
			return 0, wrap("analytics period visitors", err)
		}
		if len(kept) > 0 {
			return kept[0], nil
		}
	}
	var n int64
	if err := db.Raw(`SELECT COUNT(DISTINCT distinct_id) FROM analytics_visitor_days WHERE company_id = ? AND day >= ? AND day <= ?`,
		c.id, from, to).Scan(&n).Error; err != nil {
		return 0, wrap("analytics period visitors", err)
	}
	if closed {
		if err := db.Exec(`INSERT INTO analytics_period_visitors (company_id, from_day, to_day, visitors) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, c.id, from, to, n).Error; err != nil {
			return 0, wrap("analytics period visitors", err)
		}
	}
	return n, nil
}

// AnalyticsCount is a name (a path, a referring host, a country) with its
// figures in a period and in the one before.
type AnalyticsCount struct {
	Name          string
	Visitors      int64
	Pageviews     int64
	PrevPageviews int64
}

// AnalyticsTop returns the names of dimension ("pages" or "referrers")
// with the most page views from..to (up to limit), each with its page
// views in the period before (prevFrom..from-1).
func (s Analytics) AnalyticsTop(ctx context.Context, c CompanyScope, dimension string, prevFrom, from, to string, limit int) ([]AnalyticsCount, error) {
	if err := c.check("analytics top " + dimension); err != nil {
		return nil, err
	}
	table, col := "analytics_daily_pages", "path"
	if dimension == "referrers" {
		table, col = "analytics_daily_referrers", "referrer"
	}
	out := []AnalyticsCount{}
	err := s.db.WithContext(ctx).Raw(`SELECT `+col+` AS name,
		SUM(CASE WHEN day >= ? THEN pageviews ELSE 0 END) AS pageviews,
		SUM(CASE WHEN day < ? THEN pageviews ELSE 0 END) AS prev_pageviews
		FROM `+table+` WHERE company_id = ? AND day >= ? AND day <= ?
		GROUP BY `+col+` HAVING SUM(CASE WHEN day >= ? THEN pageviews ELSE 0 END) > 0
		ORDER BY pageviews DESC, name LIMIT ?`, from, from, c.id, prevFrom, to, from, limit).Scan(&out).Error
	return out, wrap("analytics top "+dimension, err)
}

// AnalyticsCountries returns visitors (distinct) and page views per
// country from..to, a visitor-day counted in the country of its first
// event; most visitors first.
func (s Analytics) AnalyticsCountries(ctx context.Context, c CompanyScope, from, to string) ([]AnalyticsCount, error) {
	if err := c.check("analytics countries"); err != nil {
		return nil, err
	}
	out := []AnalyticsCount{}
	err := s.db.WithContext(ctx).Raw(`SELECT country AS name, COUNT(DISTINCT distinct_id) AS visitors, SUM(pageviews) AS pageviews
		FROM analytics_visitor_days WHERE company_id = ? AND day >= ? AND day <= ?
		GROUP BY country ORDER BY visitors DESC, pageviews DESC, name`, c.id, from, to).Scan(&out).Error
	return out, wrap("analytics countries", err)
}

// AnalyticsRawEvents returns the company's raw events from..to in time
// order (tests recount the rollups from them).
func (s Analytics) AnalyticsRawEvents(ctx context.Context, c CompanyScope, from, to string) ([]models.AnalyticsEvent, error) {
	if err := c.check("analytics raw events"); err != nil {
		return nil, err
	}
	out := []models.AnalyticsEvent{}
	err := s.db.WithContext(ctx).Where("company_id = ? AND day >= ? AND day <= ?", c.id, from, to).Order("at, id").Find(&out).Error
	return out, wrap("analytics raw events", err)
}

// AnalyticsRollups returns every rollup row of the company (tests compare
// them with a recount).
func (s Analytics) AnalyticsRollups(ctx context.Context, c CompanyScope) (AnalyticsRollupRows, error) {
	var r AnalyticsRollupRows
	if err := c.check("analytics rollups"); err != nil {
		return r, err
	}
	db := s.db.WithContext(ctx)
	for _, q := range []struct {
		dst   any
		order string
	}{{&r.VisitorDays, "day, distinct_id"}, {&r.Visitors, "distinct_id"}, {&r.Daily, "day"}, {&r.Hourly, "hour"}, {&r.Pages, "day, path"}, {&r.Referrers, "day, referrer"}} {
		if err := db.Where("company_id = ?", c.id).Order(q.order).Find(q.dst).Error; err != nil {
			return r, wrap("analytics rollups", err)
		}
	}
	return r, nil
}

// AnalyticsRollupRows are a company's rollups.
type AnalyticsRollupRows struct {
	VisitorDays []models.VisitorDay
	Visitors    []models.AnalyticsVisitor
	Daily       []models.AnalyticsDaily
	Hourly      []models.AnalyticsHourly
	Pages       []models.AnalyticsDailyPage
	Referrers   []models.AnalyticsDailyReferrer
}

// sortedCompanies returns the distinct company ids of events, sorted (the
// order Postgres takes their locks in, so two writers cannot deadlock).
func sortedCompanies(events []models.AnalyticsEvent) []string {
	ids := make([]string, 0, 4)
	for _, e := range events {
		ids = append(ids, e.CompanyID)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// placeholders returns n groups of "(?,?,…)" with width marks each.
func placeholders(n, width int) string {
	group := "(" + strings.TrimSuffix(strings.Repeat("?,", width), ",") + ")"
	var b strings.Builder
	b.Grow(n * (len(group) + 1))
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(group)
	}
	return b.String()
}

// DeleteAnalyticsEventsBefore deletes raw events of days before day
// (2006-01-02) for every company, in statements of at most chunk rows
// (each a short write: request writes are not held up), and returns how
// many went. Rollups are not touched: the reports keep every day.
func (s Analytics) DeleteAnalyticsEventsBefore(ctx context.Context, day string, chunk int) (int64, error) {
	var companies []string
	if err := s.db.WithContext(ctx).Model(&models.AnalyticsKey{}).Order("company_id").Pluck("company_id", &companies).Error; err != nil {
		return 0, wrap("delete old analytics events", err)
	}
	var total int64
	for _, id := range companies {
		for {
			// The (company, day, visitor) index finds the rows.
			res := s.db.WithContext(ctx).Exec(`DELETE FROM analytics_events WHERE id IN
				(SELECT id FROM analytics_events WHERE company_id = ? AND day < ? LIMIT ?)`, id, day, chunk)
			if res.Error != nil {
				return total, wrap("delete old analytics events", res.Error)
			}
			total += res.RowsAffected
			if res.RowsAffected < int64(chunk) {
				break
			}
		}
	}
	return total, nil
}
