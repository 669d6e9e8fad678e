package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/llm/llmtest"
)

// The consumer's interface, as the turn activity will declare it.
var _ interface {
	Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error)
} = (*Model)(nil)

const testKey = "sk-ant-test-0123456789"

// recorder is a Messages API server that answers every call with respond
// and keeps what it received.
type recorder struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []map[string]any
}

func serve(t *testing.T, respond func(w http.ResponseWriter, r *http.Request)) (*recorder, *Model) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		rec.mu.Lock()
		rec.requests = append(rec.requests, r.Clone(context.Background()))
		rec.bodies = append(rec.bodies, body)
		rec.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(srv.Close)
	m, err := New(Config{APIKey: testKey, Model: "claude-test", BaseURL: srv.URL, MaxTokens: 1024, Timeout: 5 * time.Second})
	require.NoError(t, err)
	return rec, m
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

// sse writes events in the Messages API's streaming format.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, e := range events {
		var typ struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(e), &typ)
		_, _ = io.WriteString(w, "event: "+typ.Type+"\ndata: "+e+"\n\n")
		w.(http.Flusher).Flush()
	}
}

const (
	messageStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test-20250101","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":42,"output_tokens":1}}}`
	messageStop  = `{"type":"message_stop"}`
	ping         = `{"type":"ping"}`
)

func delta(index int, typ, field, value string) string {
	v, _ := json.Marshal(value)
	d, _ := json.Marshal(index)
	return `{"type":"content_block_delta","index":` + string(d) + `,"delta":{"type":"` + typ + `","` + field + `":` + string(v) + `}}`
}

