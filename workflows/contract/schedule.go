package contract

// Scheduled agent runs: one Temporal Schedule per active company starts
// ScheduledRun every period; the run starts a turn unless one runs.
const (
	ScheduledRunWorkflowName = "ScheduledRun"
)

// AgentScheduleID is the id of a company's schedule.
func AgentScheduleID(companyID string) string { return "agent-run:" + companyID }

// ScheduledRunInput names the company a scheduled run is for.
type ScheduledRunInput struct {
	CompanyID string
}

// ScheduledRunResult says what the run did: the turn it started, or why it
// started none (paused, not ready, a turn running, credits…).
type ScheduledRunResult struct {
	TurnID  string
	Skipped string
}
