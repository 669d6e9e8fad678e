package contract

import "holdco/models"

// Names of the agent turn workflow and its messages.
const (
	TurnWorkflowName = "Turn"
	// QueryTurnState answers TurnState (for operators in the Temporal UI;
	// the turn row is what the service reads).
	QueryTurnState = "state"
	// UpdateInterrupt cancels the running model or tool call and ends the
	// turn interrupted. Its argument is the turn id (a turn that is not
	// the running one is refused by the validator); it returns the
	// TurnState once the turn has ended.
	UpdateInterrupt = "interrupt"
)

// TurnWorkflowID is the one workflow id per company. One turn at a time is
// a rule of the turn rows (a unique index over a company's active turns);
// the id keeps a company's runs together and lets a start wait for the
// turn before it to close.
func TurnWorkflowID(companyID string) string { return "turn:" + companyID }

// TurnInput starts (or, after continue-as-new, resumes) a turn. The turn's
// message and conversation are in the database, never in the history.
type TurnInput struct {
	TurnID         string
	CompanyID      string
	ConglomerateID string
	// Step is the last step done before this run of the workflow (0 for a
	// new turn).
	Step int
	// MaxHistoryEvents continues as new once the history is this long at a
	// step boundary (0: DefaultTurnHistoryEvents).
	MaxHistoryEvents int
}

// DefaultTurnHistoryEvents keeps a turn's history well below Temporal's
// limits: a step is 4–12 events.
const DefaultTurnHistoryEvents = 2000

// MaxTurnSteps bounds a turn: a model call and its tool calls are a step.
const MaxTurnSteps = 100

// TurnState is where the workflow is.
type TurnState struct {
	TurnID string
	Status models.TurnStatus
	Step   int
	// Doing is "model" or "tool:<name>" while a call runs.
	Doing       string
	Interrupted bool
}

// The turn's activities (activities.Turns; the rules are service/turns'
// Engine). Every input names the turn and its company; the turn's
// conversation and results are in the database, never in the history.

// TurnRef names a turn and its company.
type TurnRef struct {
	TurnID         string
	CompanyID      string
	ConglomerateID string
}

// StartTurnResult says whether the turn is still to be worked on.
type StartTurnResult struct {
	Active bool
}

// StepInput names one step of a turn.
type StepInput struct {
	TurnRef
	Step int
}

// ToolCallRef is one tool call of a step's model answer.
type ToolCallRef struct {
	Index int
	ID    string
	Name  string
	// Control: the workflow handles the call (ask_question).
	Control bool
	// Quick: the tool reads or writes only holdco's own rows and returns
	// in milliseconds (agenttools.Catalog.IsQuick); the workflow runs it
	// as a local activity, inside the workflow task that got the model's
	// answer, when the run started after the change
	// (workflows.changeLocalTools).
	Quick bool `json:",omitempty"`
}

// ModelStepResult is a model call's outcome: the tool calls to make, or
// none when the answer is final.
type ModelStepResult struct {
	Calls []ToolCallRef
}

// ToolStepInput names one tool call of a step (its index among the
// answer's tool calls).
type ToolStepInput struct {
	StepInput
	Index int
}

// ToolStepResult is a tool call's outcome.
type ToolStepResult struct {
	IsError bool
	// Question is ask_question's question (the turn then ends waiting).
	Question string
}

// FinishTurnInput is how the workflow ends a turn.
type FinishTurnInput struct {
	TurnRef
	Status      models.TurnStatus
	Question    string
	ErrorCode   string
	ErrorDetail string
}

// Error types of the turn activities' non-retryable failures: the turn
// ends failed with this code (a connector error case) and the message as
// its detail.
const (
	ErrTurnInsufficientCredits = string(models.CodeInsufficientCredits)
	ErrTurnRateLimited         = string(models.CodeRateLimited)
	ErrTurnUpstream            = string(models.CodeUpstreamUnavailable)
	ErrTurnTooLarge            = string(models.CodeTooLarge)
	ErrTurnInternal            = string(models.CodeInternal)
)

// ErrInterrupted is the type of the error of an activity whose context
// ended (the worker shuts down, or the activity was cancelled or timed
// out): expected, retried, and logged by the SDK as benign, not as an
// error.
const ErrInterrupted = "Interrupted"
