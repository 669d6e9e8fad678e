// Package anthropic is the Anthropic Messages API adapter, on the official
// SDK: one streaming call per Complete, text deltas handed to onText as they
// arrive, tool calls assembled from the stream, failures classified as
// models.ModelCallError. The SDK's retries are off: the caller's retry policy
// decides, once, from Retryable and RetryAfter.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"holdco/models"
	"holdco/providers/llm"
)

// Config is the adapter's settings.
type Config struct {
	APIKey string
	// Model is used unless a request names its own.
	Model string
	// BaseURL overrides the API's address (tests, gateways); empty uses
	// Anthropic's.
	BaseURL string
	// MaxTokens is the answer's cap unless a request sets its own.
	MaxTokens int
	// Timeout bounds one whole call, stream included; 0 leaves it to ctx.
	Timeout time.Duration
	// HTTPClient is optional (tests).
	HTTPClient *http.Client
}

// Model calls Claude through the Messages API.
type Model struct {
	client sdk.Client
	cfg    Config
}

// New builds the adapter; it does not call the API.
func New(cfg Config) (*Model, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("anthropic: an API key is required")
	}
	if cfg.Model == "" {
		return nil, errors.New("anthropic: a model is required")
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 4096
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	opts := []option.RequestOption{
		// Settings come from holdco's configuration only, not ANTHROPIC_* variables.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(httpClient),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	return &Model{client: sdk.NewClient(opts...), cfg: cfg}, nil
}

// Complete sends req as one streaming Messages call.
func (m *Model) Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error) {
	params, err := m.params(req)
	if err != nil {
		return models.ModelResponse{}, err
	}
	if m.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.cfg.Timeout)
		defer cancel()
	}
	stream := m.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()

	var msg sdk.Message
	// The tool arguments as streamed: Accumulate replaces arguments that
	// are not JSON with {}, which would run the tool without them.
	args := map[int64]*strings.Builder{}
	stopped := false
	for stream.Next() {
		event := stream.Current()
		if err := msg.Accumulate(event); err != nil {
			return models.ModelResponse{}, &models.ModelCallError{Kind: models.ModelInvalidResponse, Retryable: true, Detail: err.Error()}
		}
		switch event.Type {
		case "content_block_delta":
			switch event.Delta.Type {
			case "text_delta":
				if onText != nil && event.Delta.Text != "" {
					onText(event.Delta.Text)
				}
			case "input_json_delta":
				if args[event.Index] == nil {
					args[event.Index] = &strings.Builder{}
				}
				args[event.Index].WriteString(event.Delta.PartialJSON)
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return models.ModelResponse{}, m.classify(ctx, err)
	}
	if !stopped {
		// The connection closed before message_stop: the answer is cut.
		return models.ModelResponse{}, llm.TransportError(ctx, errors.New("stream ended early"))
	}
	for i, a := range args {
		if s := strings.TrimSpace(a.String()); s != "" && !json.Valid([]byte(s)) && int(i) < len(msg.Content) {
			return models.ModelResponse{}, &models.ModelCallError{Kind: models.ModelInvalidResponse, Retryable: true, Detail: "tool " + msg.Content[i].Name + ": input is not JSON"}
		}
	}
	return response(msg)
}

func (m *Model) params(req models.ModelRequest) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{
		Model:     sdk.Model(m.cfg.Model),
		MaxTokens: int64(m.cfg.MaxTokens),
	}
	if req.Model != "" {
		p.Model = sdk.Model(req.Model)
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			return p, &models.ModelCallError{Kind: models.ModelInvalidRequest, Detail: fmt.Sprintf("tool %s: %v", t.Name, err)}
		}
		tool := sdk.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = sdk.String(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tool})
	}
	for _, msg := range req.Messages {
		var blocks []sdk.ContentBlockParamUnion
		for _, b := range msg.Content {
			switch b.Type {
			case models.ContentText:
				blocks = append(blocks, sdk.NewTextBlock(b.Text))
			case models.ContentToolUse:
				input := b.Input
				if len(input) == 0 {
					input = json.RawMessage(`{}`)
				}
				blocks = append(blocks, sdk.NewToolUseBlock(b.ToolUseID, input, b.ToolName))
			case models.ContentToolResult:
				blocks = append(blocks, sdk.NewToolResultBlock(b.ToolUseID, b.Text, b.IsError))
			default:
				return p, &models.ModelCallError{Kind: models.ModelInvalidRequest, Detail: fmt.Sprintf("unknown content block type %q", b.Type)}
			}
		}
		switch msg.Role {
		case models.RoleUser:
			p.Messages = append(p.Messages, sdk.NewUserMessage(blocks...))
		case models.RoleAssistant:
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
		default:
			return p, &models.ModelCallError{Kind: models.ModelInvalidRequest, Detail: fmt.Sprintf("unknown message role %q", msg.Role)}
		}
	}
	return p, nil
}

// inputSchema splits a JSON Schema object into the SDK's fields; keywords
// besides properties and required travel as extra fields.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if len(raw) == 0 {
		return s, nil
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return s, fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	if t, ok := fields["type"]; ok && t != "object" {
		return s, fmt.Errorf("input schema type is %v, not object", t)
	}
	s.Properties = fields["properties"]
	if req, ok := fields["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range fields {
		if k != "type" && k != "properties" && k != "required" {
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

func response(msg sdk.Message) (models.ModelResponse, error) {
	r := models.ModelResponse{
		Model: string(msg.Model),
		Usage: models.ModelUsage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens},
	}
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			r.Content = append(r.Content, models.ContentBlock{Type: models.ContentText, Text: b.Text})
		case "tool_use":
			if !json.Valid(b.Input) {
				return r, &models.ModelCallError{Kind: models.ModelInvalidResponse, Retryable: true, Detail: "tool " + b.Name + ": input is not JSON"}
			}
			r.Content = append(r.Content, models.ContentBlock{Type: models.ContentToolUse, ToolUseID: b.ID, ToolName: b.Name, Input: append(json.RawMessage(nil), b.Input...)})
		}
		// thinking and server tool blocks are not part of holdco's conversation
	}
	switch msg.StopReason {
	case sdk.StopReasonToolUse:
		r.StopReason = models.StopToolUse
	case sdk.StopReasonMaxTokens:
		r.StopReason = models.StopMaxTokens
	case sdk.StopReasonModelContextWindowExceeded:
		return r, &models.ModelCallError{Kind: models.ModelContextTooLong, Detail: "the model's context window is full"}
	default: // end_turn, stop_sequence, pause_turn, refusal
		r.StopReason = models.StopEndTurn
	}
	return r, nil
}

func (m *Model) classify(ctx context.Context, err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		var header http.Header
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body)
		status := apiErr.StatusCode
		if status == http.StatusOK {
			// An error event inside a stream that began well: the type decides.
			status = 0
		}
		return llm.StatusError(status, header, body.Error.Type, body.Error.Message, m.cfg.APIKey)
	}
	return llm.TransportError(ctx, err)
}
