// Package founding is the founding of businesses: the web founding
// interview (a workflow per user), the handle check, the v3 upgrade
// interview, and CreateBusiness/StartFirstPass that the assistant
// connector calls.
package founding

import "holdco/models"

// MaxIdeaLen is the longest idea CreateBusiness takes, in characters.
const MaxIdeaLen = 20000

// CreateBusinessInput is what the connector's create_business passes. The
// acting user (and, for the idempotency key, the OAuth client) come from
// the principal in ctx.
type CreateBusinessInput struct {
	Idea string
	// Name is optional; Handle is allowed only with a Name.
	Name   string
	Handle string
	// Paused creates the company without its schedule of agent runs.
	Paused bool
}

// FirstPassStatus is first_pass.status of the connector.
type FirstPassStatus string

const (
	FirstPassStarted      FirstPassStatus = "started"
	FirstPassProvisioning FirstPassStatus = "provisioning"
	FirstPassSkipped      FirstPassStatus = "skipped"
	FirstPassNotStarted   FirstPassStatus = "not_started"
)

// FirstPass reports whether the first turn of a new business started.
type FirstPass struct {
	Status FirstPassStatus `json:"status"`
	// TurnID is set when Status is started, or not_started with error
	// conflict (the running turn).
	TurnID string `json:"turn_id,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Error is the error case (for example insufficient_credits, conflict)
	// when Status is not_started.
	Error models.ErrorCode `json:"error,omitempty"`
	// Needed is the credits a start needs, with error insufficient_credits.
	Needed *float64 `json:"needed,omitempty"`
}

// CreateBusinessResult is create_business's answer.
type CreateBusinessResult struct {
	Business              models.Company
	WelcomeCreditsGranted bool
	FirstPass             FirstPass
}
