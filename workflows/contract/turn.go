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

// TurnWorkflowID is the one workflow id per company: Temporal refuses a
// second start while a turn runs, which is what makes one turn at a time.
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
