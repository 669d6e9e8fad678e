package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/service/turns"
)

// SendMessageRequest is a message to a company's agent.
type SendMessageRequest struct {
	Message     string   `json:"message" minLength:"1" maxLength:"32000" multiline:"true" doc:"What to ask the agent; at most 32,000 characters."`
	Attachments []string `json:"attachments,omitempty" maxItems:"10" doc:"Ids of the company's files (POST /companies/{company_id}/files) the agent should read; at most 10."`
	SessionID   string   `json:"session_id,omitempty" format:"uuid" doc:"Continue this conversation of the company. Absent: the session whose last turn waits for an answer, else a new session."`
}

// SendMessageResponse is the turn a message started.
type SendMessageResponse struct {
	TurnID     string `json:"turn_id" format:"uuid"`
	SessionID  string `json:"session_id" format:"uuid"`
	BusinessID string `json:"business_id" format:"uuid" doc:"The company's id (the connector calls companies businesses)."`
	Status     string `json:"status" enum:"queued,running,waiting,completed,failed,interrupted"`
}

// TurnResponse is an agent turn.
type TurnResponse struct {
	TurnID         string     `json:"turn_id" format:"uuid" doc:"Also the run id of the credit ledger and of the trace."`
	SessionID      string     `json:"session_id" format:"uuid"`
	BusinessID     string     `json:"business_id" format:"uuid"`
	Status         string     `json:"status" enum:"queued,running,waiting,completed,failed,interrupted"`
	Trigger        string     `json:"trigger" enum:"message,task,schedule,first_pass"`
	TaskID         *string    `json:"task_id" doc:"The task a task run works on; null otherwise."`
	Message        string     `json:"message" doc:"What the turn was asked."`
	ElapsedSeconds float64    `json:"elapsed_seconds"`
	CreditsCost    *int64     `json:"credits_cost" doc:"Credits the turn's model and tool calls were charged; null until the turn ended."`
	Text           string     `json:"text" doc:"The agent's text so far (updated about twice a second while it writes)."`
	Answer         *string    `json:"answer" doc:"The final answer of a completed turn; null otherwise."`
	Question       *string    `json:"question" doc:"The agent's question of a waiting turn; answer it with a message."`
	Error          *TurnError `json:"error" doc:"Why a failed turn failed; null otherwise."`
	CreatedAt      time.Time  `json:"created_at"`
	StartedAt      *time.Time `json:"started_at"`
	EndedAt        *time.Time `json:"ended_at"`
}

// TurnError is a failed turn's reason: a connector error case and a
// sentence to show.
type TurnError struct {
	Error  string `json:"error" doc:"insufficient_credits, rate_limited, upstream_unavailable, too_large or internal_error."`
	Detail string `json:"detail"`
}

// TurnListResponse is a page of a company's turns, newest first.
type TurnListResponse struct {
	Turns []TurnResponse `json:"turns"`
	Next  *string        `json:"next" doc:"Pass as before for the next page; null on the last page."`
}

const turnStatusDoc = "Statuses: queued → running → completed | failed | waiting | interrupted. " +
	"waiting: the agent asked a question (see question); the next message answers it in the same session and starts a new turn."

type turnHandlers struct{ svc *turns.Service }

func registerTurnRoutes(api huma.API, h *turnHandlers) {
	tags := []string{"turns"}
	huma.Register(api, huma.Operation{OperationID: "send-message", Method: http.MethodPost, Path: "/companies/{company_id}/messages",
		Tags: tags, Summary: "Send a message to the company's agent", Security: bearerSecurity, DefaultStatus: http.StatusAccepted,
		Description: "Starts a turn and answers at once with its id; poll GET /turns/{turn_id}. One turn runs per company at a time: " +
			"while one runs the answer is 409 `conflict` with its `turn_id`. Refusals: 403 `forbidden` when the agent does not take messages " +
			"(`agent_chat` false, the owner's switch on the company), 409 `business_not_active` until provisioning is ready, the plan's " +
			"402/403 codes, 402 `insufficient_credits` under 3 credits (with balance, needed and links). " +
			"With an `Idempotency-Key`, a retry of the same message (same company, same key) answers 202 with the turn the first request created, " +
			"as it is now, and starts nothing, even while that turn runs; the same key with another message is 409 `conflict` (reason idempotency_key_reused). " +
			turnStatusDoc}, h.send)
	huma.Register(api, huma.Operation{OperationID: "list-turns", Method: http.MethodGet, Path: "/companies/{company_id}/turns",
		Tags: tags, Summary: "List the company's turns", Security: bearerSecurity, Description: "Newest first."}, h.list)
	huma.Register(api, huma.Operation{OperationID: "get-turn", Method: http.MethodGet, Path: "/turns/{turn_id}",
		Tags: tags, Summary: "Get a turn", Security: bearerSecurity,
		Description: "A turn of another account answers 403, an unknown one 404. " + turnStatusDoc}, h.get)
	huma.Register(api, huma.Operation{OperationID: "interrupt-turn", Method: http.MethodPost, Path: "/turns/{turn_id}/interrupt",
		Tags: tags, Summary: "Interrupt a turn", Security: bearerSecurity,
		Description: "Cancels the model or tool call in flight and ends the turn `interrupted`; answers the turn once it ended. " +
			"Interrupting a turn that already ended changes nothing and answers it as it is (200, not an error)."}, h.interrupt)
	huma.Register(api, huma.Operation{OperationID: "admin-run-task", Method: http.MethodPost, Path: "/admin/tasks/{task_id}/run",
		Tags: []string{"admin"}, Summary: "Run a task now", Security: bearerSecurity, Metadata: map[string]any{adminOnly: true}, DefaultStatus: http.StatusCreated,
		Description: "Starts a turn of the company's agent that works on the task, with the credit checks skipped (its calls are still charged). " +
			"A pending, failed or dispatched task is dispatched to the run, which moves it to running and then done or failed. " +
			"409 when a turn runs for the company, the task is running, done or cancelled, or the company is archived; 409 business_not_active before provisioning is ready."}, h.runTask)
}

