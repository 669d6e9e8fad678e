// Package openai is the adapter for OpenAI-compatible Chat Completions
// (OpenAI itself, Ollama, vLLM… through BaseURL), on the official SDK: one
// streaming call per Complete, text deltas handed to onText as they arrive,
// tool calls assembled from their streamed argument fragments, usage from
// the final chunk (stream_options.include_usage), failures classified as
// models.ModelCallError. The SDK's retries are off: the caller's retry
// policy decides.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"holdco/models"
	"holdco/providers/llm"
)

// Config is the adapter's settings.
type Config struct {
	// APIKey may be empty for a local server (Ollama) with BaseURL.
	APIKey string
	// Model is used unless a request names its own.
	Model string
	// BaseURL is the API's address up to /v1 (http://localhost:11434/v1
	// for Ollama); empty uses OpenAI's.
	BaseURL string
	// MaxTokens is the answer's cap unless a request sets its own. OpenAI
	// receives it as max_completion_tokens; servers at a BaseURL as
	// max_tokens, the field every compatible server reads.
	MaxTokens int
	// Timeout bounds one whole call, stream included; 0 leaves it to ctx.
	Timeout time.Duration
	// HTTPClient is optional (tests).
	HTTPClient *http.Client
}

// Model calls a Chat Completions endpoint.
type Model struct {
	client sdk.Client
	cfg    Config
}

// New builds the adapter; it does not call the API.
func New(cfg Config) (*Model, error) {
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, errors.New("openai: an API key is required unless a base URL names a local server")
	}
	if cfg.Model == "" {
		return nil, errors.New("openai: a model is required")
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 4096
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithHTTPClient(httpClient),
		// Always set, so an OPENAI_API_KEY in the environment never
		// reaches a server holdco was not configured to trust with it.
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(strings.TrimRight(cfg.BaseURL, "/")+"/"))
	}
	return &Model{client: sdk.NewClient(opts...), cfg: cfg}, nil
}

// toolCall is one call being assembled from its fragments.
type toolCall struct {
	id, name string
	args     strings.Builder
}

// Complete sends req as one streaming chat completion.
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
	stream := m.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()

	var (
		text   strings.Builder
		calls  = map[int64]*toolCall{}
		finish string
		resp   models.ModelResponse
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			resp.Usage = models.ModelUsage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue // n is 1; a server sending more is ignored
			}
			if d := choice.Delta.Content; d != "" {
				text.WriteString(d)
				if onText != nil {
					onText(d)
				}
			}
			for _, tc := range choice.Delta.ToolCalls {
				c := calls[tc.Index]
				if c == nil {
					c = &toolCall{}
					calls[tc.Index] = c
				}
				if tc.ID != "" {
					c.id = tc.ID
				}
				if tc.Function.Name != "" {
					c.name += tc.Function.Name
				}
				c.args.WriteString(tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				finish = choice.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return models.ModelResponse{}, m.classify(ctx, err)
	}
	if finish == "" {
		// [DONE] or the connection came before a finish_reason: the answer is cut.
		return models.ModelResponse{}, llm.TransportError(ctx, errors.New("stream ended early"))
	}
	if text.Len() > 0 {
		resp.Content = append(resp.Content, models.ContentBlock{Type: models.ContentText, Text: text.String()})
	}
	indexes := make([]int64, 0, len(calls))
	for i := range calls {
		indexes = append(indexes, i)
	}
	sort.Slice(indexes, func(a, b int) bool { return indexes[a] < indexes[b] })
	for _, i := range indexes {
		c := calls[i]
		args := strings.TrimSpace(c.args.String())
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) || c.name == "" {
			return models.ModelResponse{}, &models.ModelCallError{Kind: models.ModelInvalidResponse, Retryable: true, Detail: "tool call " + c.name + ": arguments are not JSON"}
		}
		resp.Content = append(resp.Content, models.ContentBlock{Type: models.ContentToolUse, ToolUseID: c.id, ToolName: c.name, Input: json.RawMessage(args)})
	}
	switch finish {
	case "tool_calls", "function_call":
		resp.StopReason = models.StopToolUse
	case "length":
		resp.StopReason = models.StopMaxTokens
	default: // stop, content_filter
		resp.StopReason = models.StopEndTurn
	}
	if len(calls) > 0 {
		// Some compatible servers end a tool call with "stop".
		resp.StopReason = models.StopToolUse
	}
	return resp, nil
}

func (m *Model) params(req models.ModelRequest) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.cfg.Model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if req.Model != "" {
		p.Model = shared.ChatModel(req.Model)
	}
	maxTokens := int64(m.cfg.MaxTokens)
	if req.MaxTokens > 0 {
		maxTokens = int64(req.MaxTokens)
	}
	if m.cfg.BaseURL == "" {
		p.MaxCompletionTokens = sdk.Int(maxTokens)
	} else {
		p.MaxTokens = sdk.Int(maxTokens)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = sdk.String(t.Description)
		}
		if len(t.InputSchema) > 0 {
			if err := json.Unmarshal(t.InputSchema, &fn.Parameters); err != nil {
				return p, &models.ModelCallError{Kind: models.ModelInvalidRequest, Detail: fmt.Sprintf("tool %s: input schema is not a JSON object", t.Name)}
			}
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(fn))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case models.RoleUser:
			// Tool results become tool messages, which must follow the
			// assistant's calls directly; the user's text comes after them.
			var text []string
			for _, b := range msg.Content {
				switch b.Type {
				case models.ContentToolResult:
					content := b.Text
					if b.IsError {
						content = "Error: " + content
					}
					p.Messages = append(p.Messages, sdk.ToolMessage(content, b.ToolUseID))
				case models.ContentText:
					text = append(text, b.Text)
				default:
					return p, &models.ModelCallError{Kind: models.ModelInvalidRequest, Detail: fmt.Sprintf("a user message cannot hold a %q block", b.Type)}
				}
			}
			if len(text) > 0 {
				p.Messages = append(p.Messages, sdk.UserMessage(strings.Join(text, "\n\n")))
			}
		case models.RoleAssistant:
			var a sdk.ChatCompletionAssistantMessageParam
			var text []string
			for _, b := range msg.Content {
				switch b.Type {
				case models.ContentText:
					text = append(text, b.Text)
				case models.ContentToolUse:
					args := string(b.Input)
					if args == "" {
						args = "{}"
					}
					a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
						OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
							ID:       b.ToolUseID,
							Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.ToolName, Arguments: args},
						},
					})
				default:
					return p, &models.ModelCallError{Kind: models.ModelInvalidRequest, Detail: fmt.Sprintf("an assistant message cannot hold a %q block", b.Type)}
				}
			}
			if len(text) > 0 {
				a.Content.OfString = sdk.String(strings.Join(text, ""))
			}
			p.Messages = append(p.Messages, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			return p, &models.ModelCallError{Kind: models.ModelInvalidRequest, Detail: fmt.Sprintf("unknown message role %q", msg.Role)}
		}
	}
	return p, nil
}

func (m *Model) classify(ctx context.Context, err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		var header http.Header
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		errType := apiErr.Code
		if errType == "" {
			errType = apiErr.Type
		}
		return llm.StatusError(apiErr.StatusCode, header, errType, apiErr.Message, m.cfg.APIKey)
	}
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		// An error object inside a stream that began well.
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Code    any    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(streamErr.Event.Data, &body)
		errType := body.Error.Type
		if code, ok := body.Error.Code.(string); ok && code != "" {
			errType = code
		}
		return llm.StatusError(0, nil, errType, body.Error.Message, m.cfg.APIKey)
	}
	return llm.TransportError(ctx, err)
}
