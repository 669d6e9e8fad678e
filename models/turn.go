package models

import (
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// TurnStatus is where an agent turn is.
//
//	queued → running → completed | failed | waiting | interrupted
//	queued → interrupted | failed
//
// waiting ends the turn with a question for the user; the answer starts a
// new turn in the same session. completed, failed, waiting and interrupted
// are final for the turn.
type TurnStatus string

const (
	TurnQueued      TurnStatus = "queued"
	TurnRunning     TurnStatus = "running"
	TurnWaiting     TurnStatus = "waiting"
	TurnCompleted   TurnStatus = "completed"
	TurnFailed      TurnStatus = "failed"
	TurnInterrupted TurnStatus = "interrupted"
)

// Active reports whether the turn has not ended (queued or running).
func (s TurnStatus) Active() bool { return s == TurnQueued || s == TurnRunning }

// TurnTrigger is what started a turn.
type TurnTrigger string

const (
	TriggerMessage   TurnTrigger = "message"    // a user's message (REST, CLI, connector)
	TriggerTask      TurnTrigger = "task"       // a task's run (the admin's POST /admin/tasks/{id}/run)
	TriggerSchedule  TurnTrigger = "schedule"   // the company's scheduled run
	TriggerFirstPass TurnTrigger = "first_pass" // the first turn after founding
)

// Turn is one agent turn of a company: a run of the model and its tools
// that a message (or a task or the schedule) started. Its id is the run id
// of the credit ledger and of the trace.
type Turn struct {
	ID             string      `gorm:"primaryKey;size:36"`
	CompanyID      string      `gorm:"size:36;not null;index:idx_turns_company,priority:1"`
	ConglomerateID string      `gorm:"size:36;not null"`
	SessionID      string      `gorm:"size:36;not null;index:idx_turns_session"`
	Trigger        TurnTrigger `gorm:"size:16;not null"`
	TaskID         *string     `gorm:"size:36"`
	Status         TurnStatus  `gorm:"size:16;not null"`
	// Message is what the turn was asked (the user's message, the task).
	Message     string   `gorm:"type:text;not null"`
	Attachments []string `gorm:"serializer:json;type:text;not null"`
	// IdempotencyKey is the client's key of the message that started the
	// turn (REST's Idempotency-Key header), nil without one: unique per
	// company, so a retry of the message finds this turn instead of
	// starting another.
	IdempotencyKey *string `gorm:"size:255"`
	// Text is the agent's text so far (written at most every ~500 ms while
	// the model streams); Answer the final answer; Question the question
	// of a waiting turn.
	Text     string `gorm:"type:text;not null"`
	Answer   string `gorm:"type:text;not null"`
	Question string `gorm:"type:text;not null"`
	// ErrorCode and ErrorDetail say why a turn failed (an error case of
	// the connector: insufficient_credits, upstream_unavailable…).
	ErrorCode   string `gorm:"size:40;not null"`
	ErrorDetail string `gorm:"size:1000;not null"`
	// CreditsCost is the credits the turn's calls were charged, set when
	// it ends.
	CreditsCost *int64
	// SkipCreditCheck: an operator's run (no minimum balance to start;
	// calls are still charged).
	SkipCreditCheck bool `gorm:"not null"`
	StartedAt       *time.Time
	EndedAt         *time.Time
	CreatedAt       time.Time `gorm:"not null;index:idx_turns_company,priority:2"`
	UpdatedAt       time.Time `gorm:"not null"`
}

// BeforeCreate gives the turn a time-ordered (version 7) UUID.
func (t *Turn) BeforeCreate(*gorm.DB) error {
	if t.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		t.ID = id.String()
	}
	if t.Attachments == nil {
		t.Attachments = []string{}
	}
	return nil
}

// Elapsed is how long the turn has run (until it ended).
func (t Turn) Elapsed(now time.Time) time.Duration {
	if t.StartedAt == nil {
		return 0
	}
	end := now
	if t.EndedAt != nil {
		end = *t.EndedAt
	}
	if end.Before(*t.StartedAt) {
		return 0
	}
	return end.Sub(*t.StartedAt)
}

// TurnMessage is one message of a session's conversation: the user's
// message (step 0), the model's answer of each step (part 0) and the
// results of the step's tool calls (parts 1…). The conversation of a
// session is its messages in (turn, step, part) order; consecutive
// messages of one role are one message to the model.
type TurnMessage struct {
	TurnID    string         `gorm:"primaryKey;size:36"`
	Step      int            `gorm:"primaryKey"`
	Part      int            `gorm:"primaryKey"`
	SessionID string         `gorm:"size:36;not null;index:idx_turn_messages_session"`
	Role      ModelRole      `gorm:"size:16;not null"`
	Content   []ContentBlock `gorm:"serializer:json;type:text;not null"`
	// Model is the model that answered; tokens and credits are the call's.
	Model        string    `gorm:"size:100;not null"`
	InputTokens  int64     `gorm:"not null"`
	OutputTokens int64     `gorm:"not null"`
	CreatedAt    time.Time `gorm:"not null"`
}

// TurnResult is how a turn ended, written once.
type TurnResult struct {
	Status      TurnStatus
	Answer      string
	Question    string
	ErrorCode   string
	ErrorDetail string
	CreditsCost *int64
	EndedAt     time.Time
}
