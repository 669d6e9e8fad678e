// Package llmtest is the conformance suite of the model adapters: every
// adapter (providers/llm/anthropic, providers/llm/openai, …) runs Run
// against a local server speaking its provider's wire protocol, so the
// rules the turn engine relies on — streamed text in order, usage and stop
// reasons mapped, tool calls assembled from streamed arguments, failures
// classified the same way (kind, retryable, Retry-After, status), never
// retried by the SDK, no key or prompt in an error, malformed or cut
// answers an error and never a panic, timeouts and cancellation told
// apart — hold for each one alike. Protocol-specific checks (request
// bodies, headers, provider-only error codes) stay in the adapter's own
// tests.
package llmtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

// Model is the consumer's interface of an adapter.
type Model interface {
	Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error)
}

// FailureClass is a kind of failure every provider can answer with.
type FailureClass int

// The failure classes of the suite.
const (
	RateLimited    FailureClass = iota // 429, with Retry-After when RetryAfter > 0
	ServerError                        // 500
	InvalidRequest                     // 400, a malformed request
	ContextTooLong                     // 400, the prompt exceeds the model's context
	Unauthorized                       // 401, a wrong key (the message may echo the key)
)

// Failure is an error answer the protocol writes.
type Failure struct {
	Class      FailureClass
	Status     int
	RetryAfter time.Duration
	// Key is the configured key, which some providers echo in the message.
	Key string
}

// Protocol is one provider's side of the wire, as a test server speaks it.
type Protocol struct {
	// Key is the API key the model is built with; it must not appear in
	// any error.
	Key string
	// New builds the adapter against baseURL (the test server's root)
	// with timeout as its per-call bound (0: the caller's context alone).
	New func(t *testing.T, baseURL string, timeout time.Duration) Model
	// Text streams a finished reply made of deltas and reports usage.
	Text func(w http.ResponseWriter, deltas []string, usage models.ModelUsage)
	// ToolCall streams one tool call whose JSON arguments arrive in parts
	// (none: no arguments) and ends the reply asking for the tool.
	ToolCall func(w http.ResponseWriter, id, name string, parts []string)
	// MaxTokens streams text and ends the reply because it reached the
	// request's token limit.
	MaxTokens func(w http.ResponseWriter, text string)
	// Malformed streams partial text, then an event of the protocol's
	// framing whose data is not JSON.
	Malformed func(w http.ResponseWriter, partial string)
	// Fail answers with the provider's error response for f.
	Fail func(w http.ResponseWriter, f Failure)
	// StreamError streams partial text, then the provider's error event
	// for an overloaded or failing server.
	StreamError func(w http.ResponseWriter, partial string)
	// StreamErrorKind is the kind that error event is classified as.
	StreamErrorKind models.ModelErrorKind
	// Cut streams partial text and ends the response without finishing
	// the reply.
	Cut func(w http.ResponseWriter, partial string)
	// Begin writes the first event of a stream and flushes it (the rest
	// never comes).
	Begin func(w http.ResponseWriter)
}

