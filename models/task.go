package models

import (
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// TaskStatus is where a task is in its lifecycle.
type TaskStatus string

const (
	// TaskPending waits to be picked up (new, or given back for a retry).
	TaskPending TaskStatus = "pending"
	// TaskDispatched has been handed to a run that has not started yet.
	TaskDispatched TaskStatus = "dispatched"
	// TaskRunning is being worked on by a run.
	TaskRunning TaskStatus = "running"
	// TaskDone is finished (final).
	TaskDone TaskStatus = "done"
	// TaskFailed ended without success; it may be retried (→ pending).
	TaskFailed TaskStatus = "failed"
	// TaskCancelled was called off (final).
	TaskCancelled TaskStatus = "cancelled"
)

// TaskStatuses are all statuses, in lifecycle order.
var TaskStatuses = []TaskStatus{TaskPending, TaskDispatched, TaskRunning, TaskDone, TaskFailed, TaskCancelled}

// OpenTaskStatuses are the statuses of work not yet finished (the
// dashboard's open tasks).
var OpenTaskStatuses = []TaskStatus{TaskPending, TaskDispatched, TaskRunning}

// DeletableTaskStatuses are the only statuses in which a task may be
// deleted: nothing is working on it and it is not part of the record.
var DeletableTaskStatuses = []TaskStatus{TaskPending, TaskDispatched, TaskFailed}

// taskTransitions is the lifecycle, the one place it is written:
//
//	pending    → dispatched, cancelled
//	dispatched → running, failed, cancelled
//	running    → done, failed
//	failed     → pending (retry), cancelled
//	done, cancelled: final
//
// dispatched → failed covers a run that could not start. A running task is
// not cancelled directly: its run is interrupted and ends the task failed.
var taskTransitions = map[TaskStatus][]TaskStatus{
	TaskPending:    {TaskDispatched, TaskCancelled},
	TaskDispatched: {TaskRunning, TaskFailed, TaskCancelled},
	TaskRunning:    {TaskDone, TaskFailed},
	TaskFailed:     {TaskPending, TaskCancelled},
	TaskDone:       nil,
	TaskCancelled:  nil,
}

// Valid reports whether s is a known status.
func (s TaskStatus) Valid() bool {
	_, ok := taskTransitions[s]
	return ok
}

// Final reports whether no transition leaves s (done, cancelled).
func (s TaskStatus) Final() bool { return s.Valid() && len(taskTransitions[s]) == 0 }

// Deletable reports whether a task in status s may be deleted.
func (s TaskStatus) Deletable() bool {
	for _, d := range DeletableTaskStatuses {
		if s == d {
			return true
		}
	}
	return false
}

// NextTaskStatuses are the statuses a task in status s may move to.
func NextTaskStatuses(s TaskStatus) []TaskStatus {
	return append([]TaskStatus(nil), taskTransitions[s]...)
}

// CanTransition reports whether the lifecycle allows from → to. Staying in
// the same status is not a transition.
func CanTransition(from, to TaskStatus) bool {
	for _, n := range taskTransitions[from] {
		if n == to {
			return true
		}
	}
	return false
}

// TaskPriority orders the work of a company's agents.
type TaskPriority string

const (
	TaskPriorityLow    TaskPriority = "low"
	TaskPriorityNormal TaskPriority = "normal"
	TaskPriorityHigh   TaskPriority = "high"
	TaskPriorityUrgent TaskPriority = "urgent"
)

// TaskPriorities are all priorities, lowest first.
var TaskPriorities = []TaskPriority{TaskPriorityLow, TaskPriorityNormal, TaskPriorityHigh, TaskPriorityUrgent}

// Valid reports whether p is a known priority.
func (p TaskPriority) Valid() bool {
	for _, q := range TaskPriorities {
		if p == q {
			return true
		}
	}
	return false
}

// Task limits.
const (
	// MaxTaskTitleLen is the longest title, in characters (one line).
	MaxTaskTitleLen = 200
	// MaxTaskDescriptionLen is the longest description, in characters
	// (Markdown, several lines).
	MaxTaskDescriptionLen = 20000
	// MaxTaskFailureReasonLen is the longest failure reason, in
	// characters; a longer one is cut.
	MaxTaskFailureReasonLen = 1000
	// MaxTaskList is the most tasks one list answers (newest first).
	MaxTaskList = 500
)

// Task is a piece of work for a company's agents. Tasks have no assignee:
// a company's agents work as one team, and the creator is kept in
// CreatedBy.
type Task struct {
	ID          string       `gorm:"primaryKey;size:36"`
	CompanyID   string       `gorm:"size:36;not null"`
	Title       string       `gorm:"size:200;not null"`
	Description string       `gorm:"type:text;not null"` // Markdown
	Status      TaskStatus   `gorm:"size:16;not null"`
	Priority    TaskPriority `gorm:"size:16;not null"`
	// CreatedBy is who created the task (a user, the agents, the system
	// or the operator's tools).
	CreatedBy ActivityActor `gorm:"size:16;not null"`
	DueAt     *time.Time
	// LastRunID is the most recent run that worked on the task (runs come
	// with the turn workflow).
	LastRunID *string `gorm:"size:36"`
	// FailureReason says why the task failed; empty unless failed.
	FailureReason string    `gorm:"size:1000;not null"`
	CreatedAt     time.Time `gorm:"not null"`
	UpdatedAt     time.Time `gorm:"not null"`
}

// BeforeCreate gives the task a time-ordered (version 7) UUID, so the id
// that breaks ties between equal creation times follows insertion order.
func (t *Task) BeforeCreate(*gorm.DB) error {
	if t.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		t.ID = id.String()
	}
	return nil
}

func (Task) TableName() string { return "company_tasks" }

// TaskChanges are the fields an update sets; nil leaves a field as it is.
type TaskChanges struct {
	Title         *string
	Description   *string
	Priority      *TaskPriority
	Status        *TaskStatus
	DueAt         *time.Time
	ClearDueAt    bool // removes the due date (DueAt is then ignored)
	FailureReason *string
	LastRunID     *string
}
