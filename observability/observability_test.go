package observability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

// scrape reads the registry as Prometheus would.
func scrape(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.String()
}

// TestMetricNamesPassPromlint exercises every domain metric, the HTTP
// histogram and SDK metrics of each kind, then lints the whole scrape:
// names in base units, counters ending in _total, help on every family.
func TestMetricNamesPassPromlint(t *testing.T) {
	TurnEnded(string(models.TurnCompleted))
	ModelCalled("scripted", nil, 20*time.Millisecond)
	ModelCalled("scripted", errors.New("boom"), time.Second)
	AgentToolCalled("write_document", true, nil)
	AgentToolCalled("made_up", false, models.Errorf(models.CodeRateLimited, "slow down"))
	CreditsSpent(string(models.EntryTokenUsagePartial), 3)
	CreditsGranted(string(models.EntryGrantWelcome), 15)
	remove := CaptureSource(func() CaptureCounts {
		return CaptureCounts{Stored: 4, Malformed: 1, Queued: 2, Unfolded: 3, Commits: 2, CommitSeconds: 0.001}
	})
	defer remove()
	Provisioned(string(models.ResourceRepository), string(models.ResourceReady))
	Healed(true)
	SweepRan("turns", nil)
	ConnectorToolCalled("get_turn", models.Errorf(models.CodeNotFound, "no turn"))
	h := TemporalMetrics().WithTags(map[string]string{"namespace": "default", "task-queue": "holdco"})
	series := map[string]string{"namespace": "default", "task_queue": "holdco"}
	requests := counterValue(t, "temporal_request_total", series) // other runs (-count) counted before
	h.Counter("temporal_request").Inc(1)
	h.Gauge("temporal_num_pollers").Update(2)
	h.Timer("temporal_request_latency").Record(15 * time.Millisecond)
	MeasureHTTP("api", http.NotFoundHandler(), HTTPOptions{}).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	served, handedOff := FrontCounters("api")
	served()
	handedOff()

	body := scrape(t)
	for _, name := range []string{"holdco_turns_ended_total", "holdco_model_calls_total", "holdco_model_call_duration_seconds_bucket",
		"holdco_agent_tool_calls_total", "holdco_credits_spent_total", "holdco_credits_granted_total", "holdco_analytics_capture_events_total",
		"holdco_analytics_capture_queue_events", "holdco_analytics_capture_unfolded_events",
		"holdco_analytics_capture_commits_total", "holdco_analytics_capture_commit_seconds_total", "holdco_provisioning_outcomes_total", "holdco_heals_total", "holdco_sweep_runs_total",
		"holdco_rate_limit_refusals_total", "holdco_connector_tool_calls_total", "holdco_http_request_duration_seconds_bucket",
		"holdco_http_front_requests_total", "holdco_http_front_handoffs_total", "temporal_request_total", "temporal_num_pollers", "temporal_request_latency_seconds_bucket", "go_goroutines", "process_cpu_seconds_total"} {
		assert.Contains(t, body, "\n"+name, name)
	}
	assert.Contains(t, body, `holdco_agent_tool_calls_total{outcome="error",tool="unknown"}`, "a name outside the catalog is not a label value")
	assert.Contains(t, body, `holdco_rate_limit_refusals_total{surface="agent_tool"}`)
	assert.Contains(t, body, `holdco_connector_tool_calls_total{outcome="not_found",tool="get_turn"}`)
	assert.Contains(t, body, `temporal_request_total{namespace="default",task_queue="holdco"}`, "the SDK's tags are labels")
	assert.Equal(t, requests+1, counterValue(t, "temporal_request_total", series))

	problems, err := promlint.New(strings.NewReader(body)).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems, "promlint")
}

// TestPromlintCatchesABadName shows the lint is not vacuous.
func TestPromlintCatchesABadName(t *testing.T) {
	bad := "# HELP holdco_requests Requests.\n# TYPE holdco_requests counter\nholdco_requests 1\n"
	problems, err := promlint.New(strings.NewReader(bad)).Lint()
	require.NoError(t, err)
	assert.NotEmpty(t, problems)
}

// unwrapper is a response writer around another, as gin's is.
type unwrapper struct{ http.ResponseWriter }

