package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
	"holdco/store"
	"holdco/testenv"
)

// analyticsSite is an api-role process with one company to record
// analytics for.
type analyticsSite struct {
	app      *app.App
	base     string // the API's address
	as       context.Context
	company  models.Company
	key      string
	stop     func()
	database string // DATABASE_URL of the app (its SQLite file or a Postgres schema)
}

func startAnalyticsSite(t *testing.T) *analyticsSite {
	t.Helper()
	ctx := t.Context()
	cfg := embeddedConfig(t, t.TempDir(), nil)
	a, stop := startApp(t, cfg, quietLogger(), app.RoleAPI)
	user, cong, err := a.Store.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "site@example.com", NormalizedEmail: "site@example.com", Name: "Site"}, "Site")
	require.NoError(t, err)
	as := service.WithPrincipal(ctx, service.Principal{Credential: service.CredentialWebSession, CredentialID: "s1", UserID: user.ID, ConglomerateID: cong.ID})
	c, err := a.Service.Companies.CreateCompany(as, cong.ID, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	key, err := a.Service.Analytics.Key(as, c.ID)
	require.NoError(t, err)
	return &analyticsSite{app: a, base: "http://" + a.APIAddr(), as: as, company: c, key: key, stop: stop, database: cfg.Database.URL}
}

// pageviews waits until the summary of today shows at least want page
// views (the writer flushes every 250 ms) and returns it.
func (s *analyticsSite) pageviews(t *testing.T, want float64) float64 {
	t.Helper()
	var got float64
	require.Eventually(t, func() bool {
		sum, err := s.app.Service.Analytics.Summary(s.as, s.company.ID, "1d")
		require.NoError(t, err)
		got = sum.Pageviews.Value
		return got >= want
	}, testenv.EventualBound, 50*time.Millisecond, "page views in the summary")
	return got
}

// Events accepted just before Ctrl-C are stored: the api role drains the
// capture queue after its listener stops and before the store closes.
func TestAnalyticsQueueIsDrainedOnShutdown(t *testing.T) {
	t.Parallel()
	s := startAnalyticsSite(t)
	const n = 300
	for i := range n {
		body := fmt.Sprintf(`{"api_key":%q,"event":"$pageview","distinct_id":"v%d","properties":{"$current_url":"https://shop.example/"}}`, s.key, i%7)
		resp, err := http.Post(s.base+"/analytics/e/", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	s.stop()
	st, err := store.Open(context.Background(), s.database, quietLogger())
	require.NoError(t, err)
	defer st.Close()
	sc, err := st.SystemCompanyScope(context.Background(), s.company.ID)
	require.NoError(t, err)
	raw, err := st.Analytics().AnalyticsRawEvents(context.Background(), sc, "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	assert.Len(t, raw, n)
	days, err := st.Analytics().AnalyticsDays(context.Background(), sc, "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	var pv int64
	for _, d := range days {
		pv += d.Pageviews
	}
	assert.Equal(t, int64(n), pv, "rolled up with them")
}

// posthog-js, unchanged, under jsdom: its page views reach the summary.
func TestPostHogJSPageviewsShowUpInTheSummary(t *testing.T) {
	t.Parallel()
	testenv.NodeScripts(t, "analytics")
	s := startAnalyticsSite(t)
	out := node(t, "analytics", nil, "posthog.mjs", s.base, s.key, "3")
	var res struct {
		DistinctID string `json:"distinct_id"`
		Captured   int    `json:"captured"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &res), out)
	require.NotEmpty(t, res.DistinctID)
	assert.Equal(t, float64(3), s.pageviews(t, 3))
	sum, err := s.app.Service.Analytics.Summary(s.as, s.company.ID, "1d")
	require.NoError(t, err)
	assert.Equal(t, float64(1), sum.Visitors.Value, "one browser, one anonymous id")
	assert.Equal(t, float64(1), sum.Sessions.Value)
	require.NotEmpty(t, sum.TopReferrers)
	assert.Equal(t, "news.example", sum.TopReferrers[0].Name)
	st := s.app.Service.Analytics.Stats()
	assert.Zero(t, st.Malformed+st.UnknownKey, "posthog-js's requests are all understood")
	fs := s.app.APIFrontStats()
	assert.Positive(t, fs.Served, "posthog-js's requests went through the front")
	assert.Zero(t, fs.HandedOff, "none of them was handed to net/http")
}

// The loader script in headless Chromium, on a page of another origin,
// records a page view.
func TestLoaderRecordsAPageviewInChromium(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	testenv.NodeScripts(t, "analytics")
	s := startAnalyticsSite(t)
	site := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Shop</title><script async src="%s/analytics/v1.js?c=%s"></script></head><body>hi</body></html>`, s.base, s.key)
	}))
	node(t, "analytics", nil, "loader.mjs", browser, site+"/landing?utm_source=ads", s.base+"/analytics/e/")
	s.pageviews(t, 1)
	sum, err := s.app.Service.Analytics.Summary(s.as, s.company.ID, "1d")
	require.NoError(t, err)
	require.NotEmpty(t, sum.TopPages)
	assert.Equal(t, "/landing", sum.TopPages[0].Name)
	raw, err := s.app.Store.Analytics().AnalyticsRawEvents(context.Background(), systemScope(t, s.app.Store, s.company.ID), "0000-00-00", "9999-99-99")
	require.NoError(t, err)
	require.Len(t, raw, 1)
	assert.Equal(t, "ads", raw[0].UTMSource)
	assert.Positive(t, raw[0].ScreenWidth)
	// Chromium's requests to the API origin (the loader, the page view)
	// were the front's: none was handed to net/http.
	fs := s.app.APIFrontStats()
	assert.GreaterOrEqual(t, fs.Served, int64(2), "the loader and the page view")
	assert.Zero(t, fs.HandedOff)
}
