package openai

import (
	"context"
	"encoding/json"
	"fmt"
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

const testKey = "sk-proj-test-0123456789"

type recorder struct {
	mu       sync.Mutex
	requests []*http.Request
	bodies   []map[string]any
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.requests)
}

// serve starts a Chat Completions server at <url>/v1 answering with respond.
func serve(t *testing.T, cfg Config, respond func(w http.ResponseWriter, r *http.Request)) (*recorder, *Model) {
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
	if cfg.Model == "" {
		cfg.Model = "gpt-test"
	}
	cfg.BaseURL = srv.URL + "/v1"
	cfg.Timeout = 5 * time.Second
	m, err := New(cfg)
	require.NoError(t, err)
	return rec, m
}

// sse writes chunks in the Chat Completions streaming format, then [DONE].
func sse(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, c := range chunks {
		_, _ = io.WriteString(w, "data: "+c+"\n\n")
		w.(http.Flusher).Flush()
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

func chunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test-2025","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}]}`
}

const usage = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test-2025","choices":[],"usage":{"prompt_tokens":31,"completion_tokens":9,"total_tokens":40}}`

func usageChunk(u models.ModelUsage) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test-2025","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		u.InputTokens, u.OutputTokens, u.InputTokens+u.OutputTokens)
}

func userText(s string) models.ModelMessage {
	return models.ModelMessage{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: s}}}
}

func TestStreamsTextAsItArrives(t *testing.T) {
	rec, m := serve(t, Config{APIKey: testKey, MaxTokens: 512}, func(w http.ResponseWriter, r *http.Request) {
		sse(w,
			chunk(`{"role":"assistant","content":""}`, ""),
			chunk(`{"content":"Hello"}`, ""),
			chunk(`{"content":", world"}`, ""),
			chunk(`{}`, "stop"),
			usage)
	})
	var deltas []string
	resp, err := m.Complete(context.Background(), models.ModelRequest{System: "You run a company.", Messages: []models.ModelMessage{userText("hi")}},
		func(d string) { deltas = append(deltas, d) })
	require.NoError(t, err)
	assert.Equal(t, []string{"Hello", ", world"}, deltas)
	assert.Equal(t, "Hello, world", resp.Text())
	assert.Equal(t, models.StopEndTurn, resp.StopReason)
	assert.Equal(t, models.ModelUsage{InputTokens: 31, OutputTokens: 9}, resp.Usage)
	assert.Equal(t, "gpt-test-2025", resp.Model)

	require.Equal(t, 1, rec.count())
	req, body := rec.requests[0], rec.bodies[0]
	assert.Equal(t, "/v1/chat/completions", req.URL.Path)
	assert.Equal(t, "Bearer "+testKey, req.Header.Get("Authorization"))
	assert.Equal(t, true, body["stream"])
	assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
	assert.Equal(t, "gpt-test", body["model"])
	assert.Equal(t, float64(512), body["max_tokens"], "a server at a base URL gets max_tokens")
	assert.Equal(t, []any{
		map[string]any{"role": "system", "content": "You run a company."},
		map[string]any{"role": "user", "content": "hi"},
	}, body["messages"])
}

