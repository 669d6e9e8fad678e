package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"holdco/models"
	"holdco/observability"
	"holdco/service"
	"holdco/service/agenttools"
	"holdco/service/connector"
	"holdco/service/founding"
	"holdco/service/turns"
)

// Inputs of the connector's own tools. Schemas are generated from these
// types with agenttools' tags (jsonschema, maxLength, enum); arguments are
// checked against them property by property, so a refusal names its field.

// NoInput is the input of a tool without arguments.
type NoInput struct{}

// BusinessInput names a business.
type BusinessInput struct {
	Business string `json:"business" jsonschema:"the business's handle (e.g. acme-plants) or id" maxLength:"64"`
}

// CreateBusinessInput is create_business's input.
type CreateBusinessInput struct {
	Idea   string `json:"idea" jsonschema:"what the business does, in the user's words" maxLength:"20000"`
	Name   string `json:"name,omitempty" jsonschema:"the business's name; empty: one is chosen from the idea" maxLength:"200"`
	Handle string `json:"handle,omitempty" jsonschema:"the business's handle, a lower-case slug used in its addresses; only with a name" maxLength:"64"`
	Paused bool   `json:"paused,omitempty" jsonschema:"create it paused: no scheduled agent runs until activate_business (messages still work)"`
}

// SendMessageInput is send_message's input.
type SendMessageInput struct {
	Business    string   `json:"business" jsonschema:"the business's handle or id" maxLength:"64"`
	Message     string   `json:"message" jsonschema:"the message to the business's agent; answers its open question when it waits" maxLength:"32000"`
	Attachments []string `json:"attachments,omitempty" jsonschema:"ids of files from upload_file (at most 10)"`
	SessionID   string   `json:"session_id,omitempty" jsonschema:"continue this conversation; empty: the waiting one, else a new one" maxLength:"36"`
	// IdempotencyKey makes a retry safe: the same key again answers the
	// turn the first send started.
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"optional: a key of your choice naming this message (a UUID); sent again with the same key, the call answers the turn the first one started instead of starting another" maxLength:"255"`
}

// TurnInput names a turn.
type TurnInput struct {
	TurnID string `json:"turn_id" jsonschema:"the turn's id (from send_message)" maxLength:"36"`
}

// UploadFileInput is upload_file's input.
type UploadFileInput struct {
	Business      string `json:"business" jsonschema:"the business's handle or id" maxLength:"64"`
	Filename      string `json:"filename" jsonschema:"the file's name, e.g. brief.pdf" maxLength:"255"`
	ContentBase64 string `json:"content_base64" jsonschema:"the file's bytes in standard base64, at most 3 MB decoded"`
	Path          string `json:"path,omitempty" jsonschema:"where the file goes among the business's files; empty: the filename; ending in / : a folder" maxLength:"1024"`
	ContentType   string `json:"content_type,omitempty" jsonschema:"the media type, e.g. application/pdf" maxLength:"255"`
}

// CancelSubscriptionInput is cancel_subscription's input.
type CancelSubscriptionInput struct {
	Business     string `json:"business" jsonschema:"the business's handle or id" maxLength:"64"`
	Subscription string `json:"subscription" jsonschema:"the subscription's id (holdco's or the payment provider's sub_…)" maxLength:"255"`
}

// registerTools adds every tool: the connector's own, the link-only ones
// and the agents' tool set with `business` added. A name used twice stops
// the start.
func (h *handler) registerTools(s *sdk.Server) {
	c := h.conn
	addTool(h, s, "list_businesses", "List the businesses of the user's account: name, handle, status, site and dashboard addresses, the business's own balance, the agent's open questions and whether its agent takes messages (agent_chat).",
		func(ctx context.Context, _ NoInput) (connector.BusinessList, error) { return c.ListBusinesses(ctx) })
	addTool(h, s, "get_business", "Read one business in detail: status, site and dashboard, mission, idea, ready (set up), revenue, the account's credits, open tasks and the last turn.",
		func(ctx context.Context, in BusinessInput) (connector.BusinessDetail, error) {
			return c.GetBusiness(ctx, in.Business)
		})
	addTool(h, s, "create_business", "Create a business from an idea and start its first turn. Returns at once with the business, whether welcome credits were granted, and first_pass (started: poll its turn_id with get_turn; provisioning: poll get_business until ready, then start_first_pass). A retry of the same idea within ten minutes returns the business already created.",
		func(ctx context.Context, in CreateBusinessInput) (connector.Created, error) {
			return c.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: in.Idea, Name: in.Name, Handle: in.Handle, Paused: in.Paused})
		})
	addTool(h, s, "start_first_pass", "Start the first turn of a business when create_business could not (it was being set up, or credits were short).",
		func(ctx context.Context, in BusinessInput) (connector.FirstPassResult, error) {
			return c.StartFirstPass(ctx, in.Business)
		})
	addTool(h, s, "pause_business", "Pause a business: no scheduled agent runs; messages still work.",
		func(ctx context.Context, in BusinessInput) (connector.BusinessRef, error) {
			return c.SetPaused(ctx, in.Business, true)
		})
	addTool(h, s, "activate_business", "Activate a paused business: its scheduled agent runs resume.",
		func(ctx context.Context, in BusinessInput) (connector.BusinessRef, error) {
			return c.SetPaused(ctx, in.Business, false)
		})
	addTool(h, s, "send_message", "Send a message to a business's agent; it starts a turn and returns at once with turn_id, session_id and business_id (poll get_turn every few seconds). Clients that declare the io.modelcontextprotocol/tasks extension get a task instead (task id = turn id).",
		func(ctx context.Context, in SendMessageInput) (connector.SentMessage, error) {
			return c.SendMessage(ctx, in.Business, turns.Message{Text: in.Message, Attachments: in.Attachments, SessionID: in.SessionID,
				IdempotencyKey: in.IdempotencyKey})
		})
	addTool(h, s, "get_turn", "Read a turn: status (queued, running, waiting, completed, failed, interrupted), elapsed seconds, the agent's text so far, the final answer, the question when it waits, and the credits it cost once ended. Poll every few seconds.",
		func(ctx context.Context, in TurnInput) (connector.Turn, error) { return c.GetTurn(ctx, in.TurnID) })
	addTool(h, s, "interrupt_turn", "Stop a running turn (the turn ends interrupted); an ended turn is answered as it is.",
		func(ctx context.Context, in TurnInput) (connector.Turn, error) {
			return c.InterruptTurn(ctx, in.TurnID)
		})
	addTool(h, s, "get_billing_links", "The account's balance and plan with links to top up credits, upgrade the plan and open the billing portal; nothing is charged. At most 30 calls an hour and 200 a day.",
		func(ctx context.Context, _ NoInput) (connector.BillingLinks, error) { return c.GetBillingLinks(ctx) })
	addTool(h, s, "get_credits", "The account's credit balance, today's spend, the minimum balance to start a turn and the plan.",
		func(ctx context.Context, _ NoInput) (connector.Credits, error) { return c.GetCredits(ctx) })
	addTool(h, s, "upload_file", "Store a file (base64, at most 3 MB) among a business's files; returns its id to attach to send_message.",
		func(ctx context.Context, in UploadFileInput) (connector.Uploaded, error) {
			return c.UploadFile(ctx, connector.Upload{Business: in.Business, Filename: in.Filename, Path: in.Path, ContentType: in.ContentType, ContentBase64: in.ContentBase64})
		})
	addTool(h, s, "cancel_subscription", "Cancel, at once, a subscription one of the business's customers bought.",
		func(ctx context.Context, in CancelSubscriptionInput) (connector.Subscription, error) {
			return c.CancelSubscription(ctx, in.Business, in.Subscription)
		})
	for _, la := range connector.LinkActions {
		if la.PerBusiness {
			addTool(h, s, la.Name, la.Description, func(ctx context.Context, in BusinessInput) (connector.Link, error) {
				return c.OpenLink(ctx, la.Name, in.Business)
			})
		} else {
			addTool(h, s, la.Name, la.Description, func(ctx context.Context, _ NoInput) (connector.Link, error) { return c.OpenLink(ctx, la.Name, "") })
		}
	}
	for _, spec := range c.AgentTools() {
		if h.names[spec.Name] {
			panic(fmt.Sprintf("mcp: the agents' tool %s has the name of a connector tool", spec.Name))
		}
		h.addAgentTool(s, spec)
	}
}

// addTool registers a typed tool: its input schema from In (agenttools'
// tags), its output schema from Out, arguments checked by agenttools'
// checker (invalid_argument with the field; results over 1 MB too_large).
func addTool[In, Out any](h *handler, s *sdk.Server, name, description string, fn func(context.Context, In) (Out, error)) {
	check := agenttools.NewCatalog()
	agenttools.Register(check, name, description, func(ctx context.Context, _ string, in In) (Out, error) { return fn(ctx, in) })
	spec := check.Specs()[0]
	schema, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: output schema: %v", name, err))
	}
	// Encoded once: tools/list would otherwise encode every schema per
	// request (most of its time).
	out, err := json.Marshal(schema)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: output schema: %v", name, err))
	}
	h.names[name] = true
	h.add(s, &sdk.Tool{Name: name, Description: description, InputSchema: json.RawMessage(spec.InputSchema), OutputSchema: json.RawMessage(out)},
		func(ctx context.Context, args json.RawMessage) *sdk.CallToolResult {
			raw, err := check.Call(ctx, "", name, args)
			return h.result(ctx, name, raw, err)
		})
}

// toolCall runs one tool on its arguments as sent (nil when absent) and
// renders its result; the principal is in ctx. It is the one function
// both the SDK's tools/call and the fast path (toolscall.go) run.
type toolCall func(ctx context.Context, args json.RawMessage) *sdk.CallToolResult

// add registers a tool with the SDK and keeps its call for the fast path.
func (h *handler) add(s *sdk.Server, t *sdk.Tool, call toolCall) {
	if h.calls == nil {
		h.calls = map[string]registeredCall{}
	}
	// A tool whose input schema binds arguments to headers (x-mcp-header)
	// has them checked by the SDK: its calls are the SDK's.
	schema, _ := json.Marshal(t.InputSchema)
	h.calls[t.Name] = registeredCall{call: call, fast: !bytes.Contains(schema, []byte("x-mcp-header"))}
	s.AddTool(t, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return call(ctx, req.Params.Arguments), nil
	})
}

// addAgentTool offers one of the agents' tools with `business` added to
// its input.
func (h *handler) addAgentTool(s *sdk.Server, spec models.ToolSpec) {
	var schema map[string]any
	if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
		panic(fmt.Sprintf("mcp: agents' tool %s: %v", spec.Name, err))
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props["business"] = map[string]any{"type": "string", "description": "the business's handle or id", "maxLength": 64}
	if agenttools.Keyed(spec.Name) {
		props[connector.IdempotencyKeyArgument] = map[string]any{"type": "string", "maxLength": service.MaxIdempotencyKeyLength,
			"description": "optional: a key of your choice naming this call (e.g. a UUID); sending the call again with the same key answers the first call's effect instead of repeating it, and pays nothing more"}
	}
	schema["properties"] = props
	required := []any{"business"}
	if r, ok := schema["required"].([]any); ok {
		required = append(required, r...)
	}
	schema["required"] = required
	raw, _ := json.Marshal(schema)
	name := spec.Name
	h.add(s, &sdk.Tool{Name: name, Description: spec.Description + " (The business's agents' tool: acts on the business named by `business`.)", InputSchema: json.RawMessage(raw)},
		func(ctx context.Context, arguments json.RawMessage) *sdk.CallToolResult {
			business, key, args, err := splitBusiness(arguments, agenttools.Keyed(name))
			if err == nil {
				var res json.RawMessage
				res, err = h.conn.CallAgentTool(ctx, business, name, key, args)
				return h.result(ctx, name, res, err)
			}
			return h.result(ctx, name, nil, err)
		})
}

// splitBusiness takes `business` (and, for a keyed tool, the optional
// idempotency_key) out of an agents' tool's arguments; the rest are the
// tool's own.
func splitBusiness(raw json.RawMessage, keyed bool) (business, key string, rest json.RawMessage, err error) {
	var args map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", "", nil, models.Errorf(models.CodeInvalidArgument, "The arguments must be one JSON object.")
		}
	}
	b, ok := args["business"]
	if !ok {
		return "", "", nil, models.Errorf(models.CodeInvalidArgument, "business is required.").WithField("business")
	}
	if err := json.Unmarshal(b, &business); err != nil {
		return "", "", nil, models.Errorf(models.CodeInvalidArgument, "business must be a string: the business's handle or id.").WithField("business")
	}
	delete(args, "business")
	if k, ok := args[connector.IdempotencyKeyArgument]; ok && keyed {
		if err := json.Unmarshal(k, &key); err != nil || key == "" {
			return "", "", nil, models.Errorf(models.CodeInvalidArgument, "idempotency_key must be a non-empty string.").WithField(connector.IdempotencyKeyArgument)
		}
		delete(args, connector.IdempotencyKeyArgument)
	}
	rest, err = json.Marshal(args)
	if err != nil {
		return "", "", nil, models.Errorf(models.CodeInvalidArgument, "The arguments could not be read.")
	}
	if args == nil {
		rest = json.RawMessage("{}")
	}
	return business, key, rest, nil
}

// result renders a tool's answer: the JSON as text and structured content,
// or a refusal as isError with {error, detail, …}.
func (h *handler) result(ctx context.Context, tool string, raw json.RawMessage, err error) *sdk.CallToolResult {
	observability.ConnectorToolCalled(tool, err)
	if err != nil {
		code := models.ErrorCodeOf(err)
		if code == models.CodeInternal || code == models.CodeUpstreamUnavailable {
			h.logFailure(ctx, "connector: tool failed", err, "tool", tool, "code", code)
		}
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(connector.ErrorBody(err))}}}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(raw)}}, StructuredContent: raw}
}
