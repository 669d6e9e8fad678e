package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"holdco/app"
	"holdco/logging"
	"holdco/models"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// TestOneMessageIsOneTrace sends a message over REST to an app whose spans
// are recorded in memory: the request's server span, the turn workflow it
// starts and every activity of that workflow are one connected trace (each
// span's parent is in it), ending with the activity that finishes the
// turn; the store's statements are spans of it, under the request's span
// and under each activity's. The JSON log lines of the request carry its trace id, and the
// metrics listener serves the request, the turn and Temporal's SDK
// metrics under names promlint accepts.
func TestOneMessageIsOneTrace(t *testing.T) {
	t.Parallel()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	var logs testenv.LogBuffer
	logger := logging.New(&logs, slog.LevelDebug, "json")
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.Start(ctx, embeddedConfig(t, t.TempDir(), map[string]string{"HOLDCO_METRICS_ADDR": "127.0.0.1:0"}), app.AllRoles, logger,
		app.WithTracerProvider(tp))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	base := "http://" + a.APIAddr()
	key := cliLogin(t, base, "tracy@example.com")
	cong := authedJSON(t, "GET", base+"/auth/me", key, "", 200)["conglomerate_id"].(string)
	_, err = a.Service.Billing.GrantCredits(ctx, a.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 50, "test")
	require.NoError(t, err)
	id := authedJSON(t, "POST", base+"/conglomerates/"+cong+"/companies", key, `{"name":"Trace Maps","idea":"Sell maps"}`, 201)["id"].(string)
	require.Eventually(t, func() bool {
		return authedJSON(t, "GET", base+"/companies/"+id+"/resources", key, "", 200)["ready"] == true
	}, testenv.EventualBound, 200*time.Millisecond)

	turnID := authedJSON(t, "POST", base+"/companies/"+id+"/messages", key, `{"message":"Plan the first map"}`, 202)["turn_id"].(string)
	require.Eventually(t, func() bool {
		s := authedJSON(t, "GET", base+"/turns/"+turnID, key, "", 200)["status"]
		return s != "queued" && s != "running"
	}, testenv.EventualBound, 100*time.Millisecond)

	// Analytics capture, served ahead of the REST router's gin chain, gets
	// the same middleware: request id, access log, route label, span name.
	siteKey := authedJSON(t, "GET", base+"/companies/"+id+"/analytics/summary?range=1d", key, "", 200)["key"].(string)
	capReq, err := http.NewRequest("POST", base+"/analytics/e/", strings.NewReader(`{"event":"$pageview","distinct_id":"t1","properties":{"token":"`+siteKey+`"}}`))
	require.NoError(t, err)
	capReq.Header.Set("X-Request-Id", "capture-trace-1")
	// A connection of its own: the API listener's front serves it (a
	// connection that began with another route is net/http's).
	capResp, err := (&http.Client{Transport: &http.Transport{}}).Do(capReq)
	require.NoError(t, err)
	capResp.Body.Close()
	require.Equal(t, 200, capResp.StatusCode)
	assert.Equal(t, "capture-trace-1", capResp.Header.Get("X-Request-Id"))

	// The request's server span is the root of its trace.
	var root sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "POST /companies/:company_id/messages" {
			root = s
		}
	}
	require.NotNil(t, root, "a server span named after the route")
	assert.Equal(t, trace.SpanKindServer, root.SpanKind())
	assert.False(t, root.Parent().IsValid())
	traceID := root.SpanContext().TraceID()

	// The workflow span ends with the workflow, after the last activity.
	// A workflow the worker evicted from its cache and replayed (a slow
	// machine) ended its first run's span early and started another, so
	// the wait is for a workflow span that ended after FinishTurn did.
	workflowSpan := "RunWorkflow:" + contract.TurnWorkflowName
	var spans []sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		spans = spans[:0]
		var finished, workflowEnd time.Time
		for _, s := range rec.Ended() {
			if s.SpanContext().TraceID() != traceID {
				continue
			}
			spans = append(spans, s)
			switch s.Name() {
			case workflowSpan:
				if s.EndTime().After(workflowEnd) {
					workflowEnd = s.EndTime()
				}
			case "RunActivity:FinishTurn": // the last of a retried one
				if s.EndTime().After(finished) {
					finished = s.EndTime()
				}
			}
		}
		return !finished.IsZero() && workflowEnd.After(finished)
	}, testenv.EventualBound, 50*time.Millisecond)

	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext().SpanID()] = true
	}
	var names []string
	slices.SortFunc(spans, func(x, y sdktrace.ReadOnlySpan) int { return x.StartTime().Compare(y.StartTime()) })
	for _, s := range spans {
		names = append(names, s.Name())
		if s != root {
			assert.True(t, ids[s.Parent().SpanID()], "span %s has its parent in the trace", s.Name())
		}
	}
	t.Logf("one message's trace: %s", strings.Join(names, " → "))
	assert.Contains(t, names, "StartWorkflow:"+contract.TurnWorkflowName)
	assert.Contains(t, names, workflowSpan)
	var activities []string
	for _, n := range names {
		if a, ok := strings.CutPrefix(n, "RunActivity:"); ok {
			activities = append(activities, a)
		}
	}
	require.NotEmpty(t, activities)
	assert.Contains(t, activities, "ModelStep", "the model calls")
	last := ""
	var lastEnd time.Time
	for _, s := range spans {
		if a, ok := strings.CutPrefix(s.Name(), "RunActivity:"); ok && s.EndTime().After(lastEnd) {
			last, lastEnd = a, s.EndTime()
		}
	}
	assert.Equal(t, "FinishTurn", last, "the last activity finishes the turn")

	// Store calls are spans of the trace too: the request's statements
	// under its server span, each activity's under the activity.
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	var requestDB, activityDB []string
	for _, s := range spans {
		if !strings.HasPrefix(s.Name(), "db.") {
			continue
		}
		assert.Equal(t, trace.SpanKindClient, s.SpanKind(), s.Name())
		parent := byID[s.Parent().SpanID()]
		if parent == nil {
			continue // reported above
		}
		if parent == root {
			requestDB = append(requestDB, s.Name())
		} else if a, ok := strings.CutPrefix(parent.Name(), "RunActivity:"); ok {
			activityDB = append(activityDB, a+" "+s.Name())
		}
	}
	t.Logf("the request's store spans: %s", strings.Join(requestDB, ", "))
	t.Logf("the activities' store spans: %s", strings.Join(activityDB, ", "))
	assert.Contains(t, requestDB, "db.create turns", "the request writes the turn")
	assert.Contains(t, activityDB, "ModelStep db.create credit_ledger_entries", "the model step charges")
	assert.Contains(t, activityDB, "FinishTurn db.update turns", "the last activity ends the turn")
	for _, s := range rec.Ended() {
		if strings.HasPrefix(s.Name(), "db.") {
			assert.True(t, s.Parent().IsValid(), "%s: a statement outside a trace (migration, sweep) makes no span", s.Name())
		}
	}

	// The request's log lines carry its trace id.
	found := false
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["trace_id"] == traceID.String() {
			found = true
		}
	}
	assert.True(t, found, "a JSON log line with trace_id %s", traceID)
	captureLine := false
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "http request" && rec["route"] == "/analytics/e/" {
			captureLine = rec["request_id"] == "capture-trace-1" && rec["status"] == 200.0 && rec["level"] == "DEBUG"
		}
	}
	assert.True(t, captureLine, "capture's access line, at debug, with its request id and status")
	captureSpan := false
	for _, s := range rec.Ended() {
		captureSpan = captureSpan || s.Name() == "POST /analytics/e/"
	}
	assert.True(t, captureSpan, "capture's server span is named after its route")

	// The metrics listener: the request by route, the turn, the SDK.
	resp, err := http.Get("http://" + a.MetricsAddr() + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	scrape := string(body)
	assert.Contains(t, scrape, `holdco_http_request_duration_seconds_count{listener="api",method="POST",route="/companies/:company_id/messages",status_class="2xx"}`)
	assert.Contains(t, scrape, `holdco_http_request_duration_seconds_count{listener="api",method="POST",route="/analytics/e/",status_class="2xx"}`)
	// The capture above was answered by the API listener's front (and
	// measured, logged and traced as every route, as checked above).
	assert.Regexp(t, `(?m)^holdco_http_front_requests_total\{listener="api"\} [1-9]`, scrape)
	assert.Contains(t, scrape, `holdco_turns_ended_total{state="completed"}`)
	assert.Contains(t, scrape, `holdco_model_calls_total{outcome="ok",provider="scripted"}`)
	assert.Contains(t, scrape, `holdco_provisioning_outcomes_total{kind="repository",outcome="ready"}`)
	assert.Contains(t, scrape, "holdco_credits_spent_total{")
	assert.Contains(t, scrape, "temporal_workflow_completed_total{")
	assert.Contains(t, scrape, "temporal_activity_execution_latency_seconds_bucket{")
	// The page view captured above was committed: its commit is counted
	// and timed.
	for _, name := range []string{"holdco_analytics_capture_commits_total", "holdco_analytics_capture_commit_seconds_total"} {
		m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(scrape)
		require.NotNil(t, m, name)
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		assert.Positive(t, v, name)
	}
	problems, err := promlint.New(strings.NewReader(scrape)).Lint()
	require.NoError(t, err)
	assert.Empty(t, problems)
	notFound, err := http.Get("http://" + a.MetricsAddr() + "/health")
	require.NoError(t, err)
	notFound.Body.Close()
	assert.Equal(t, 404, notFound.StatusCode, "the metrics listener serves only /metrics")
	onAPI, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	onAPI.Body.Close()
	assert.Equal(t, 404, onAPI.StatusCode, "the counters are never on the public API listener")
}

