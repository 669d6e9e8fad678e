package agenttools

import "holdco/service/billing"

// Credits is the price of one successful call of the tool (0: free):
// billing's price list. The tool's use case charges it (billing.PayForAct),
// whoever calls it — an agent, the connector, REST; the catalog and its
// callers never do.
func Credits(name string) int64 { return billing.ToolCredits(name) }
