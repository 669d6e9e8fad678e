package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/logging"
	"holdco/models"
)

// widgetInput exercises the validation hook the way every JSON endpoint will.
type widgetInput struct {
	ID   string `path:"id" format:"uuid"`
	Mode string `query:"mode" enum:"fast,slow" required:"false"`
	Body struct {
		Name  string   `json:"name" minLength:"1" maxLength:"64"`
		Count int      `json:"count" minimum:"1" maximum:"10"`
		Tags  []string `json:"tags,omitempty" maxItems:"2"`
	}
}

type widgetOutput struct {
	Body struct {
		Name string `json:"name"`
	}
}

func newTestRouter(t *testing.T, logs io.Writer, checks ...HealthCheck) *Router {
	t.Helper()
	if logs == nil {
		logs = io.Discard
	}
	r := New(Deps{Logger: logging.New(logs, slog.LevelDebug, "json"), Health: checks})
	huma.Register(r.API, huma.Operation{OperationID: "put-widget", Method: http.MethodPut, Path: "/widgets/{id}"},
		func(ctx context.Context, in *widgetInput) (*widgetOutput, error) {
			switch in.Body.Name {
			case "taken":
				return nil, models.Errorf(models.CodeHandleTaken, "The handle %q is taken.", in.Body.Name).With("suggested_handle", "taken-2")
			case "boom":
				return nil, errors.New("database exploded")
			case "bad-field":
				return nil, models.Errorf(models.CodeInvalidArgument, "Handle must be a lower-case slug.").WithField("handle")
			case "anon":
				return nil, models.Errorf(models.CodeUnauthenticated, "Sign in first.")
			case "down":
				return nil, models.Errorf(models.CodeUpstreamUnavailable, "The provider failed.")
			case "down-for-now":
				return nil, models.Errorf(models.CodeUpstreamUnavailable, "The workflow service does not answer; retry in 5 seconds.").With("retry_after_seconds", int64(5))
			}
			out := &widgetOutput{}
			out.Body.Name = in.Body.Name
			return out, nil
		})
	return r
}

func do(t *testing.T, h http.Handler, method, path, body string, header ...string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var decoded map[string]any
	if rec.Body.Len() > 0 {
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &decoded), "body: %s", rec.Body.String())
	}
	return rec, decoded
}

const widgetPath = "/widgets/0b7c6a2e-6a53-4c8e-9d1f-3f2a1b0c9d8e"

func TestValidationFailuresUseHTTPValidationError(t *testing.T) {
	r := newTestRouter(t, nil)
	cases := []struct {
		name, path, body string
		header           []string
		loc              []any
		typ              string
	}{
		{"missing field", widgetPath, `{"count":1}`, nil, []any{"body", "name"}, "missing"},
		{"too short", widgetPath, `{"name":"","count":1}`, nil, []any{"body", "name"}, "string_too_short"},
		{"too large", widgetPath, `{"name":"a","count":11}`, nil, []any{"body", "count"}, "less_than_equal"},
		{"wrong type", widgetPath, `{"name":"a","count":"x"}`, nil, []any{"body", "count"}, "int_parsing"},
		{"array index", widgetPath, `{"name":"a","count":1,"tags":["a",1]}`, nil, []any{"body", "tags", 1.0}, "string_type"},
		{"malformed json", widgetPath, `{"name":`, nil, []any{"body"}, "json_invalid"},
		{"no body", widgetPath, ``, nil, []any{"body"}, "missing"},
		{"not json", widgetPath, `name=a`, []string{"Content-Type", "application/x-www-form-urlencoded"}, []any{"body"}, "content_type"},
		{"bad path param", "/widgets/not-a-uuid", `{"name":"a","count":1}`, nil, []any{"path", "id"}, "uuid_parsing"},
		{"bad query enum", widgetPath + "?mode=medium", `{"name":"a","count":1}`, nil, []any{"query", "mode"}, "enum"},
		{"domain invalid_argument", widgetPath, `{"name":"bad-field","count":1}`, nil, []any{"body", "handle"}, "value_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, body := do(t, r, http.MethodPut, tc.path, tc.body, tc.header...)
			require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
			require.Len(t, body, 1, "only detail: %s", rec.Body.String())
			detail := body["detail"].([]any)
			require.NotEmpty(t, detail)
			first := detail[0].(map[string]any)
			assert.Equal(t, tc.loc, first["loc"])
			assert.Equal(t, tc.typ, first["type"])
			assert.NotEmpty(t, first["msg"])
		})
	}
}

