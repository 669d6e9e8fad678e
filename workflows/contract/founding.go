package contract

import (
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"holdco/models"
)

// Names of the founding interview workflow and its messages.
const (
	FoundingWorkflowName = "Founding"
	// QueryFoundingState answers FoundingStatus (registered first).
	QueryFoundingState = "state"
	// UpdateFoundingAnswer is the founder's answer (FoundingAnswer). Its
	// validator refuses, without touching the history, an answer while the
	// interviewer works, an accept outside reviewing, and an empty or too
	// long text; it returns the FoundingStatus once the answer is recorded
	// in the interview's row.
	UpdateFoundingAnswer = "answer"
)

// FoundingWorkflowID is the one interview workflow per user: Temporal
// refuses a second start while one runs.
func FoundingWorkflowID(userID string) string { return "founding:" + userID }

// FoundingInput starts an interview. Its transcript lives in the row,
// never in the history.
type FoundingInput struct {
	InterviewID    string
	UserID         string
	ConglomerateID string
	Kind           models.FoundingKind
	// IdleTimeout rejects an interview nobody answers for this long (0:
	// DefaultFoundingIdleTimeout).
	IdleTimeout time.Duration
}

// DefaultFoundingIdleTimeout ends an interview left unanswered.
const DefaultFoundingIdleTimeout = 7 * 24 * time.Hour

// Founder actions of an answer.
const (
	FoundingActionAnswer   = "answer"
	FoundingActionAccept   = "accept"
	FoundingActionWithdraw = "withdraw"
)

// Limits of the interview.
const (
	// MaxFoundingAnswerChars bounds one answer.
	MaxFoundingAnswerChars = 4000
	// MaxFoundingAnswers bounds an interview: past it without a proposal
	// the interview is rejected.
	MaxFoundingAnswers = 20
)

// FoundingAnswer is one answer of the founder.
type FoundingAnswer struct {
	// Action is answer (Text answers the question, or asks for changes to
	// a proposal), accept (found the proposal) or withdraw.
	Action string
	Text   string
	// Handle (accept only, optional) is the handle the founder chose for
	// the company, normalized by the service, instead of the proposal's.
	// Absent from answers sent before it existed (it decodes as ""), and
	// left out of the payload when empty, so those answers read as before.
	Handle string `json:",omitempty"`
}

// FoundingStatus is where the workflow is.
type FoundingStatus struct {
	InterviewID string
	State       models.FoundingState
	// Busy: the interviewer works on an answer (or the company is being
	// founded); answers are refused meanwhile.
	Busy    bool
	Answers int
}

// Error types of the answer validator, mapped to error codes by the
// service.
const (
	FoundingErrConflict = "conflict"
	FoundingErrInvalid  = "invalid_argument"
	// FoundingErrBusy: the interviewer works (a conflict). The row can say
	// it finished a moment before the workflow has taken the segment's
	// result, so the service retries this one briefly.
	FoundingErrBusy = "busy"
)

// ValidateFoundingAnswer is the rule of an answer by itself, shared by the
// service and the workflow's validator: "" when fine, else why not. An
// answer's text is 1 to MaxFoundingAnswerChars characters of valid UTF-8
// without control characters other than tab and line breaks.
//
// A handle comes only with accept and is a handle (models.ValidHandle:
// the service sends it normalized).
func ValidateFoundingAnswer(a FoundingAnswer) string {
	if a.Handle != "" {
		if a.Action != FoundingActionAccept {
			return "A handle comes only with action accept."
		}
		if !models.ValidHandle(a.Handle) {
			return fmt.Sprintf("A handle is 1 to %d lower-case letters, digits or inner hyphens.", models.MaxHandleLen)
		}
	}
	switch a.Action {
	case FoundingActionAccept, FoundingActionWithdraw:
		return ""
	case FoundingActionAnswer:
	default:
		return "action must be answer, accept or withdraw."
	}
	if !utf8.ValidString(a.Text) {
		return "The answer is not valid UTF-8."
	}
	n, blank := 0, true
	for _, r := range a.Text {
		n++
		if r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			return fmt.Sprintf("The answer holds a control character (U+%04X).", r)
		}
		if !unicode.IsSpace(r) {
			blank = false
		}
	}
	if blank {
		return "The answer is empty."
	}
	if n > MaxFoundingAnswerChars {
		return fmt.Sprintf("The answer has %d characters; at most %d are allowed.", n, MaxFoundingAnswerChars)
	}
	return ""
}

// InterviewRef names an interview and its account (the founding
// activities' input).
type InterviewRef struct {
	InterviewID    string
	ConglomerateID string
}

// RecordAnswerInput is the founder's seq-th answer.
type RecordAnswerInput struct {
	InterviewRef
	Seq    int
	Answer FoundingAnswer
}

// RejectInput ends an interview rejected.
type RejectInput struct {
	InterviewRef
	Reason string
}

// ErrInterviewerFailed is the type of an interviewer's model failure that
// retrying cannot fix (auth, invalid request): not retried.
const ErrInterviewerFailed = "InterviewerFailed"
