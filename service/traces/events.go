// Package traces keeps the trace of every agent run (one agent turn; the
// run id is the turn's id) as JSON Lines on blob storage, and serves them
// to the operator. The worker writes with Writer: each activity attempt
// stores its events as one part (runs/<run id>/<part>.jsonl, replaced when
// the attempt is retried), and the end of the run joins the parts into
// runs/<run id>/trace.jsonl. Every event is made safe before it is stored
// (secrets redacted, long strings cut; see Sanitize). Service answers the
// admin endpoints. docs/traces.md describes the events and the layout.
package traces

import "time"

// EventType names what an event records.
type EventType string

const (
	EventTurnStarted   EventType = "turn_started"
	EventModelRequest  EventType = "model_request"  // Data: {messages int, tools int, system_chars int, model string}
	EventModelResponse EventType = "model_response" // Data: {stop_reason, text (cut), tool_calls [{id,name,input (cut)}]}
	EventToolCall      EventType = "tool_call"
	EventToolResult    EventType = "tool_result" // Data: the result JSON (cut), IsError
	EventUsage         EventType = "usage"
	EventError         EventType = "error"
	EventTurnEnded     EventType = "turn_ended"
)

// Usage is what a model call (or the whole turn) used.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	Credits      int64 `json:"credits"`
}

// Event is one line of a trace.
type Event struct {
	Time   time.Time `json:"time"`
	Type   EventType `json:"type"`
	Step   int       `json:"step,omitempty"`
	Tool   string    `json:"tool,omitempty"`
	CallID string    `json:"call_id,omitempty"`
	Model  string    `json:"model,omitempty"`
	Data   any       `json:"data,omitempty"`
	Usage  *Usage    `json:"usage,omitempty"`
	Error  string    `json:"error,omitempty"`
}
