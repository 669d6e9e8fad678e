package traces_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/blob/local"
	"holdco/service/files"
	"holdco/service/traces"
)

func newBlobs(t *testing.T) *local.Store {
	t.Helper()
	s, err := local.New(t.TempDir(), []byte("traces-test-blob-signing-key-0123456789"), "http://sites.test")
	require.NoError(t, err)
	return s
}

// runKeys lists the names of the run's stored files.
func runKeys(t *testing.T, blobs files.BlobStore, runID string) []string {
	t.Helper()
	listed, err := blobs.List(context.Background(), traces.RunPrefix(runID))
	require.NoError(t, err)
	var names []string
	for _, b := range listed {
		names = append(names, strings.TrimPrefix(b.Key, traces.RunPrefix(runID)))
	}
	return names
}

// readEvents decodes a stored JSONL file.
func readEvents(t *testing.T, blobs files.BlobStore, key string) []map[string]any {
	t.Helper()
	rc, err := blobs.Open(context.Background(), key)
	require.NoError(t, err)
	defer rc.Close()
	var out []map[string]any
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

func types(events []map[string]any) []string {
	var out []string
	for _, e := range events {
		out = append(out, e["type"].(string))
	}
	return out
}

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func TestAppendStoresOneLinePerEvent(t *testing.T) {
	ctx := context.Background()
	blobs := newBlobs(t)
	w := traces.NewWriter(blobs).WithClock(func() time.Time { return t0 })
	run := uuid.NewString()

	require.NoError(t, w.Append(ctx, run, "000001-model",
		traces.Event{Type: traces.EventModelRequest, Step: 1, Model: "claude-x",
			Data: map[string]any{"messages": 3, "tools": 12, "system_chars": 5400, "model": "claude-x"}},
		traces.Event{Type: traces.EventModelResponse, Step: 1, Time: t0.Add(time.Second),
			Data: map[string]any{"stop_reason": "tool_use", "text": "Let me look.",
				"tool_calls": []map[string]any{{"id": "call_1", "name": "list_tasks", "input": json.RawMessage(`{"status":["pending"]}`)}}}},
		traces.Event{Type: traces.EventUsage, Step: 1, Usage: &traces.Usage{InputTokens: 1200, OutputTokens: 80, Credits: 2}},
	))
	assert.Equal(t, []string{"000001-model.jsonl"}, runKeys(t, blobs, run))
	events := readEvents(t, blobs, traces.RunPrefix(run)+"000001-model.jsonl")
	require.Len(t, events, 3)
	assert.Equal(t, []string{"model_request", "model_response", "usage"}, types(events))
	assert.Equal(t, "2026-11-23T12:00:00Z", events[0]["time"], "an event without a time gets the clock's")
	assert.Equal(t, "2026-11-23T12:00:01Z", events[1]["time"])
	assert.Equal(t, map[string]any{"messages": 3.0, "tools": 12.0, "system_chars": 5400.0, "model": "claude-x"}, events[0]["data"])
	call := events[1]["data"].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"status": []any{"pending"}}, call["input"], "raw JSON data is stored as JSON, not a string")
	assert.Equal(t, map[string]any{"input_tokens": 1200.0, "output_tokens": 80.0, "credits": 2.0}, events[2]["usage"])
	assert.NotContains(t, events[2], "data", "empty fields are left out")
	assert.NotContains(t, events[2], "error")
}

func TestAppendSamePartReplacesIt(t *testing.T) {
	ctx := context.Background()
	blobs := newBlobs(t)
	w := traces.NewWriter(blobs)
	run := uuid.NewString()
	require.NoError(t, w.Append(ctx, run, "000002-tool-01", traces.Event{Type: traces.EventToolCall, Tool: "send_email"},
		traces.Event{Type: traces.EventError, Error: "timeout"}))
	require.NoError(t, w.Append(ctx, run, "000002-tool-01", traces.Event{Type: traces.EventToolCall, Tool: "send_email"},
		traces.Event{Type: traces.EventToolResult, Tool: "send_email", Data: map[string]any{"id": "e1"}}))
	assert.Equal(t, []string{"000002-tool-01.jsonl"}, runKeys(t, blobs, run))
	assert.Equal(t, []string{"tool_call", "tool_result"}, types(readEvents(t, blobs, traces.RunPrefix(run)+"000002-tool-01.jsonl")),
		"the retried attempt's events only")
}

func TestAppendRefusesBadNames(t *testing.T) {
	ctx := context.Background()
	blobs := newBlobs(t)
	w := traces.NewWriter(blobs)
	run := uuid.NewString()
	for _, id := range []string{"", "not-a-uuid", strings.ToUpper(run), "{" + run + "}", "../" + run} {
		err := w.Append(ctx, id, "000001-model", traces.Event{Type: traces.EventTurnStarted})
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "run id %q: %v", id, err)
		assert.True(t, models.IsCode(w.Finish(ctx, id), models.CodeInvalidArgument), "finish %q", id)
	}
	for _, part := range []string{"", "trace", "Model", "a/b", "../x", "x.jsonl", "-x", strings.Repeat("a", 65)} {
		err := w.Append(ctx, run, part, traces.Event{Type: traces.EventTurnStarted})
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "part %q: %v", part, err)
	}
	assert.Empty(t, runKeys(t, blobs, run), "nothing stored")

	err := traces.NewWriter(nil).Append(ctx, run, "000001-model", traces.Event{Type: traces.EventTurnStarted})
	assert.True(t, models.IsCode(err, models.CodeUpstreamUnavailable), "no blob store: %v", err)
}