func TestErrorsShareOneShape(t *testing.T) {
	var logs bytes.Buffer
	r := newTestRouter(t, &logs)

	rec, body := do(t, r, http.MethodGet, "/nope", "")
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.Equal(t, "not_found", body["error"])
	assert.Contains(t, body["detail"], "/nope")

	rec, body = do(t, r, http.MethodDelete, "/health", "")
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "method_not_allowed", body["error"])

	rec, body = do(t, r, http.MethodPut, widgetPath, `{"name":"taken","count":1}`)
	assert.Equal(t, http.StatusConflict, rec.Code)
	assert.Equal(t, map[string]any{"error": "handle_taken", "detail": `The handle "taken" is taken.`, "suggested_handle": "taken-2"}, body)

	rec, body = do(t, r, http.MethodPut, widgetPath, `{"name":"anon","count":1}`)
	assert.Equal(t, http.StatusUnauthorized, rec.Code)
	assert.Equal(t, "Bearer", rec.Header().Get("WWW-Authenticate"))
	assert.Equal(t, "unauthenticated", body["error"])

	rec, body = do(t, r, http.MethodPut, widgetPath, `{"name":"boom","count":1}`, "X-Request-Id", "req-boom-1")
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Equal(t, "internal_error", body["error"])
	assert.NotContains(t, body["detail"], "exploded", "causes are logged, not shown")
	assert.Contains(t, logs.String(), "database exploded")
	assert.Contains(t, logs.String(), `"request_id":"req-boom-1"`)

	rec, body = do(t, r, http.MethodPut, widgetPath, `{"name":"ok","count":1}`)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "ok", body["name"])
}

// TestUpstreamDownForNowIs503WithRetryAfter: an upstream_unavailable that
// says when to retry (a workflow Temporal did not start) answers 503 with
// Retry-After and is logged as a warning; one that does not (a provider
// that failed) stays 502, logged as an error.
func TestUpstreamDownForNowIs503WithRetryAfter(t *testing.T) {
	var logs bytes.Buffer
	r := newTestRouter(t, &logs)
	rec, body := do(t, r, http.MethodPut, widgetPath, `{"name":"down-for-now","count":1}`)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, "5", rec.Header().Get("Retry-After"))
	assert.Equal(t, "upstream_unavailable", body["error"])
	assert.Contains(t, logs.String(), `"level":"WARN","msg":"request refused: The workflow service does not answer`)
	assert.NotContains(t, logs.String(), `"level":"ERROR"`)

	rec, body = do(t, r, http.MethodPut, widgetPath, `{"name":"down","count":1}`)
	assert.Equal(t, http.StatusBadGateway, rec.Code)
	assert.Empty(t, rec.Header().Get("Retry-After"))
	assert.Equal(t, "upstream_unavailable", body["error"])
	assert.Contains(t, logs.String(), `"level":"ERROR"`)
}

func TestRequestIDOnEveryResponseAndLogLine(t *testing.T) {
	var logs bytes.Buffer
	r := newTestRouter(t, &logs)
	rec, _ := do(t, r, http.MethodGet, "/health", "", "X-Request-Id", "abc-123")
	assert.Equal(t, "abc-123", rec.Header().Get("X-Request-Id"))

	rec, _ = do(t, r, http.MethodGet, "/nope?token=secret", "", "X-Request-Id", "bad id with spaces")
	minted := rec.Header().Get("X-Request-Id")
	assert.Len(t, minted, 24)
	assert.Contains(t, logs.String(), `"request_id":"abc-123"`)
	assert.Contains(t, logs.String(), `"request_id":"`+minted+`"`)
	assert.NotContains(t, logs.String(), "secret", "query strings are not logged")
}