func TestAssemblesToolCallsFromStreamedArguments(t *testing.T) {
	rec, m := serve(t, Config{APIKey: testKey}, func(w http.ResponseWriter, r *http.Request) {
		sse(w,
			chunk(`{"role":"assistant","content":"Writing it down."}`, ""),
			chunk(`{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"write_document","arguments":""}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"title\": \"Pl"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"an\"}"}}]}`, ""),
			chunk(`{"tool_calls":[{"index":1,"id":"call_def","type":"function","function":{"name":"create_task","arguments":"{}"}}]}`, ""),
			chunk(`{}`, "tool_calls"),
			usage)
	})
	schema := json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`)
	var text strings.Builder
	resp, err := m.Complete(context.Background(), models.ModelRequest{
		Model:     "llama3.2",
		MaxTokens: 64,
		Tools:     []models.ToolSpec{{Name: "write_document", Description: "Write a document.", InputSchema: schema}},
		Messages: []models.ModelMessage{
			userText("plan"),
			{Role: models.RoleAssistant, Content: []models.ContentBlock{
				{Type: models.ContentText, Text: "Let me try."},
				{Type: models.ContentToolUse, ToolUseID: "call_0", ToolName: "create_task", Input: json.RawMessage(`{"title":"x"}`)},
			}},
			{Role: models.RoleUser, Content: []models.ContentBlock{
				{Type: models.ContentToolResult, ToolUseID: "call_0", Text: "no such project", IsError: true},
				{Type: models.ContentText, Text: "try again"},
			}},
		},
	}, func(d string) { text.WriteString(d) })
	require.NoError(t, err)
	assert.Equal(t, "Writing it down.", text.String())
	assert.Equal(t, models.StopToolUse, resp.StopReason)
	calls := resp.ToolCalls()
	require.Len(t, calls, 2)
	assert.Equal(t, "call_abc", calls[0].ToolUseID)
	assert.Equal(t, "write_document", calls[0].ToolName)
	assert.JSONEq(t, `{"title":"Plan"}`, string(calls[0].Input))
	assert.Equal(t, "create_task", calls[1].ToolName)

	require.Equal(t, 1, rec.count())
	body := rec.bodies[0]
	assert.Equal(t, "llama3.2", body["model"])
	assert.Equal(t, float64(64), body["max_tokens"])
	tools := body["tools"].([]any)
	require.Len(t, tools, 1)
	fn := tools[0].(map[string]any)
	assert.Equal(t, "function", fn["type"])
	gotFn, _ := json.Marshal(fn["function"])
	assert.JSONEq(t, `{"name":"write_document","description":"Write a document.","parameters":`+string(schema)+`}`, string(gotFn))
	msgs, _ := json.Marshal(body["messages"])
	assert.JSONEq(t, `[
		{"role":"user","content":"plan"},
		{"role":"assistant","content":"Let me try.","tool_calls":[{"id":"call_0","type":"function","function":{"name":"create_task","arguments":"{\"title\":\"x\"}"}}]},
		{"role":"tool","tool_call_id":"call_0","content":"Error: no such project"},
		{"role":"user","content":"try again"}
	]`, string(msgs))
}

func TestOpenAIItselfGetsMaxCompletionTokens(t *testing.T) {
	m, err := New(Config{APIKey: testKey, Model: "gpt-test", MaxTokens: 100})
	require.NoError(t, err)
	p, err := m.params(models.ModelRequest{Messages: []models.ModelMessage{userText("hi")}})
	require.NoError(t, err)
	raw, _ := json.Marshal(p)
	assert.Contains(t, string(raw), `"max_completion_tokens":100`)
	assert.NotContains(t, string(raw), `"max_tokens"`)
}

func errorBody(typ, code, msg string) string {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"type": typ, "code": code, "message": msg, "param": nil}})
	return string(b)
}

// TestConformance runs the adapters' shared suite against a local Chat
// Completions server.
func TestConformance(t *testing.T) {
	llmtest.Run(t, llmtest.Protocol{
		Key: testKey,
		New: func(t *testing.T, baseURL string, timeout time.Duration) llmtest.Model {
			m, err := New(Config{APIKey: testKey, Model: "gpt-test", BaseURL: baseURL + "/v1", Timeout: timeout})
			require.NoError(t, err)
			return m
		},
		Text: func(w http.ResponseWriter, deltas []string, u models.ModelUsage) {
			var chunks []string
			for _, d := range deltas {
				b, _ := json.Marshal(map[string]string{"content": d})
				chunks = append(chunks, chunk(string(b), ""))
			}
			sse(w, append(chunks, chunk(`{}`, "stop"), usageChunk(u))...)
		},
		MaxTokens: func(w http.ResponseWriter, text string) {
			b, _ := json.Marshal(map[string]string{"content": text})
			sse(w, chunk(string(b), ""), chunk(`{}`, "length"), usage)
		},
		Malformed: func(w http.ResponseWriter, partial string) {
			b, _ := json.Marshal(map[string]string{"content": partial})
			sse(w, chunk(string(b), ""), `{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content`)
		},
		ToolCall: func(w http.ResponseWriter, id, name string, parts []string) {
			chunks := []string{chunk(`{"tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":""}}]}`, "")}
			for _, p := range parts {
				b, _ := json.Marshal(p)
				chunks = append(chunks, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(b)+`}}]}`, ""))
			}
			sse(w, append(chunks, chunk(`{}`, "tool_calls"), usage)...)
		},
		Fail: func(w http.ResponseWriter, f llmtest.Failure) {
			body := map[llmtest.FailureClass]string{
				llmtest.RateLimited:    errorBody("requests", "rate_limit_exceeded", "Rate limit reached"),
				llmtest.ServerError:    errorBody("server_error", "", "The server had an error"),
				llmtest.InvalidRequest: errorBody("invalid_request_error", "", "Invalid value for 'model'"),
				llmtest.ContextTooLong: errorBody("invalid_request_error", "context_length_exceeded", "This model's maximum context length is 128000 tokens"),
				llmtest.Unauthorized:   errorBody("invalid_request_error", "invalid_api_key", "Incorrect API key provided: "+f.Key),
			}[f.Class]
			if f.RetryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter.Seconds())))
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.Status)
			_, _ = io.WriteString(w, body)
		},
		StreamError: func(w http.ResponseWriter, partial string) {
			b, _ := json.Marshal(map[string]string{"content": partial})
			sse(w, chunk(string(b), ""), `{"error":{"type":"server_error","code":null,"message":"The server had an error while processing your request."}}`)
		},
		StreamErrorKind: models.ModelUnavailable,
		Cut: func(w http.ResponseWriter, partial string) {
			b, _ := json.Marshal(map[string]string{"content": partial})
			sse(w, chunk(string(b), ""))
		},
		Begin: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "data: "+chunk(`{"role":"assistant","content":""}`, "")+"\n\n")
			w.(http.Flusher).Flush()
		},
	})
}

// TestProviderFailuresAreClassifiedAndNotRetried covers the Chat
// Completions API's own failures beyond the shared suite's.
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
		{"429 with retry-after-ms", 429, map[string]string{"Retry-After-Ms": "1500"}, errorBody("requests", "rate_limit_exceeded", "Rate limit reached"), models.ModelRateLimited, true, 1500 * time.Millisecond},
		{"429 out of quota", 429, nil, errorBody("insufficient_quota", "insufficient_quota", "You exceeded your current quota"), models.ModelAuth, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec, m := serve(t, Config{APIKey: testKey}, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			_, err := m.Complete(context.Background(), models.ModelRequest{Messages: []models.ModelMessage{userText("secret plan")}}, nil)
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

func TestALocalServerNeedsNoKeyAndGetsNone(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "from-env")
	rec, m := serve(t, Config{Model: "llama3.2"}, func(w http.ResponseWriter, r *http.Request) {
		sse(w, chunk(`{"content":"ok"}`, "stop"))
	})
	resp, err := m.Complete(context.Background(), models.ModelRequest{Messages: []models.ModelMessage{userText("hi")}}, nil)
	require.NoError(t, err)
	assert.Equal(t, "ok", resp.Text())
	require.Equal(t, 1, rec.count())
	assert.Empty(t, rec.requests[0].Header.Get("Authorization"), "the environment's key must not reach a local server")
}

func TestNewNeedsAKeyOrABaseURL(t *testing.T) {
	_, err := New(Config{Model: "gpt-test"})
	assert.Error(t, err)
	_, err = New(Config{APIKey: "k"})
	assert.Error(t, err)
	_, err = New(Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.2"})
	assert.NoError(t, err)
}
