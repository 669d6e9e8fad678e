package agenttools

// toolCredits are the prices of billable tools, charged per successful
// call as TOOL_USAGE with the run's id; every other tool is free (its
// cost is in the model calls around it).
var toolCredits = map[string]int64{
	"send_email":     1,
	"web_research":   1,
	"generate_image": 3,
}

// Credits is the price of one successful call of the tool (0: free).
func Credits(name string) int64 { return toolCredits[name] }