func TestHealth(t *testing.T) {
	var fail error
	calls := 0
	r := newTestRouter(t, nil,
		HealthCheck{Name: "database", Check: func(context.Context) error { calls++; return fail }},
		HealthCheck{Name: "temporal", Check: func(context.Context) error { return nil }},
	)
	rec, body := do(t, r, http.MethodGet, "/health", "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, map[string]any{"status": "ok", "database": "ok", "temporal": "ok", "version": Version}, body)

	// Results are cached: a burst of probes checks dependencies once.
	for range 5 {
		do(t, r, http.MethodGet, "/health", "")
	}
	assert.Equal(t, 1, calls)

	h := newHealthHandler([]HealthCheck{{Name: "database", Check: func(context.Context) error { return errors.New("connection refused") }}}, nil)
	out, err := h.get(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, out.Status)
	assert.Equal(t, "degraded", out.Body["status"])
	assert.Equal(t, "unavailable", out.Body["database"])
}

// Anonymous /health says only which dependency is unavailable; the error,
// which names the database host, user and database, goes to the log at
// warn without the password.
func TestHealthHidesDependencyErrors(t *testing.T) {
	var logs bytes.Buffer
	r := newTestRouter(t, &logs,
		HealthCheck{Name: "database", Check: func(context.Context) error {
			return errors.New(`store: ping postgres: failed to connect to postgres://holdco_admin:hunter2pw@db-7.internal.example:5432/holdco_prod: server error: FATAL: role "holdco_admin" does not exist`)
		}},
		HealthCheck{Name: "temporal", Check: func(context.Context) error { return nil }},
	)
	rec, body := do(t, r, http.MethodGet, "/health", "")
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, map[string]any{"status": "degraded", "database": "unavailable", "temporal": "ok", "version": Version}, body)
	for _, leak := range []string{"holdco_admin", "hunter2pw", "db-7.internal", "holdco_prod", "5432", "FATAL"} {
		assert.NotContains(t, rec.Body.String(), leak)
	}
	assert.Contains(t, logs.String(), `"level":"WARN","msg":"health check failed"`)
	assert.Contains(t, logs.String(), "db-7.internal.example:5432/holdco_prod", "operators see the raw error")
	assert.NotContains(t, logs.String(), "hunter2pw")
}

func TestParseLocation(t *testing.T) {
	assert.Equal(t, []any{"body", "items", 3, "tags"}, parseLocation("body.items[3].tags"))
	assert.Equal(t, []any{"path", "company_id"}, parseLocation("path.company_id"))
	assert.Equal(t, []any{"body", "m", 0, 1}, parseLocation("body.m[0][1]"))
	assert.Equal(t, []any{"body"}, parseLocation("body"))
}

func TestStatusTableCoversEveryCode(t *testing.T) {
	codes := []models.ErrorCode{
		models.CodeInvalidArgument, models.CodeUnauthenticated, models.CodeForbidden, models.CodeNotFound,
		models.CodeConflict, models.CodeRateLimited, models.CodeTooLarge, models.CodeInsufficientCredits,
		models.CodePlanBlocked, models.CodePlanExpired, models.CodePlanNoAI, models.CodePaymentRequired,
		models.CodeBusinessLimitReached, models.CodeIdeaNotAllowed, models.CodeHandleTaken,
		models.CodeBusinessNotActive, models.CodeToolFailed, models.CodeUpstreamUnavailable, models.CodeInternal,
		models.CodeBadRequest, models.CodeMethodNotAllowed, models.CodeUnsupportedMediaType, models.CodeNotAcceptable,
	}
	for _, c := range codes {
		_, ok := statusByCode[c]
		assert.True(t, ok, "code %s has no status", c)
	}
	assert.Equal(t, http.StatusPaymentRequired, StatusOf(models.CodeInsufficientCredits))
	assert.Equal(t, http.StatusBadGateway, StatusOf(models.CodeUpstreamUnavailable))
}

// TestAuthFailureOfTheServerIsNot401 covers the status the auth middleware
// passes: a domain error keeps its own, anything else is a 500.
func TestAuthFailureOfTheServerIsNot401(t *testing.T) {
	body := newError(nil, http.StatusInternalServerError, "authentication failed", errors.New("database is down"))
	assert.Equal(t, http.StatusInternalServerError, body.GetStatus())
	body = newError(nil, http.StatusInternalServerError, "authentication failed", models.Errorf(models.CodeUnauthenticated, "bad"))
	assert.Equal(t, http.StatusUnauthorized, body.GetStatus())
}

