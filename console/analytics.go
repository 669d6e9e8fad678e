package console

import (
	"fmt"
	"net/http"
	"strings"

	"holdco/service/analytics"
)

// countriesPageSize is how many countries one page of the table shows.
const countriesPageSize = 25

type analyticsData struct {
	Summary   analytics.Summary
	Chart     chart
	Countries []analytics.Country
	Pager     pager
	Ranges    []analytics.Range
}

func (c *Console) analyticsPage(w http.ResponseWriter, r *http.Request) {
	req, co, ok := c.openCompany(w, r)
	if !ok {
		return
	}
	rng := r.URL.Query().Get("range")
	s, err := c.svc.Analytics.Summary(req.ctx, req.companyID, rng)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	cs, err := c.svc.Analytics.Countries(req.ctx, req.companyID, rng)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	pg := pageOf(r, len(cs.Countries), countriesPageSize)
	d := analyticsData{Summary: s, Chart: chartOf(s), Countries: cs.Countries[pg.From:pg.To], Pager: pg, Ranges: analytics.Ranges}
	c.render(w, r, http.StatusOK, "analytics", c.companyPage(req, "Analytics", "analytics", co, d))
}

// chart is the trend drawn server-side as an inline SVG (no script): a
// line of visitors and one of page views over the period.
type chart struct {
	Width, Height, Top, Bottom, Left int
	Max                              int64
	Visitors, Pageviews              string // polyline points
	Ticks                            []tick
	Label                            string // the chart in words, for screen readers
}

type tick struct {
	X      float64
	Anchor string // the first label starts at its point, the last ends there
	Text   string
}

func chartOf(s analytics.Summary) chart {
	ch := chart{Width: 640, Height: 220, Top: 12, Bottom: 196, Left: 40}
	for _, p := range s.Trend {
		ch.Max = max(ch.Max, p.Visitors, p.Pageviews)
	}
	top := max(ch.Max, 1)
	n := len(s.Trend)
	x := func(i int) float64 {
		if n < 2 {
			return float64(ch.Left)
		}
		return float64(ch.Left) + float64(i)*float64(ch.Width-ch.Left-8)/float64(n-1)
	}
	y := func(v int64) float64 {
		return float64(ch.Bottom) - float64(v)*float64(ch.Bottom-ch.Top)/float64(top)
	}
	var vis, pv strings.Builder
	for i, p := range s.Trend {
		fmt.Fprintf(&vis, "%.1f,%.1f ", x(i), y(p.Visitors))
		fmt.Fprintf(&pv, "%.1f,%.1f ", x(i), y(p.Pageviews))
	}
	ch.Visitors, ch.Pageviews = strings.TrimSpace(vis.String()), strings.TrimSpace(pv.String())
	layout := "Jan 2"
	if s.TrendStep == "hour" {
		layout = "15:00"
	}
	if n > 0 {
		for j, i := range []int{0, n / 2, n - 1} {
			if len(ch.Ticks) > 0 && ch.Ticks[len(ch.Ticks)-1].X == x(i) {
				continue
			}
			ch.Ticks = append(ch.Ticks, tick{X: x(i), Anchor: []string{"start", "middle", "end"}[j], Text: s.Trend[i].Start.UTC().Format(layout)})
		}
	}
	ch.Label = fmt.Sprintf("Visitors and page views by %s from %s to %s: %.0f visitors, %.0f page views in all, at most %d in one %s.",
		s.TrendStep, s.From.Format("Jan 2"), s.To.Format("Jan 2"), s.Visitors.Value, s.Pageviews.Value, ch.Max, s.TrendStep)
	return ch
}

// pct is a metric's change against the period before, in words.
func pct(change *float64) string {
	if change == nil {
		return "no earlier data"
	}
	return fmt.Sprintf("%+.0f%% vs the period before", *change)
}
