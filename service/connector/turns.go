package connector

import (
	"context"
	"encoding/json"

	"holdco/models"
	"holdco/service/turns"
)

// SentMessage is send_message's answer.
type SentMessage struct {
	TurnID     string `json:"turn_id"`
	SessionID  string `json:"session_id"`
	BusinessID string `json:"business_id"`
	Status     string `json:"status"`
}

// SendMessage starts a turn of the business's agent with the message and
// its attachments (file ids from upload_file). service/turns keeps the
// rules: agent_chat false is forbidden, a running turn a conflict, too few
// credits insufficient_credits, a business not set up business_not_active.
func (s *Service) SendMessage(ctx context.Context, business string, m turns.Message) (SentMessage, error) {
	ctx, ac, err := s.resolve(ctx, business)
	if err != nil {
		return SentMessage{}, err
	}
	m.KeyField = IdempotencyKeyArgument
	st, err := s.Turns.SendMessage(ctx, ac.ID, m)
	if err != nil {
		return SentMessage{}, err
	}
	return SentMessage{TurnID: st.TurnID, SessionID: st.SessionID, BusinessID: st.CompanyID, Status: string(st.Status)}, nil
}

// Turn is get_turn's answer.
type Turn struct {
	TurnID         string  `json:"turn_id"`
	BusinessID     string  `json:"business_id"`
	SessionID      string  `json:"session_id"`
	Status         string  `json:"status"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	// CreditsCost is null until the turn ended (and when not reported).
	CreditsCost *int64 `json:"credits_cost"`
	// Text is the agent's text so far; Answer its final answer.
	Text   string `json:"text"`
	Answer string `json:"answer"`
	// Question is set when the turn waits for the user's answer.
	Question string `json:"question,omitempty"`
	// Error and ErrorDetail say why a failed turn failed.
	Error       string `json:"error,omitempty"`
	ErrorDetail string `json:"error_detail,omitempty"`
}

func turnOf(v turns.View) Turn {
	return Turn{TurnID: v.ID, BusinessID: v.CompanyID, SessionID: v.SessionID, Status: string(v.Status), ElapsedSeconds: v.ElapsedSeconds,
		CreditsCost: v.CreditsCost, Text: v.Text, Answer: v.Answer, Question: v.Question, Error: v.ErrorCode, ErrorDetail: v.ErrorDetail}
}

// GetTurn reads a turn (an unknown one is not_found, another account's
// forbidden).
func (s *Service) GetTurn(ctx context.Context, turnID string) (Turn, error) {
	v, err := s.Turns.GetTurn(ctx, turnID)
	if err != nil {
		return Turn{}, err
	}
	return turnOf(v), nil
}

// InterruptTurn stops a running turn; an ended one is answered unchanged.
func (s *Service) InterruptTurn(ctx context.Context, turnID string) (Turn, error) {
	v, err := s.Turns.InterruptTurn(ctx, turnID)
	if err != nil {
		return Turn{}, err
	}
	return turnOf(v), nil
}

// TaskStatus is a turn as the tasks extension reports it.
type TaskStatus string

const (
	TaskWorking   TaskStatus = "working"
	TaskCompleted TaskStatus = "completed"
	TaskCancelled TaskStatus = "cancelled"
)

// TaskPollIntervalMs is the poll interval a task suggests.
const TaskPollIntervalMs = 5000

// Task is a turn seen through the tasks extension: the task id is the turn
// id; a queued or running turn is working; an interrupted one cancelled;
// every other end (answered, waiting with a question, failed) completed,
// with the turn as the result (a failed turn's result is an error).
type Task struct {
	TaskID        string
	Status        TaskStatus
	CreatedAt     string
	LastUpdatedAt string
	// Result is the turn (Done only); IsError marks a failed turn, whose
	// Result is then the error body {error, detail, turn_id}.
	Result  json.RawMessage
	IsError bool
}

// Done reports whether the task has a result.
func (t Task) Done() bool { return t.Status == TaskCompleted }

// GetTask reads the task of a turn.
func (s *Service) GetTask(ctx context.Context, taskID string) (Task, error) {
	v, err := s.Turns.GetTurn(ctx, taskID)
	if err != nil {
		return Task{}, err
	}
	return taskOf(v)
}

// CancelTask interrupts the turn of a task and reports the task after.
func (s *Service) CancelTask(ctx context.Context, taskID string) (Task, error) {
	v, err := s.Turns.InterruptTurn(ctx, taskID)
	if err != nil {
		return Task{}, err
	}
	return taskOf(v)
}

func taskOf(v turns.View) (Task, error) {
	t := Task{TaskID: v.ID, CreatedAt: v.CreatedAt.UTC().Format(timeLayout), LastUpdatedAt: v.UpdatedAt.UTC().Format(timeLayout)}
	switch {
	case v.Status.Active():
		t.Status = TaskWorking
		return t, nil
	case v.Status == models.TurnInterrupted:
		t.Status = TaskCancelled
		return t, nil
	}
	t.Status = TaskCompleted
	var body any = turnOf(v)
	if v.Status == models.TurnFailed {
		code := models.ErrorCode(v.ErrorCode)
		if code == "" {
			code = models.CodeInternal
		}
		detail := v.ErrorDetail
		if detail == "" {
			detail = "The turn failed."
		}
		body = models.BodyOf(models.Errorf(code, "%s", detail).With("turn_id", v.ID))
		t.IsError = true
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return Task{}, internalf(err, "task result")
	}
	t.Result = raw
	return t, nil
}
