package models

import (
	"encoding/json"
	"fmt"
	"time"
)

// The value types every language model adapter (providers/llm/...) speaks.
// A consumer declares the one method it needs:
//
//	type Model interface {
//		Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error)
//	}
//
// Complete streams: onText receives the text as it arrives (never tool input)
// and the returned ModelResponse holds the whole answer. A failure is a
// *ModelCallError; adapters never retry by themselves (retries belong to the
// caller's retry policy, which reads Retryable and RetryAfter).

// ModelRole is who wrote a message.
type ModelRole string

const (
	RoleUser      ModelRole = "user"
	RoleAssistant ModelRole = "assistant"
)

// ContentType is the kind of one block of a message.
type ContentType string

const (
	ContentText       ContentType = "text"
	ContentToolUse    ContentType = "tool_use"    // the model calls a tool (assistant messages)
	ContentToolResult ContentType = "tool_result" // the tool's answer (user messages)
)

// StopReason is why the model stopped.
type StopReason string

const (
	StopEndTurn   StopReason = "end_turn"   // the answer is complete
	StopToolUse   StopReason = "tool_use"   // the model waits for tool results
	StopMaxTokens StopReason = "max_tokens" // cut at ModelRequest.MaxTokens
)

// ModelRequest is one call to a model.
type ModelRequest struct {
	System   string
	Messages []ModelMessage
	Tools    []ToolSpec
	// MaxTokens caps the answer; 0 uses the adapter's configured default.
	MaxTokens int
	// Model overrides the adapter's configured model when set.
	Model string
}

// ModelMessage is one message of the conversation.
type ModelMessage struct {
	Role    ModelRole
	Content []ContentBlock
}

// ContentBlock is text, a tool call (ToolUseID, ToolName, Input) or a tool
// result (ToolUseID, Text, IsError).
type ContentBlock struct {
	Type      ContentType
	Text      string
	ToolUseID string
	ToolName  string
	Input     json.RawMessage
	IsError   bool
}

// ToolSpec is a tool the model may call; InputSchema is a JSON Schema object.
type ToolSpec struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// ModelUsage counts tokens as the provider reported them.
type ModelUsage struct {
	InputTokens  int64
	OutputTokens int64
}

// ModelResponse is a model's complete answer.
type ModelResponse struct {
	Content    []ContentBlock
	StopReason StopReason
	Usage      ModelUsage
	// Model is the model that answered, as the provider named it.
	Model string
}

// Text is the answer's text blocks joined.
func (r ModelResponse) Text() string {
	var s string
	for _, b := range r.Content {
		if b.Type == ContentText {
			s += b.Text
		}
	}
	return s
}

// ToolCalls are the answer's tool_use blocks.
func (r ModelResponse) ToolCalls() []ContentBlock {
	var calls []ContentBlock
	for _, b := range r.Content {
		if b.Type == ContentToolUse {
			calls = append(calls, b)
		}
	}
	return calls
}

// ModelErrorKind classifies a failed model call.
type ModelErrorKind string

const (
	ModelRateLimited     ModelErrorKind = "rate_limited"     // 429; RetryAfter when the provider said
	ModelOverloaded      ModelErrorKind = "overloaded"       // 529 or an overloaded error in the stream
	ModelUnavailable     ModelErrorKind = "unavailable"      // 5xx, connection failures, a broken stream
	ModelTimeout         ModelErrorKind = "timeout"          // the deadline passed before the answer ended
	ModelInvalidRequest  ModelErrorKind = "invalid_request"  // 400, 404, 422: the request itself is wrong
	ModelAuth            ModelErrorKind = "auth"             // 401, 403: the key is wrong or lacks rights
	ModelContextTooLong  ModelErrorKind = "context_too_long" // the conversation exceeds the model's window
	ModelCanceled        ModelErrorKind = "canceled"         // the caller canceled (an interrupt)
	ModelInvalidResponse ModelErrorKind = "invalid_response" // the provider answered something unreadable
)

// ModelCallError is how every adapter reports a failed call. Detail names
// the provider's error type and message; it never holds the prompt or a key.
type ModelCallError struct {
	Kind       ModelErrorKind
	Retryable  bool
	RetryAfter time.Duration // 0 when the provider gave no hint
	Status     int           // HTTP status, 0 when there was no response
	Detail     string
}

func (e *ModelCallError) Error() string {
	s := "model call failed: " + string(e.Kind)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}
