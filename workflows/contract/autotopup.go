package contract

import "time"

// The auto top-up workflow: one per conglomerate, started or signalled
// (signal-with-start) after a spend leaves the balance under the account's
// threshold; it charges the saved card once, then cools down.
const (
	AutoTopUpWorkflowName = "AutoTopUp"
	// SignalAutoTopUpCheck asks the workflow to look at the balance again.
	SignalAutoTopUpCheck = "check"
)

// AutoTopUpWorkflowID is the one workflow id per conglomerate: a second
// trigger joins the running workflow, so one charge runs at a time.
func AutoTopUpWorkflowID(conglomerateID string) string { return "auto-top-up:" + conglomerateID }

// AutoTopUpInput names the conglomerate; Charges counts the charges of
// earlier runs (continue-as-new).
type AutoTopUpInput struct {
	ConglomerateID string
	Charges        int
	// Cooldown overrides the workflow's cooldown between charges (0: the
	// workflow's; recorded test runs wait less).
	Cooldown time.Duration
}

// AutoTopUpAttempt is one attempt of a workflow run (its number names the
// provider's idempotency key, so a retried activity charges once).
type AutoTopUpAttempt struct {
	ConglomerateID string
	Attempt        int
}

// AutoTopUpOutcome is what one auto top-up attempt did.
type AutoTopUpOutcome struct {
	// Charged: the card was charged and the credits granted.
	Charged bool
	Credits int64
	// Failed says why no charge was possible ("" when none was needed):
	// no_payment_method, payments_not_configured, or the payment's status.
	Failed string
}