type server struct {
	mu    sync.Mutex
	calls int
	url   string
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func serve(t *testing.T, respond func(w http.ResponseWriter, r *http.Request)) *server {
	t.Helper()
	s := &server{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.calls++
		s.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func ask(text string) models.ModelRequest {
	return models.ModelRequest{Messages: []models.ModelMessage{{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: text}}}}}
}

func callError(t *testing.T, err error) *models.ModelCallError {
	t.Helper()
	var ce *models.ModelCallError
	require.ErrorAs(t, err, &ce)
	return ce
}

// Run runs the conformance suite against p.
func Run(t *testing.T, p Protocol) {
	t.Run("text streams as it arrives", func(t *testing.T) {
		t.Parallel()
		usage := models.ModelUsage{InputTokens: 42, OutputTokens: 7}
		s := serve(t, func(w http.ResponseWriter, _ *http.Request) { p.Text(w, []string{"Hello", ", ", "world"}, usage) })
		var deltas []string
		resp, err := p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("hi"), func(d string) { deltas = append(deltas, d) })
		require.NoError(t, err)
		assert.Equal(t, []string{"Hello", ", ", "world"}, deltas)
		assert.Equal(t, "Hello, world", resp.Text())
		assert.Equal(t, models.StopEndTurn, resp.StopReason)
		assert.Equal(t, usage, resp.Usage, "input and output tokens as the provider reported them")
		assert.Empty(t, resp.ToolCalls())
		assert.Equal(t, 1, s.count())
	})

	t.Run("a reply cut at the token limit stops for max tokens", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(w http.ResponseWriter, _ *http.Request) { p.MaxTokens(w, "The plan is to") })
		resp, err := p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("plan"), nil)
		require.NoError(t, err, "a reply at the limit is an answer, not a failure")
		assert.Equal(t, models.StopMaxTokens, resp.StopReason)
		assert.Equal(t, "The plan is to", resp.Text())
	})

	t.Run("a tool call is assembled from streamed arguments", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(w http.ResponseWriter, _ *http.Request) {
			p.ToolCall(w, "call_1", "write_document", []string{`{"title": "Pl`, `an", "document_type"`, `: "notes"}`})
		})
		var text strings.Builder
		resp, err := p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("plan"), func(d string) { text.WriteString(d) })
		require.NoError(t, err)
		assert.Equal(t, models.StopToolUse, resp.StopReason)
		calls := resp.ToolCalls()
		require.Len(t, calls, 1)
		assert.Equal(t, "call_1", calls[0].ToolUseID)
		assert.Equal(t, "write_document", calls[0].ToolName)
		assert.JSONEq(t, `{"title":"Plan","document_type":"notes"}`, string(calls[0].Input))
		assert.True(t, json.Valid(calls[0].Input))
		assert.NotContains(t, text.String(), "title", "tool arguments are not text")
	})

	t.Run("a tool call without arguments has an empty object as input", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(w http.ResponseWriter, _ *http.Request) { p.ToolCall(w, "call_2", "list_tasks", nil) })
		resp, err := p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("tasks"), nil)
		require.NoError(t, err)
		assert.Equal(t, models.StopToolUse, resp.StopReason)
		calls := resp.ToolCalls()
		require.Len(t, calls, 1)
		assert.Equal(t, "list_tasks", calls[0].ToolName)
		assert.JSONEq(t, `{}`, string(calls[0].Input))
	})

	t.Run("a tool call whose arguments are not JSON is an invalid response", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(w http.ResponseWriter, _ *http.Request) {
			p.ToolCall(w, "call_3", "write_document", []string{`{"title": "Pl`, `an", `})
		})
		_, err := p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("plan"), nil)
		ce := callError(t, err)
		assert.Equal(t, models.ModelInvalidResponse, ce.Kind)
		assert.True(t, ce.Retryable, "the next answer may be whole")
	})

	failures := []struct {
		name      string
		f         Failure
		kind      models.ModelErrorKind
		retryable bool
	}{
		{"429 with Retry-After", Failure{Class: RateLimited, Status: 429, RetryAfter: 7 * time.Second}, models.ModelRateLimited, true},
		{"429 without Retry-After", Failure{Class: RateLimited, Status: 429}, models.ModelRateLimited, true},
		{"500", Failure{Class: ServerError, Status: 500}, models.ModelUnavailable, true},
		{"400", Failure{Class: InvalidRequest, Status: 400}, models.ModelInvalidRequest, false},
		{"400 context too long", Failure{Class: ContextTooLong, Status: 400}, models.ModelContextTooLong, false},
		{"401", Failure{Class: Unauthorized, Status: 401}, models.ModelAuth, false},
	}
	for _, tc := range failures {
		t.Run("failure is classified and not retried: "+tc.name, func(t *testing.T) {
			t.Parallel()
			f := tc.f
			f.Key = p.Key
			s := serve(t, func(w http.ResponseWriter, _ *http.Request) { p.Fail(w, f) })
			_, err := p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("secret plan"), nil)
			ce := callError(t, err)
			assert.Equal(t, tc.kind, ce.Kind)
			assert.Equal(t, tc.retryable, ce.Retryable)
			assert.Equal(t, tc.f.RetryAfter, ce.RetryAfter)
			assert.Equal(t, tc.f.Status, ce.Status)
			assert.NotContains(t, err.Error(), p.Key, "the key never reaches an error")
			assert.NotContains(t, err.Error(), "secret plan", "the prompt never reaches an error")
			assert.Equal(t, 1, s.count(), "the SDK must not retry: the turn engine does")
		})
	}

	t.Run("an error in the stream is classified after the text before it", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(w http.ResponseWriter, _ *http.Request) { p.StreamError(w, "Partial") })
		var got string
		_, err := p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("hi"), func(d string) { got += d })
		ce := callError(t, err)
		assert.Equal(t, p.StreamErrorKind, ce.Kind)
		assert.True(t, ce.Retryable)
		assert.Equal(t, "Partial", got)
		assert.Equal(t, 1, s.count())
	})

	t.Run("a stream event that is not JSON is an error, not a panic", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(w http.ResponseWriter, _ *http.Request) { p.Malformed(w, "Partial") })
		var resp models.ModelResponse
		var err error
		require.NotPanics(t, func() { resp, err = p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("hi"), nil) })
		ce := callError(t, err)
		assert.Equal(t, models.ModelUnavailable, ce.Kind)
		assert.True(t, ce.Retryable)
		assert.Empty(t, resp.Content, "no half answer")
		assert.Equal(t, 1, s.count())
	})

	// Answers no provider writes but a proxy or a broken server in front
	// of one does: the suite writes them itself.
	garbage := []struct {
		name, contentType, body string
		status                  int
	}{
		{"a 502 page from a proxy", "text/html", "<html><body>Bad Gateway</body></html>", http.StatusBadGateway},
		{"a 503 without a body", "application/json", "", http.StatusServiceUnavailable},
	}
	for _, tc := range garbage {
		t.Run("a server error whose body is not the protocol's is unavailable: "+tc.name, func(t *testing.T) {
			t.Parallel()
			s := serve(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			_, err := p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("secret plan"), nil)
			ce := callError(t, err)
			assert.Equal(t, models.ModelUnavailable, ce.Kind)
			assert.True(t, ce.Retryable)
			assert.Equal(t, tc.status, ce.Status)
			assert.Zero(t, ce.RetryAfter)
			assert.NotContains(t, err.Error(), p.Key)
			assert.NotContains(t, err.Error(), "secret plan")
			assert.Equal(t, 1, s.count(), "the SDK must not retry: the turn engine does")
		})
	}

	t.Run("a success whose body is not a stream is an error, not a panic", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "<html><body>Sign in to the captive portal</body></html>\n")
		})
		var err error
		require.NotPanics(t, func() { _, err = p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("hi"), nil) })
		ce := callError(t, err)
		assert.Equal(t, models.ModelUnavailable, ce.Kind)
		assert.True(t, ce.Retryable)
	})

	t.Run("a stream cut before its end is unavailable", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(w http.ResponseWriter, _ *http.Request) { p.Cut(w, "Half") })
		_, err := p.New(t, s.url, 10*time.Second).Complete(context.Background(), ask("hi"), nil)
		ce := callError(t, err)
		assert.Equal(t, models.ModelUnavailable, ce.Kind)
		assert.True(t, ce.Retryable)
	})

	t.Run("the caller's deadline on a server that never answers is a timeout", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := p.New(t, s.url, 0).Complete(ctx, ask("hi"), nil)
		ce := callError(t, err)
		assert.Equal(t, models.ModelTimeout, ce.Kind)
		assert.True(t, ce.Retryable)
		assert.LessOrEqual(t, s.count(), 1, "never retried (on a loaded machine the deadline may pass before the request is sent)")
	})

	t.Run("the configured timeout bounds a stalled stream", func(t *testing.T) {
		t.Parallel()
		s := serve(t, func(w http.ResponseWriter, r *http.Request) {
			p.Begin(w)
			<-r.Context().Done()
		})
		_, err := p.New(t, s.url, 50*time.Millisecond).Complete(context.Background(), ask("hi"), nil)
		ce := callError(t, err)
		assert.Equal(t, models.ModelTimeout, ce.Kind)
		assert.True(t, ce.Retryable)
		assert.LessOrEqual(t, s.count(), 1, "never retried (on a loaded machine the deadline may pass before the request is sent)")
	})

	t.Run("cancelling the call is not retryable", func(t *testing.T) {
		t.Parallel()
		started := make(chan struct{})
		var once sync.Once
		s := serve(t, func(_ http.ResponseWriter, r *http.Request) {
			once.Do(func() { close(started) })
			<-r.Context().Done()
		})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		_, err := p.New(t, s.url, 10*time.Second).Complete(ctx, ask("hi"), nil)
		ce := callError(t, err)
		assert.Equal(t, models.ModelCanceled, ce.Kind)
		assert.False(t, ce.Retryable)
	})
}
