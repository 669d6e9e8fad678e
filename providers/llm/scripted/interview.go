package scripted

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"holdco/models"
)

// The founding interviewer's tools and their inputs are models' (the
// names and shapes service/founding offers). A request that offers
// propose_company is an interview.

// minIdeaWords is the fewest words an idea needs for the scripted
// interviewer to go on.
const minIdeaWords = 3

// interviewState is what the interview script reads from the conversation.
type interviewState struct {
	idea      string
	asked     map[string]string // topic → the founder's answer ("" until answered)
	proposals int
	changes   []string // answers given after a proposal
	toolUses  int
}

func readInterview(req models.ModelRequest) interviewState {
	st := interviewState{asked: map[string]string{}}
	byID := map[string]models.ContentBlock{}
	for _, msg := range req.Messages {
		for _, b := range msg.Content {
			switch {
			case b.Type == models.ContentText && msg.Role == models.RoleUser && st.idea == "":
				st.idea = strings.TrimSpace(b.Text)
			case b.Type == models.ContentToolUse:
				st.toolUses++
				byID[b.ToolUseID] = b
				switch b.ToolName {
				case models.ToolAskFounder:
					var in models.AskFounderInput
					_ = json.Unmarshal(b.Input, &in)
					if _, seen := st.asked[in.Topic]; !seen {
						st.asked[in.Topic] = ""
					}
				case models.ToolProposeCompany:
					st.proposals++
				}
			case b.Type == models.ContentToolResult:
				call := byID[b.ToolUseID]
				switch call.ToolName {
				case models.ToolAskFounder:
					var in models.AskFounderInput
					_ = json.Unmarshal(call.Input, &in)
					st.asked[in.Topic] = strings.TrimSpace(b.Text)
				case models.ToolProposeCompany:
					st.changes = append(st.changes, strings.TrimSpace(b.Text))
				}
			}
		}
	}
	return st
}

// interview is the scripted interviewer (docs/llm.md, "The founding
// interview"): reject an idea of fewer than three words; ask for the name
// (suggesting one), then for the first customers; then propose the
// company, and propose again after each change the founder asks for.
func interview(req models.ModelRequest) models.ModelResponse {
	st := readInterview(req)
	call := func(preface, name string, input any) models.ModelResponse {
		raw, _ := json.Marshal(input)
		return models.ModelResponse{Content: []models.ContentBlock{
			{Type: models.ContentText, Text: preface},
			{Type: models.ContentToolUse, ToolUseID: fmt.Sprintf("call_%d", st.toolUses+1), ToolName: name, Input: raw},
		}, StopReason: models.StopToolUse}
	}
	suggested := suggestName(st.idea)
	_, askedName := st.asked["name"]
	_, askedCustomers := st.asked["customers"]
	switch {
	case len(words(st.idea)) < minIdeaWords:
		return call("I cannot found this yet.", models.ToolRejectIdea, models.RejectIdeaInput{
			Reason: "The idea is too short to found a business on: say in a sentence what it sells and to whom."})
	case !askedName:
		return call("Let's name it.", models.ToolAskFounder, models.AskFounderInput{Topic: "name",
			Question: fmt.Sprintf("What should the business be called? I suggest %q; answer with a name, or yes to take it.", suggested)})
	case !askedCustomers:
		return call("Next, its customers.", models.ToolAskFounder, models.AskFounderInput{Topic: "customers",
			Question: "Who are its first customers, and what will they pay for?"})
	}
	name := chosenName(st.asked["name"], suggested)
	for _, c := range st.changes {
		if rest, ok := strings.CutPrefix(strings.ToLower(c), "name:"); ok && strings.TrimSpace(rest) != "" {
			name = chosenName(strings.TrimSpace(c[len(c)-len(rest):]), name)
		}
	}
	customers := subjectOf(st.asked["customers"])
	mission := fmt.Sprintf("%s serves %s: %s.", name, strings.TrimSuffix(customers, "."), strings.TrimSuffix(subjectOf(st.idea), "."))
	var plan strings.Builder
	fmt.Fprintf(&plan, "# Founding plan: %s\n\n## The idea\n\n%s\n\n## First customers\n\n%s\n\n## Mission\n\n%s\n\n", name, st.idea, st.asked["customers"], mission)
	plan.WriteString("## First week\n\n1. Put up a one-page site that explains the offer.\n2. Talk to five potential customers and note what they would pay for.\n3. Sell the first paid version and earn the first dollar.\n")
	if len(st.changes) > 0 {
		plan.WriteString("\n## Changes asked\n\n")
		for _, c := range st.changes {
			fmt.Fprintf(&plan, "- %s\n", subjectOf(c))
		}
	}
	return call("Here is my proposal.", models.ToolProposeCompany, models.ProposeCompanyInput{Name: name, Handle: slug(name), Mission: mission, FoundingPlan: plan.String()})
}

// chosenName is the founder's name answer, or the suggestion when they
// took it (yes, ok, sure…).
func chosenName(answer, suggested string) string {
	a := strings.Trim(subjectOf(answer), " \"'.!")
	switch strings.ToLower(a) {
	case "", "yes", "y", "ok", "okay", "sure", "fine", "take it", "yes please":
		return suggested
	}
	return a
}

func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// suggestName is the idea's first three words, capitalized.
func suggestName(idea string) string {
	w := words(idea)
	if len(w) > 3 {
		w = w[:3]
	}
	for i, x := range w {
		r := []rune(x)
		r[0] = unicode.ToUpper(r[0])
		w[i] = string(r)
	}
	if len(w) == 0 {
		return "Company"
	}
	return strings.Join(w, " ")
}

// slug is a handle for name: lower-case ASCII letters and digits joined by
// single hyphens, at most 64 characters.
func slug(name string) string {
	var b strings.Builder
	for _, w := range words(strings.ToLower(name)) {
		var part strings.Builder
		for _, r := range w {
			if r < unicode.MaxASCII {
				part.WriteRune(r)
			}
		}
		if part.Len() == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		b.WriteString(part.String())
	}
	s := b.String()
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	if s == "" {
		s = "company"
	}
	return s
}
