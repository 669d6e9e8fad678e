package agenttools

import (
	"context"

	"holdco/service/analytics"
)

// Analytics (the company site's visitors).

type GetAnalyticsInput struct {
	Range string `json:"range,omitempty" jsonschema:"the last 1, 7, 30 or 90 days, today included (default 30d); figures are compared with the period before" enum:"1d,7d,30d,90d"`
}

type AnalyticsMetric struct {
	Value    float64  `json:"value"`
	Previous float64  `json:"previous"`
	Change   *float64 `json:"change_pct,omitempty"`
}

type AnalyticsNamed struct {
	Name      string          `json:"name"`
	Pageviews AnalyticsMetric `json:"pageviews"`
}

type AnalyticsCountry struct {
	Country   string `json:"country"`
	Visitors  int64  `json:"visitors"`
	Pageviews int64  `json:"pageviews"`
}

type AnalyticsReport struct {
	Key            string             `json:"key"`
	LoaderScript   string             `json:"loader_script"`
	Range          string             `json:"range"`
	From           string             `json:"from"`
	To             string             `json:"to"`
	Visitors       AnalyticsMetric    `json:"visitors"`
	Pageviews      AnalyticsMetric    `json:"pageviews"`
	Sessions       AnalyticsMetric    `json:"sessions"`
	BounceRate     AnalyticsMetric    `json:"bounce_rate_pct"`
	AvgSessionSecs AnalyticsMetric    `json:"avg_session_seconds"`
	TopPages       []AnalyticsNamed   `json:"top_pages"`
	TopReferrers   []AnalyticsNamed   `json:"top_referrers"`
	Countries      []AnalyticsCountry `json:"countries"`
}

func analyticsMetric(m analytics.Metric) AnalyticsMetric {
	return AnalyticsMetric{Value: m.Value, Previous: m.Previous, Change: m.Change}
}

func analyticsNamed(ns []analytics.Named) []AnalyticsNamed {
	out := make([]AnalyticsNamed, len(ns))
	for i, n := range ns {
		name := n.Name
		if name == "" {
			name = "(direct)"
		}
		out[i] = AnalyticsNamed{Name: name, Pageviews: analyticsMetric(n.Pageviews)}
	}
	return out
}

func registerAnalytics(c *Catalog, s *analytics.Service) {
	Register(c, "get_analytics", "The company site's analytics over a range: visitors, page views, sessions, bounce rate and mean session duration "+
		"(each with the change against the period before), top pages, top referrers and visitors per country; "+
		"also the loader_script tag to put in the site's pages (it records page views) and the public key.",
		func(ctx context.Context, companyID string, in GetAnalyticsInput) (AnalyticsReport, error) {
			sum, err := s.Summary(ctx, companyID, in.Range)
			if err != nil {
				return AnalyticsReport{}, err
			}
			cs, err := s.Countries(ctx, companyID, in.Range)
			if err != nil {
				return AnalyticsReport{}, err
			}
			out := AnalyticsReport{Key: sum.Key, LoaderScript: `<script async src="` + sum.LoaderURL + `"></script>`, Range: sum.Range, From: sum.From.Format("2006-01-02"), To: sum.To.Format("2006-01-02"),
				Visitors: analyticsMetric(sum.Visitors), Pageviews: analyticsMetric(sum.Pageviews), Sessions: analyticsMetric(sum.Sessions),
				BounceRate: analyticsMetric(sum.BounceRate), AvgSessionSecs: analyticsMetric(sum.AvgSessionSecs),
				TopPages: analyticsNamed(sum.TopPages), TopReferrers: analyticsNamed(sum.TopReferrers), Countries: make([]AnalyticsCountry, len(cs.Countries))}
			for i, x := range cs.Countries {
				out.Countries[i] = AnalyticsCountry{Country: countryName(x.Country), Visitors: x.Visitors, Pageviews: x.Pageviews}
			}
			return out, nil
		})
}

func countryName(code string) string {
	if code == "" {
		return "unknown"
	}
	return code
}
