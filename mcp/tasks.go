package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"holdco/models"
	"holdco/service/connector"
)

// The tasks extension (io.modelcontextprotocol/tasks, 2026-07-28): a
// client that declares it in its per-request capabilities gets a task from
// send_message instead of the plain result. The task is the turn (task id
// = turn id), read from the turn rows every replica sees and authorized
// like get_turn: tasks/get reports working, completed (the result inline;
// a failed turn's is an error result) or cancelled (interrupted);
// tasks/cancel interrupts the turn; tasks/update is unsupported (these
// tasks never ask for input).

// TasksExtension is the extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Methods of the extension.
const (
	methodTasksGet    = "tasks/get"
	methodTasksUpdate = "tasks/update"
	methodTasksCancel = "tasks/cancel"
)

// taskTool is the one tool whose calls become tasks.
const taskTool = "send_message"

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	sdk.ParamsBase
	TaskID         string         `json:"taskId"`
	InputResponses map[string]any `json:"inputResponses,omitempty"`
}

// taskFields are the fields every task answer carries.
type taskFields struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"` // null: kept as long as the turn
	PollIntervalMs int    `json:"pollIntervalMs"`
}

func fieldsOf(t connector.Task) taskFields {
	return taskFields{TaskID: t.TaskID, Status: string(t.Status), CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt,
		PollIntervalMs: connector.TaskPollIntervalMs}
}

// createdTask is tools/call's answer when it made a task.
type createdTask struct {
	sdk.ResultBase
	ResultType string `json:"resultType"` // "task"
	taskFields
}

// detailedTask is tasks/get's answer.
type detailedTask struct {
	sdk.ResultBase
	ResultType string `json:"resultType"` // "complete"
	taskFields
	// Result is the tool result of a completed task.
	Result map[string]any `json:"result,omitempty"`
}

// completeResult is tasks/cancel's and tasks/update's answer.
type completeResult struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
}

func (h *handler) registerTasks(s *sdk.Server) {
	s.AddReceivingMiddleware(h.receive)
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(sdk.AddReceivingCustomMethod(s, methodTasksGet, func(ctx context.Context, _ *sdk.ServerSession, p *taskParams) (*detailedTask, error) {
		t, err := h.conn.GetTask(ctx, p.TaskID)
		if err != nil {
			return nil, h.rpcError(ctx, err)
		}
		return detailed(t), nil
	}))
	must(sdk.AddReceivingCustomMethod(s, methodTasksCancel, func(ctx context.Context, _ *sdk.ServerSession, p *taskParams) (*completeResult, error) {
		if _, err := h.conn.CancelTask(ctx, p.TaskID); err != nil {
			return nil, h.rpcError(ctx, err)
		}
		return &completeResult{ResultType: "complete"}, nil
	}))
	must(sdk.AddReceivingCustomMethod(s, methodTasksUpdate, func(ctx context.Context, _ *sdk.ServerSession, p *taskParams) (*completeResult, error) {
		// The task must still be the caller's to learn that much.
		if _, err := h.conn.GetTask(ctx, p.TaskID); err != nil {
			return nil, h.rpcError(ctx, err)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "tasks/update is not supported: these tasks never ask for input (answer an agent's question with send_message)."}
	}))
}

// receive is the receiving middleware: it puts the principal in ctx and,
// for a client that declared the tasks extension, answers send_message
// with its task.
func (h *handler) receive(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ctx = withPrincipal(ctx, req)
		call, ok := req.(*sdk.CallToolRequest)
		if !ok || call.Params == nil || call.Params.Name != taskTool || !declaresTasks(call) {
			return next(ctx, method, req)
		}
		res, err := next(ctx, method, req)
		out, ok := res.(*sdk.CallToolResult)
		if err != nil || !ok || out.IsError {
			return res, err
		}
		raw, _ := out.StructuredContent.(json.RawMessage)
		var sent connector.SentMessage
		if err := json.Unmarshal(raw, &sent); err != nil || sent.TurnID == "" {
			return res, nil
		}
		t, err := h.conn.GetTask(ctx, sent.TurnID)
		if err != nil {
			// The turn started; its plain result still names it.
			h.logger.WarnContext(ctx, "connector: reading a new task", "turn", sent.TurnID, "error", err)
			return res, nil
		}
		return &createdTask{ResultType: "task", taskFields: fieldsOf(t)}, nil
	}
}

// declaresTasks reports whether the request's client capabilities (its
// per-request _meta) declare the tasks extension.
func declaresTasks(req *sdk.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[TasksExtension]
	return ok
}

func detailed(t connector.Task) *detailedTask {
	d := &detailedTask{ResultType: "complete", taskFields: fieldsOf(t)}
	if t.Done() {
		var structured any
		_ = json.Unmarshal(t.Result, &structured)
		d.Result = map[string]any{
			"resultType": "complete",
			"content":    []map[string]any{{"type": "text", "text": string(t.Result)}},
			"isError":    t.IsError,
		}
		if !t.IsError {
			d.Result["structuredContent"] = structured
		}
	}
	return d
}

// rpcError renders a refusal of a tasks/* method as a JSON-RPC error whose
// data is the connector's error body: an unknown task (or another
// account's) is invalid params, a failure on the service side internal.
func (h *handler) rpcError(ctx context.Context, err error) error {
	body := connector.ErrorBody(err)
	code := int64(jsonrpc.CodeInvalidParams)
	var de *models.Error
	if !errors.As(err, &de) || de.Code == models.CodeInternal || de.Code == models.CodeUpstreamUnavailable {
		code = jsonrpc.CodeInternalError
		h.logFailure(ctx, "connector: task method failed", err)
	}
	msg := "The task could not be read."
	if de != nil {
		msg = de.Detail
	}
	return &jsonrpc.Error{Code: code, Message: msg, Data: body}
}