// TestMetricsPortClashNamesTheSetting: the metrics listener is bound with
// the role listeners, before anything slow, and a taken port names its
// variable.
func TestMetricsPortClashNamesTheSetting(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_, err = app.Start(context.Background(), embeddedConfig(t, t.TempDir(), map[string]string{"HOLDCO_METRICS_ADDR": ln.Addr().String()}),
		[]app.Role{app.RoleOAuth}, quietLogger())
	require.Error(t, err)
	assert.Equal(t, "HOLDCO_METRICS_ADDR: port "+port+" is in use", err.Error())
}

// TestPprofListenerOnlyWhenSet: HOLDCO_PPROF_ADDR serves net/http/pprof
// on a listener of its own; unset, no process serves it, on no listener.
func TestPprofListenerOnlyWhenSet(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := app.Start(ctx, embeddedConfig(t, t.TempDir(), map[string]string{"HOLDCO_PPROF_ADDR": "127.0.0.1:0"}),
		[]app.Role{app.RoleOAuth}, quietLogger())
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	require.NotEmpty(t, a.PprofAddr())
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("http://" + a.PprofAddr() + "/debug/pprof/")
	assert.Equal(t, 200, code)
	assert.Contains(t, body, "goroutine")
	code, body = get("http://" + a.PprofAddr() + "/debug/pprof/goroutine?debug=1")
	assert.Equal(t, 200, code)
	assert.Contains(t, body, "goroutine profile:")
	code, _ = get("http://" + a.PprofAddr() + "/metrics")
	assert.Equal(t, 404, code, "the profiling listener serves only /debug/pprof/")
	code, _ = get("http://" + a.OAuthAddr() + "/debug/pprof/")
	assert.Equal(t, 404, code, "never on a public listener")

	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	b, err := app.Start(ctx2, embeddedConfig(t, t.TempDir(), nil), []app.Role{app.RoleOAuth}, quietLogger())
	require.NoError(t, err)
	done2 := make(chan error, 1)
	go func() { done2 <- b.Run(ctx2) }()
	defer func() { cancel2(); <-done2 }()
	assert.Empty(t, b.PprofAddr(), "no profiling listener by default")
	code, _ = get("http://" + b.OAuthAddr() + "/debug/pprof/")
	assert.Equal(t, 404, code)
}
