package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/service/traces"
)

func TestRunTraceEndpoints(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	run := uuid.NewString()
	secret := w.creds[company]
	require.NoError(t, w.svc.TraceWriter.Append(ctx, run, "000000-start", traces.Event{Type: traces.EventTurnStarted}))
	require.NoError(t, w.svc.TraceWriter.Append(ctx, run, "000001-tool-01",
		traces.Event{Type: traces.EventToolResult, Step: 1, Tool: "get_api_key", CallID: "call_1", Data: map[string]any{"key": secret}}))

	// Before the run finishes: its parts, and the first one as the trace.
	var files []map[string]any
	w.call(http.MethodGet, "/admin/runs/"+run+"/trace/list", admin, "", http.StatusOK, &files)
	require.Len(t, files, 2)
	assert.Equal(t, "000000-start.jsonl", files[0]["name"])
	assert.Equal(t, "000001-tool-01.jsonl", files[1]["name"])
	rec := w.do(http.MethodGet, "/admin/runs/"+run+"/trace", admin, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"type":"turn_started"`)
	assert.NotContains(t, rec.Body.String(), "tool_result")

	require.NoError(t, w.svc.TraceWriter.Finish(ctx, run))
	w.call(http.MethodGet, "/admin/runs/"+strings.ToUpper(run)+"/trace/list", admin, "", http.StatusOK, &files)
	require.Len(t, files, 1)
	assert.Equal(t, "trace.jsonl", files[0]["name"])
	updated, err := time.Parse(time.RFC3339Nano, files[0]["updated_at"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), updated, time.Minute)

	rec = w.do(http.MethodGet, "/admin/runs/"+run+"/trace", admin, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "application/x-ndjson", rec.Header().Get("Content-Type"))
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	assert.Equal(t, files[0]["size_bytes"], float64(rec.Body.Len()))
	lines := strings.Split(strings.TrimSuffix(rec.Body.String(), "\n"), "\n")
	require.Len(t, lines, 2)
	var last map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &last))
	assert.Equal(t, "tool_result", last["type"])
	assert.Equal(t, "get_api_key", last["tool"])
	assert.Equal(t, map[string]any{"key": "svc_c_v1_[redacted]"}, last["data"])
	assert.NotContains(t, rec.Body.String(), secret, "the company key was redacted before it was stored")

	// Unknown run, bad id, other credentials.
	for _, path := range []string{"/admin/runs/" + missingID + "/trace", "/admin/runs/" + missingID + "/trace/list"} {
		var body map[string]any
		w.call(http.MethodGet, path, admin, "", http.StatusNotFound, &body)
		assert.Equal(t, "not_found", body["error"], path)
		var invalid map[string]any
		w.call(http.MethodGet, strings.Replace(path, missingID, "run-1", 1), admin, "", http.StatusUnprocessableEntity, &invalid)
		assert.Contains(t, invalid, "detail")
		for _, cred := range []string{userA, pat, session, company} {
			rec := w.do(http.MethodGet, strings.Replace(path, missingID, run, 1), cred, "")
			assert.Equal(t, http.StatusForbidden, rec.Code, "%s %s", cred, path)
			assert.NotContains(t, rec.Body.String(), "turn_started")
		}
		rec := w.do(http.MethodGet, strings.Replace(path, missingID, run, 1), anon, "")
		assert.Equal(t, http.StatusUnauthorized, rec.Code)
	}
}