func TestFinishJoinsPartsInNameOrder(t *testing.T) {
	ctx := context.Background()
	blobs := newBlobs(t)
	w := traces.NewWriter(blobs)
	run := uuid.NewString()
	// Written out of order: the names, not the writes, order the trace.
	require.NoError(t, w.Append(ctx, run, "000002-model", traces.Event{Type: traces.EventModelRequest, Step: 2}))
	require.NoError(t, w.Append(ctx, run, "000001-tool-02", traces.Event{Type: traces.EventToolResult, Step: 1, CallID: "b"}))
	require.NoError(t, w.Append(ctx, run, "000000-start", traces.Event{Type: traces.EventTurnStarted}))
	require.NoError(t, w.Append(ctx, run, "000001-model", traces.Event{Type: traces.EventModelRequest, Step: 1},
		traces.Event{Type: traces.EventModelResponse, Step: 1}))
	require.NoError(t, w.Append(ctx, run, "000001-tool-01", traces.Event{Type: traces.EventToolResult, Step: 1, CallID: "a"}))
	require.NoError(t, w.Append(ctx, run, "000003-end", traces.Event{Type: traces.EventTurnEnded}))
	other := uuid.NewString()
	require.NoError(t, w.Append(ctx, other, "000000-start", traces.Event{Type: traces.EventTurnStarted}))

	require.NoError(t, w.Finish(ctx, run))
	assert.Equal(t, []string{traces.TraceName}, runKeys(t, blobs, run), "the parts are removed")
	events := readEvents(t, blobs, traces.RunPrefix(run)+traces.TraceName)
	assert.Equal(t, []string{"turn_started", "model_request", "model_response", "tool_result", "tool_result", "model_request", "turn_ended"}, types(events))
	assert.Equal(t, "a", events[3]["call_id"])
	assert.Equal(t, "b", events[4]["call_id"])
	assert.Equal(t, []string{"000000-start.jsonl"}, runKeys(t, blobs, other), "another run is untouched")

	// Finish again: nothing changes.
	require.NoError(t, w.Finish(ctx, run))
	assert.Equal(t, []string{traces.TraceName}, runKeys(t, blobs, run))
	assert.Len(t, readEvents(t, blobs, traces.RunPrefix(run)+traces.TraceName), 7)
}

// crashAfterPut stores blobs but fails every delete: Finish stops after
// storing trace.jsonl, as a worker that crashed there would.
type crashAfterPut struct{ files.BlobStore }

func (crashAfterPut) Delete(context.Context, string) error { return io.ErrClosedPipe }

func TestFinishAfterACrashRemovesTheLeftoverParts(t *testing.T) {
	ctx := context.Background()
	blobs := newBlobs(t)
	run := uuid.NewString()
	w := traces.NewWriter(blobs)
	require.NoError(t, w.Append(ctx, run, "000001-model", traces.Event{Type: traces.EventModelRequest}))
	require.NoError(t, w.Append(ctx, run, "000002-model", traces.Event{Type: traces.EventModelRequest}))

	require.Error(t, traces.NewWriter(crashAfterPut{blobs}).Finish(ctx, run))
	assert.Equal(t, []string{"000001-model.jsonl", "000002-model.jsonl", traces.TraceName}, runKeys(t, blobs, run))

	require.NoError(t, w.Finish(ctx, run))
	assert.Equal(t, []string{traces.TraceName}, runKeys(t, blobs, run))
	assert.Len(t, readEvents(t, blobs, traces.RunPrefix(run)+traces.TraceName), 2, "the trace is not joined twice")
}

func TestFinishWithoutPartsStoresNothing(t *testing.T) {
	ctx := context.Background()
	blobs := newBlobs(t)
	run := uuid.NewString()
	require.NoError(t, traces.NewWriter(blobs).Finish(ctx, run))
	assert.Empty(t, runKeys(t, blobs, run))
}

func TestFinishWritesTheLastEventsAfterTheParts(t *testing.T) {
	ctx := context.Background()
	blobs := newBlobs(t)
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	w := traces.NewWriter(blobs).WithClock(func() time.Time { return at })
	run := uuid.NewString()
	require.NoError(t, w.Append(ctx, run, "000000-start", traces.Event{Type: traces.EventTurnStarted}))
	require.NoError(t, w.Append(ctx, run, "000001-model", traces.Event{Type: traces.EventModelRequest, Step: 1}))

	end := traces.Event{Type: traces.EventTurnEnded, Data: map[string]any{"status": "completed", "api_key": "sk-ant-0123456789abcdef"}}
	require.NoError(t, w.Finish(ctx, run, end))
	assert.Equal(t, []string{traces.TraceName}, runKeys(t, blobs, run), "the last events are never a part")
	events := readEvents(t, blobs, traces.RunPrefix(run)+traces.TraceName)
	assert.Equal(t, []string{"turn_started", "model_request", "turn_ended"}, types(events))
	assert.Equal(t, "2026-12-07T12:00:00Z", events[2]["time"], "stamped with the writer's clock")
	assert.Equal(t, map[string]any{"status": "completed", "api_key": "[redacted]"}, events[2]["data"], "sanitized as a part is")

	// A retry after trace.jsonl was stored adds nothing.
	require.NoError(t, w.Finish(ctx, run, end))
	assert.Len(t, readEvents(t, blobs, traces.RunPrefix(run)+traces.TraceName), 3)

	// A run with only last events has a trace of them.
	alone := uuid.NewString()
	require.NoError(t, w.Finish(ctx, alone, traces.Event{Type: traces.EventTurnEnded}))
	assert.Equal(t, []string{"turn_ended"}, types(readEvents(t, blobs, traces.RunPrefix(alone)+traces.TraceName)))
}