func TestStreamsTextAsItArrives(t *testing.T) {
	rec, m := serve(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, messageStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			ping,
			delta(0, "text_delta", "text", "Hello"),
			delta(0, "text_delta", "text", ", world"),
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}`,
			messageStop)
	})
	var deltas []string
	resp, err := m.Complete(context.Background(), models.ModelRequest{
		System:   "You run a company.",
		Messages: []models.ModelMessage{{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: "hi"}}}},
	}, func(d string) { deltas = append(deltas, d) })
	require.NoError(t, err)
	assert.Equal(t, []string{"Hello", ", world"}, deltas)
	assert.Equal(t, "Hello, world", resp.Text())
	assert.Equal(t, models.StopEndTurn, resp.StopReason)
	assert.Equal(t, models.ModelUsage{InputTokens: 42, OutputTokens: 7}, resp.Usage)
	assert.Equal(t, "claude-test-20250101", resp.Model)

	require.Equal(t, 1, rec.count())
	req, body := rec.requests[0], rec.bodies[0]
	assert.Equal(t, "/v1/messages", req.URL.Path)
	assert.Equal(t, testKey, req.Header.Get("X-Api-Key"))
	assert.NotEmpty(t, req.Header.Get("Anthropic-Version"))
	assert.Equal(t, true, body["stream"])
	assert.Equal(t, "claude-test", body["model"])
	assert.Equal(t, float64(1024), body["max_tokens"])
	assert.Equal(t, []any{map[string]any{"type": "text", "text": "You run a company."}}, body["system"])
	assert.Equal(t, []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hi"}}}}, body["messages"])
	assert.NotContains(t, body, "tools")
}

func TestAssemblesToolUseFromStreamedJSON(t *testing.T) {
	rec, m := serve(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, messageStart,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			delta(0, "text_delta", "text", "Writing it down."),
			`{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"write_document","input":{}}}`,
			delta(1, "input_json_delta", "partial_json", ""),
			delta(1, "input_json_delta", "partial_json", `{"title": "Pl`),
			delta(1, "input_json_delta", "partial_json", `an", "document_type": "notes"}`),
			`{"type":"content_block_stop","index":1}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}`,
			messageStop)
	})
	schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"document_type":{"type":"string","enum":["notes"]}},"required":["title"],"additionalProperties":false}`)
	var text strings.Builder
	resp, err := m.Complete(context.Background(), models.ModelRequest{
		Model:     "claude-override",
		MaxTokens: 77,
		Tools:     []models.ToolSpec{{Name: "write_document", Description: "Write a document.", InputSchema: schema}},
		Messages: []models.ModelMessage{
			{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: "plan"}}},
			{Role: models.RoleAssistant, Content: []models.ContentBlock{{Type: models.ContentToolUse, ToolUseID: "toolu_00", ToolName: "create_task", Input: json.RawMessage(`{"title":"x"}`)}}},
			{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentToolResult, ToolUseID: "toolu_00", Text: "no such project", IsError: true}}},
		},
	}, func(d string) { text.WriteString(d) })
	require.NoError(t, err)
	assert.Equal(t, "Writing it down.", text.String(), "tool input is not text")
	assert.Equal(t, models.StopToolUse, resp.StopReason)
	calls := resp.ToolCalls()
	require.Len(t, calls, 1)
	assert.Equal(t, "toolu_01", calls[0].ToolUseID)
	assert.Equal(t, "write_document", calls[0].ToolName)
	assert.JSONEq(t, `{"title":"Plan","document_type":"notes"}`, string(calls[0].Input))

	require.Equal(t, 1, rec.count())
	body := rec.bodies[0]
	assert.Equal(t, "claude-override", body["model"])
	assert.Equal(t, float64(77), body["max_tokens"])
	tools := body["tools"].([]any)
	require.Len(t, tools, 1)
	tool := tools[0].(map[string]any)
	assert.Equal(t, "write_document", tool["name"])
	assert.Equal(t, "Write a document.", tool["description"])
	gotSchema, _ := json.Marshal(tool["input_schema"])
	assert.JSONEq(t, string(schema), string(gotSchema))
	msgs := body["messages"].([]any)
	require.Len(t, msgs, 3)
	assert.Equal(t, map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_00", "name": "create_task", "input": map[string]any{"title": "x"}}}}, msgs[1])
	result := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)
	assert.Equal(t, "tool_result", result["type"])
	assert.Equal(t, "toolu_00", result["tool_use_id"])
	assert.Equal(t, true, result["is_error"])
}

func errorBody(typ, msg string) string {
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	return string(b)
}

// TestConformance runs the adapters' shared suite against a local
// Messages API server.
func TestConformance(t *testing.T) {
	llmtest.Run(t, llmtest.Protocol{
		Key: testKey,
		New: func(t *testing.T, baseURL string, timeout time.Duration) llmtest.Model {
			m, err := New(Config{APIKey: testKey, Model: "claude-test", BaseURL: baseURL, MaxTokens: 1024, Timeout: timeout})
			require.NoError(t, err)
			return m
		},
		Text: func(w http.ResponseWriter, deltas []string, usage models.ModelUsage) {
			start := strings.Replace(messageStart, `"input_tokens":42`, `"input_tokens":`+strconv.FormatInt(usage.InputTokens, 10), 1)
			events := []string{start, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, ping}
			for _, d := range deltas {
				events = append(events, delta(0, "text_delta", "text", d))
			}
			sse(w, append(events, `{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":`+strconv.FormatInt(usage.OutputTokens, 10)+`}}`, messageStop)...)
		},
		MaxTokens: func(w http.ResponseWriter, text string) {
			sse(w, messageStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				delta(0, "text_delta", "text", text), `{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":1024}}`, messageStop)
		},
		Malformed: func(w http.ResponseWriter, partial string) {
			sse(w, messageStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, delta(0, "text_delta", "text", partial))
			_, _ = io.WriteString(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\n\n")
		},
		ToolCall: func(w http.ResponseWriter, id, name string, parts []string) {
			events := []string{messageStart, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"` + id + `","name":"` + name + `","input":{}}}`}
			for _, p := range parts {
				events = append(events, delta(0, "input_json_delta", "partial_json", p))
			}
			sse(w, append(events, `{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}`, messageStop)...)
		},
		Fail: func(w http.ResponseWriter, f llmtest.Failure) {
			body := map[llmtest.FailureClass]string{
				llmtest.RateLimited:    errorBody("rate_limit_error", "slow down"),
				llmtest.ServerError:    errorBody("api_error", "internal"),
				llmtest.InvalidRequest: errorBody("invalid_request_error", "messages: field required"),
				llmtest.ContextTooLong: errorBody("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
				llmtest.Unauthorized:   errorBody("authentication_error", "invalid x-api-key "+f.Key),
			}[f.Class]
			if f.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter.Seconds())))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.Status)
			_, _ = io.WriteString(w, body)
		},
		StreamError: func(w http.ResponseWriter, partial string) {
			sse(w, messageStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				delta(0, "text_delta", "text", partial), errorBody("overloaded_error", "Overloaded"))
		},
		StreamErrorKind: models.ModelOverloaded,
		Cut: func(w http.ResponseWriter, partial string) {
			sse(w, messageStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, delta(0, "text_delta", "text", partial))
		},
		Begin: func(w http.ResponseWriter) { sse(w, messageStart) },
	})
}

// TestProviderFailuresAreClassifiedAndNotRetried covers the Messages
// API's own failures beyond the shared suite's.
func TestProviderFailuresAreClassifiedAndNotRetried(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		header     map[string]string
		body       string
		kind       models.ModelErrorKind
		retryable  bool
		retryAfter time.Duration
	}{
		{"529 overloaded", 529, nil, errorBody("overloaded_error", "Overloaded"), models.ModelOverloaded, true, 0},
		{"403", 403, nil, errorBody("permission_error", "no access"), models.ModelAuth, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, m := serve(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			_, err := m.Complete(context.Background(), models.ModelRequest{Messages: []models.ModelMessage{{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: "secret plan"}}}}}, nil)
			var callErr *models.ModelCallError
			require.ErrorAs(t, err, &callErr)
			assert.Equal(t, tc.kind, callErr.Kind)
			assert.Equal(t, tc.retryable, callErr.Retryable)
			assert.Equal(t, tc.retryAfter, callErr.RetryAfter)
			assert.Equal(t, tc.status, callErr.Status)
			assert.NotContains(t, err.Error(), testKey)
			assert.NotContains(t, err.Error(), "secret plan")
			assert.Equal(t, 1, rec.count(), "the SDK must not retry")
		})
	}
}

func TestNewRefusesAMissingKeyOrModel(t *testing.T) {
	_, err := New(Config{Model: "m"})
	assert.Error(t, err)
	_, err = New(Config{APIKey: "k"})
	assert.Error(t, err)
}

func TestEnvironmentVariablesAreIgnored(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	rec, m := serve(t, func(w http.ResponseWriter, r *http.Request) {
		sse(w, messageStart, `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}`, messageStop)
	})
	_, err := m.Complete(context.Background(), models.ModelRequest{Messages: []models.ModelMessage{{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: "hi"}}}}}, nil)
	require.NoError(t, err)
	require.Equal(t, 1, rec.count())
	assert.Equal(t, testKey, rec.requests[0].Header.Get("X-Api-Key"))
}