// TriggerRunResponse is the run an operator started for a task.
type TriggerRunResponse struct {
	RunID     string `json:"run_id" format:"uuid" doc:"The run's id: the turn id (GET /turns/{turn_id}), the credit ledger's run_id and the trace's (GET /admin/runs/{run_id}/trace)."`
	TaskID    string `json:"task_id" format:"uuid"`
	CompanyID string `json:"company_id" format:"uuid"`
	SessionID string `json:"session_id" format:"uuid"`
	Status    string `json:"status" enum:"queued,running,waiting,completed,failed,interrupted"`
}

type runTaskOutput struct{ Body TriggerRunResponse }

func (h *turnHandlers) runTask(ctx context.Context, in *taskIDInput) (*runTaskOutput, error) {
	r, err := h.svc.RunTask(ctx, in.TaskID)
	if err != nil {
		return nil, err
	}
	return &runTaskOutput{Body: TriggerRunResponse{RunID: r.RunID, TaskID: r.TaskID, CompanyID: r.CompanyID, SessionID: r.SessionID, Status: string(r.Status)}}, nil
}

func toTurnResponse(v turns.View) TurnResponse {
	t := v.Turn
	r := TurnResponse{TurnID: t.ID, SessionID: t.SessionID, BusinessID: t.CompanyID, Status: string(t.Status), Trigger: string(t.Trigger),
		TaskID: t.TaskID, Message: t.Message, ElapsedSeconds: v.ElapsedSeconds, CreditsCost: v.CreditsCost, Text: t.Text,
		CreatedAt: t.CreatedAt, StartedAt: t.StartedAt, EndedAt: t.EndedAt}
	if t.Answer != "" {
		r.Answer = &t.Answer
	}
	if t.Question != "" {
		r.Question = &t.Question
	}
	if t.ErrorCode != "" {
		r.Error = &TurnError{Error: t.ErrorCode, Detail: t.ErrorDetail}
	}
	return r
}

type sendMessageInput struct {
	CompanyID      string `path:"company_id" format:"uuid"`
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Optional: a key of the client's choice naming this message (a UUID is a good one). Sent again with the same key, the request answers the turn the first one created (202) without starting another; the same key with another message is 409 (reason idempotency_key_reused)."`
	Body           SendMessageRequest
}

type sendMessageOutput struct{ Body SendMessageResponse }

func (h *turnHandlers) send(ctx context.Context, in *sendMessageInput) (*sendMessageOutput, error) {
	st, err := h.svc.SendMessage(ctx, in.CompanyID, turns.Message{Text: in.Body.Message, Attachments: in.Body.Attachments, SessionID: in.Body.SessionID,
		IdempotencyKey: in.IdempotencyKey})
	if err != nil {
		return nil, err
	}
	return &sendMessageOutput{Body: SendMessageResponse{TurnID: st.TurnID, SessionID: st.SessionID, BusinessID: st.CompanyID, Status: string(st.Status)}}, nil
}

type listTurnsInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Limit     int    `query:"limit" minimum:"1" maximum:"100" default:"20"`
	Before    string `query:"before" format:"uuid" doc:"The next value of the previous page."`
}

type turnListOutput struct{ Body TurnListResponse }

func (h *turnHandlers) list(ctx context.Context, in *listTurnsInput) (*turnListOutput, error) {
	p, err := h.svc.ListTurns(ctx, in.CompanyID, in.Limit, in.Before)
	if err != nil {
		return nil, err
	}
	out := &turnListOutput{Body: TurnListResponse{Turns: make([]TurnResponse, 0, len(p.Turns))}}
	for _, v := range p.Turns {
		out.Body.Turns = append(out.Body.Turns, toTurnResponse(v))
	}
	if p.Next != "" {
		out.Body.Next = &p.Next
	}
	return out, nil
}

type turnIDInput struct {
	TurnID string `path:"turn_id" format:"uuid"`
}

type turnOutput struct{ Body TurnResponse }

func turnOut(v turns.View, err error) (*turnOutput, error) {
	if err != nil {
		return nil, err
	}
	return &turnOutput{Body: toTurnResponse(v)}, nil
}

func (h *turnHandlers) get(ctx context.Context, in *turnIDInput) (*turnOutput, error) {
	return turnOut(h.svc.GetTurn(ctx, in.TurnID))
}

func (h *turnHandlers) interrupt(ctx context.Context, in *turnIDInput) (*turnOutput, error) {
	return turnOut(h.svc.InterruptTurn(ctx, in.TurnID))
}
