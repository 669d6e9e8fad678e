package agenttools

import "holdco/service/billing"

// Credits is the price of one successful call of the tool (0: free):
// billing's price list, charged by the use case's own billing.PayFor
// (send_email) or by the catalog around the call (web_research,
// generate_image), never by the caller.
func Credits(name string) int64 { return billing.ToolCredits(name) }
