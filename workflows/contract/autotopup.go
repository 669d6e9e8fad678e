package contract

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
}