// TestHealthHandlerSharesTheAPIsCachedProbes: the /health of the other
// listeners (connector, authorization server) answers like the API's and
// probes as rarely: a burst of polls probes once, not once per poll.
func TestHealthHandlerSharesTheAPIsCachedProbes(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	var logs bytes.Buffer
	h := HealthHandler([]HealthCheck{
		{Name: "database", Check: func(context.Context) error { mu.Lock(); calls++; mu.Unlock(); return nil }},
		{Name: "temporal", Check: func(context.Context) error {
			return errors.New("dial postgres://holdco:hunter2pw@db.internal:5432/x: refused")
		}},
	}, slog.New(slog.NewJSONHandler(&logs, nil)))
	const polls = 20
	for range polls {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
		require.Equal(t, http.StatusServiceUnavailable, rec.Code)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		var body map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
		assert.Equal(t, map[string]any{"status": "degraded", "database": "ok", "temporal": "unavailable", "version": Version}, body)
	}
	mu.Lock()
	defer mu.Unlock()
	assert.Less(t, calls, polls, "probes are cached, not run per poll")
	assert.NotContains(t, logs.String(), "hunter2pw")
}

// TestDirectRouteKeepsTheRouterMiddleware: a route served ahead of gin
// (capture, direct.go) echoes or mints the request id, puts it and the
// error sink in the request's context, logs its access line with the
// route, and answers a panic with the common 500 body unless it had
// answered already; net/http's abort panic goes through.
func TestDirectRouteKeepsTheRouterMiddleware(t *testing.T) {
	var logs bytes.Buffer
	logger := logging.New(&logs, slog.LevelDebug, "json")
	sink := newErrorSink(logger)
	h := direct(logger, sink, "/analytics/e/", func(w http.ResponseWriter, r *http.Request) {
		assert.Same(t, sink, sinkOf(r.Context()), "the router's error sink")
		switch r.Header.Get("X-Test") {
		case "panic":
			panic("capture exploded")
		case "answered":
			w.WriteHeader(http.StatusAccepted)
			panic("after the answer")
		case "abort":
			panic(http.ErrAbortHandler)
		}
		logger.InfoContext(r.Context(), "in the handler")
		_, _ = w.Write([]byte(`{"status":1}`))
	})

	rec, body := do(t, h, http.MethodPost, "/analytics/e/", "", "X-Request-Id", "cap-1")
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, float64(1), body["status"])
	assert.Equal(t, "cap-1", rec.Header().Get("X-Request-Id"))
	assert.Contains(t, logs.String(), `"msg":"in the handler","request_id":"cap-1"`)
	assert.Regexp(t, `"level":"DEBUG","msg":"http request","method":"POST","route":"/analytics/e/","status":200,"bytes":12,"duration":\d+,"request_id":"cap-1"`, logs.String())

	rec, body = do(t, h, http.MethodPost, "/analytics/e/", "", "X-Test", "panic", "X-Request-Id", "bad id")
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Equal(t, "internal_error", body["error"])
	assert.NotContains(t, body["detail"], "exploded")
	minted := rec.Header().Get("X-Request-Id")
	assert.Len(t, minted, 24)
	assert.Contains(t, logs.String(), `"level":"ERROR","msg":"panic while serving request","panic":"capture exploded","route":"/analytics/e/","request_id":"`+minted+`"`)
	assert.Regexp(t, `"msg":"http request","method":"POST","route":"/analytics/e/","status":500,"bytes":\d+,"duration":\d+,"request_id":"`+minted+`"`, logs.String())

	rec, _ = do(t, h, http.MethodPost, "/analytics/e/", "", "X-Test", "answered")
	assert.Equal(t, http.StatusAccepted, rec.Code, "an answer already given stands")
	assert.Empty(t, rec.Body.String())

	assert.PanicsWithValue(t, http.ErrAbortHandler, func() {
		do(t, h, http.MethodPost, "/analytics/e/", "", "X-Test", "abort")
	})
}