func (u unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// TestMeasureHTTPLabelsByRouteTemplate: the ServeMux pattern (or the
// router's SetRoute, or the fallback) is the route label, never the raw
// path; the status is counted by class; a 429 is a refusal of the
// listener.
func TestMeasureHTTPLabelsByRouteTemplate(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /things/{id}", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("POST /slow", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })
	routed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetRoute(w, "/routed/:id")
		w.WriteHeader(http.StatusInternalServerError)
	})
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetRoute(unwrapper{unwrapper{w}}, "/wrapped/:id") // a router's own writer around the listener's
		w.WriteHeader(http.StatusNoContent)
	})
	// Deltas: the registry is the process's, and -count runs again.
	series := []struct {
		listener, method, route, class string
		added                          uint64
	}{{"test_mux", "GET", "GET /things/{id}", "2xx", 2}, {"test_mux", "POST", "POST /slow", "4xx", 1},
		{"test_router", "other", "/routed/:id", "5xx", 1}, {"test_wrapped", "GET", "/wrapped/:id", "2xx", 1}, {"test_fallback", "GET", "/{site...}", "4xx", 1}}
	before := make([]uint64, len(series))
	for i, s := range series {
		before[i] = histogramCount(t, s.listener, s.method, s.route, s.class)
	}
	limitedBefore := testutil.ToFloat64(rateLimited.WithLabelValues("test_mux"))
	h := MeasureHTTP("test_mux", mux, HTTPOptions{})
	for _, path := range []string{"/things/1", "/things/2"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		require.Equal(t, "ok", rec.Body.String())
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/slow", nil))
	MeasureHTTP("test_router", routed, HTTPOptions{}).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("BREW", "/routed/7", nil))
	MeasureHTTP("test_wrapped", wrapped, HTTPOptions{}).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/wrapped/7", nil))
	MeasureHTTP("test_fallback", http.NotFoundHandler(), HTTPOptions{Route: func(*http.Request) string { return "/{site...}" }}).
		ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/acme/index.html", nil))

	for i, s := range series {
		assert.Equal(t, before[i]+s.added, histogramCount(t, s.listener, s.method, s.route, s.class), "%v", s)
	}
	assert.Equal(t, limitedBefore+1, testutil.ToFloat64(rateLimited.WithLabelValues("test_mux")))
	assert.NotContains(t, scrape(t), "/things/1", "no raw path in a label")
}

func histogramCount(t *testing.T, listener, method, route, class string) uint64 {
	t.Helper()
	body := scrape(t)
	line := `holdco_http_request_duration_seconds_count{listener="` + listener + `",method="` + method + `",route="` + route + `",status_class="` + class + `"} `
	i := strings.Index(body, line)
	if i < 0 {
		return 0 // no such series yet
	}
	var n uint64
	_, err := fmt.Sscan(body[i+len(line):], &n)
	require.NoError(t, err)
	return n
}

// TestTemporalMetricsUnionLabels: the SDK may use one name with different
// tag sets; the family's labels are their union, so the registry can
// still be gathered.
func TestTemporalMetricsUnionLabels(t *testing.T) {
	h := TemporalMetrics()
	plain, poll := map[string]string{"namespace": "a", "operation": ""}, map[string]string{"namespace": "a", "operation": "Poll"}
	plainBefore, pollBefore := counterValue(t, "temporal_union_test_total", plain), counterValue(t, "temporal_union_test_total", poll)
	h.WithTags(map[string]string{"namespace": "a"}).Counter("temporal_union_test").Inc(2)
	h.WithTags(map[string]string{"namespace": "a", "operation": "Poll"}).Counter("temporal_union_test").Inc(3)
	_, err := Registry.Gather()
	require.NoError(t, err)
	body := scrape(t)
	assert.Contains(t, body, `temporal_union_test_total{namespace="a",operation=""}`, "the family has both labels")
	assert.Equal(t, plainBefore+2, counterValue(t, "temporal_union_test_total", plain))
	assert.Equal(t, pollBefore+3, counterValue(t, "temporal_union_test_total", poll))
}

// TestCaptureSourceKeepsRetiredCounts: a capture service that stops keeps
// its counts in the totals (counters never go back).
func TestCaptureSourceKeepsRetiredCounts(t *testing.T) {
	series := []struct {
		name   string
		labels map[string]string
		added  float64
	}{{"holdco_analytics_capture_events_total", map[string]string{"outcome": "accepted"}, 10},
		{"holdco_analytics_capture_commits_total", nil, 4}, {"holdco_analytics_capture_commit_seconds_total", nil, 0.25}}
	before := make([]float64, len(series))
	for i, s := range series {
		before[i] = counterValue(t, s.name, s.labels)
	}
	remove := CaptureSource(func() CaptureCounts { return CaptureCounts{Stored: 10, Queued: 5, Commits: 4, CommitSeconds: 0.25} })
	check := func(when string) {
		for i, s := range series {
			assert.InDelta(t, before[i]+s.added, counterValue(t, s.name, s.labels), 1e-9, "%s %s", s.name, when)
		}
	}
	check("while the source is there")
	remove()
	check("once it is removed")
}

// counterValue is the value of the counter series name{labels}, 0 when
// it is not there yet.
func counterValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// TestSweepCutByShutdownIsNotCounted: a pass ended by cancellation is not
// an error of the sweep.
func TestSweepCutByShutdownIsNotCounted(t *testing.T) {
	okBefore := testutil.ToFloat64(sweepRuns.WithLabelValues("cut_test", OutcomeOK))
	errBefore := testutil.ToFloat64(sweepRuns.WithLabelValues("cut_test", OutcomeError))
	SweepRan("cut_test", context.Canceled)
	SweepRan("cut_test", errors.New("database down"))
	assert.Equal(t, okBefore, testutil.ToFloat64(sweepRuns.WithLabelValues("cut_test", OutcomeOK)))
	assert.Equal(t, errBefore+1, testutil.ToFloat64(sweepRuns.WithLabelValues("cut_test", OutcomeError)))
}
