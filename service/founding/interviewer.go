package founding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"holdco/models"
	"holdco/service/companies"
	"holdco/store"
	"holdco/workflows/contract"
)

// Model is the language model the interviewer calls (the configured
// provider; providers/llm/...).
type Model interface {
	Complete(ctx context.Context, req models.ModelRequest, onText func(delta string)) (models.ModelResponse, error)
}

// Topics of ask_founder.
const (
	TopicName      = "name"
	TopicCustomers = "customers"
	TopicMission   = "mission"
	TopicPlan      = "plan"
	TopicOther     = "other"
)

// interviewTools are the interviewer's tools (models.ToolAskFounder, …)
// with their schemas.
var interviewTools = []models.ToolSpec{
	{Name: models.ToolAskFounder, Description: "Ask the founder one question. topic: name (what the business is called), customers, mission, plan or other.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","maxLength":1000},"topic":{"type":"string","enum":["name","customers","mission","plan","other"]}},"required":["question","topic"]}`)},
	{Name: models.ToolProposeCompany, Description: "Propose the company to found once you know its name, customers and mission: name, handle (lower-case slug), one-sentence mission, and the founding plan in Markdown.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","maxLength":200},"handle":{"type":"string","maxLength":64},"mission":{"type":"string","maxLength":2000},"founding_plan":{"type":"string"}},"required":["name","handle","mission","founding_plan"]}`)},
	{Name: models.ToolRejectIdea, Description: "End the interview without founding: the idea cannot become a legitimate business. Give the reason, addressed to the founder.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string","maxLength":1000}},"required":["reason"]}`)},
}

const interviewerSystem = `You are the founding interviewer of an AI-run business service. From the founder's idea, find the business's name, its first customers and its mission by asking one short question at a time (ask_founder), then propose the company (propose_company) with a founding plan in Markdown: what to build first, for whom, how it earns its first dollar, the first week's tasks. If the founder asks for changes to a proposal, ask or propose again. Refuse (reject_idea) only ideas that cannot be a legitimate business. Always answer with exactly one tool call.`

const upgradeSystem = interviewerSystem + ` This interview switches an existing company to the current generation: keep its purpose, confirm or improve its name and mission, and write a new founding plan.`

// Limits of what the interviewer proposes.
const (
	maxMissionChars = 2000
	maxPlanBytes    = models.MaxDocumentBytes
	maxQuestionLen  = 1000
	maxReasonLen    = 1000
)

// request is the interview so far as a model conversation: the idea, each
// interviewer tool call, and each founder answer as that call's result.
func request(f models.FoundingInterview) models.ModelRequest {
	req := models.ModelRequest{System: interviewerSystem, Tools: interviewTools}
	if f.Kind == models.FoundingV3Upgrade {
		req.System = upgradeSystem
	}
	lastCall := ""
	calls := 0
	for _, e := range f.Transcript {
		switch {
		case e.Kind == models.EntryIdea:
			req.Messages = append(req.Messages, models.ModelMessage{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: e.Text}}})
		case e.Role == models.RoleInterviewer:
			calls++
			lastCall = fmt.Sprintf("call_%d", calls)
			name, input := models.ToolAskFounder, any(models.AskFounderInput{Question: e.Text, Topic: e.Topic})
			if e.Kind == models.EntryProposal && f.Proposal != nil {
				name, input = models.ToolProposeCompany, *f.Proposal
			}
			raw, _ := json.Marshal(input)
			req.Messages = append(req.Messages, models.ModelMessage{Role: models.RoleAssistant,
				Content: []models.ContentBlock{{Type: models.ContentToolUse, ToolUseID: lastCall, ToolName: name, Input: raw}}})
		case e.Role == models.RoleFounder && e.Kind == models.EntryAnswer && lastCall != "":
			req.Messages = append(req.Messages, models.ModelMessage{Role: models.RoleUser,
				Content: []models.ContentBlock{{Type: models.ContentToolResult, ToolUseID: lastCall, Text: e.Text}}})
			lastCall = ""
		}
	}
	return req
}

// ideaLine is the interview's first user message.
func ideaLine(kind models.FoundingKind, c *models.Company, idea string) string {
	if kind == models.FoundingV3Upgrade && c != nil {
		return fmt.Sprintf("Switch the company %s (handle %s) to the current generation. Its mission: %s\nIts idea: %s", c.Name, c.Handle, c.Mission, idea)
	}
	return idea
}

// needsSegment reports whether the interviewer owes an answer: the last
// entry is the founder's idea or answer.
func needsSegment(f models.FoundingInterview) bool {
	if !f.State.Open() || f.State == models.FoundingFounding || len(f.Transcript) == 0 {
		return false
	}
	last := f.Transcript[len(f.Transcript)-1]
	return last.Role == models.RoleFounder && (last.Kind == models.EntryIdea || last.Kind == models.EntryAnswer)
}

func founderAnswers(f models.FoundingInterview) int {
	n := 0
	for _, e := range f.Transcript {
		if e.Role == models.RoleFounder && e.Kind != models.EntryIdea {
			n++
		}
	}
	return n
}

func statusOf(f models.FoundingInterview) contract.FoundingStatus {
	return contract.FoundingStatus{InterviewID: f.ID, State: f.State, Busy: f.SegmentRunning, Answers: founderAnswers(f)}
}

// RunSegment is one turn of the interviewer (for the worker, which passes
// the conglomerate's scope): when the founder's idea or answer waits for
// it, the model is called with the interview so far and its one tool call
// moves the interview: ask_founder (naming for the name, shaping for the
// rest), propose_company (reviewing), reject_idea (rejected). A retry after
// the answer was stored calls nothing. Model failures are returned for the
// activity's retry policy; an answer without a usable tool call is a
// question when it has text.
func (s *Service) RunSegment(ctx context.Context, cong store.ConglomerateScope, interviewID string, model Model) (contract.FoundingStatus, error) {
	f, err := s.store.Founding().FoundingInterview(ctx, cong, interviewID)
	if err != nil {
		return contract.FoundingStatus{}, err
	}
	if !needsSegment(f) {
		return statusOf(f), nil
	}
	if !f.SegmentRunning {
		if f, err = s.store.Founding().UpdateFoundingInterview(ctx, cong, f.ID, func(f *models.FoundingInterview) error {
			at := s.now()
			f.SegmentRunning, f.SegmentHeartbeatAt = true, &at
			return nil
		}); err != nil {
			return contract.FoundingStatus{}, err
		}
	}
	var step models.FoundingEntry
	var proposal *models.FoundingProposal
	if founderAnswers(f) >= contract.MaxFoundingAnswers {
		step = models.FoundingEntry{Role: models.RoleInterviewer, Kind: models.EntryRejection,
			Text: fmt.Sprintf("The interview reached %d answers without a proposal; start again with a sharper idea.", contract.MaxFoundingAnswers)}
	} else {
		resp, err := model.Complete(ctx, request(f), nil)
		if err != nil {
			return contract.FoundingStatus{}, err
		}
		if step, proposal, err = s.readAnswer(resp); err != nil {
			return contract.FoundingStatus{}, err
		}
	}
	f, err = s.store.Founding().UpdateFoundingInterview(ctx, cong, f.ID, func(f *models.FoundingInterview) error {
		if !needsSegment(*f) {
			return nil // stored by an earlier attempt
		}
		step.At = s.now()
		f.Transcript = append(f.Transcript, step)
		f.SegmentRunning, f.SegmentHeartbeatAt = false, nil
		switch step.Kind {
		case models.EntryRejection:
			f.State, f.RejectedReason = models.FoundingRejected, step.Text
			at := s.now()
			f.EndedAt = &at
		case models.EntryProposal:
			f.State, f.Proposal = models.FoundingReviewing, proposal
		case models.EntryQuestion:
			f.State = models.FoundingShaping
			if step.Topic == TopicName {
				f.State = models.FoundingNaming
			}
		}
		return nil
	})
	return statusOf(f), err
}

// readAnswer turns the model's answer into the interview's next entry.
func (s *Service) readAnswer(resp models.ModelResponse) (models.FoundingEntry, *models.FoundingProposal, error) {
	for _, call := range resp.ToolCalls() {
		switch call.ToolName {
		case models.ToolAskFounder:
			var in models.AskFounderInput
			if json.Unmarshal(call.Input, &in) == nil && strings.TrimSpace(in.Question) != "" {
				topic := in.Topic
				switch topic {
				case TopicName, TopicCustomers, TopicMission, TopicPlan:
				default:
					topic = TopicOther
				}
				return models.FoundingEntry{Role: models.RoleInterviewer, Kind: models.EntryQuestion, Text: cut(in.Question, maxQuestionLen), Topic: topic}, nil, nil
			}
		case models.ToolProposeCompany:
			var in models.ProposeCompanyInput
			if json.Unmarshal(call.Input, &in) == nil {
				if p, ok := s.proposal(in); ok {
					return models.FoundingEntry{Role: models.RoleInterviewer, Kind: models.EntryProposal,
						Text: fmt.Sprintf("I propose %s (%s): %s", p.Name, p.Handle, p.Mission)}, &p, nil
				}
			}
		case models.ToolRejectIdea:
			var in models.RejectIdeaInput
			if json.Unmarshal(call.Input, &in) == nil && strings.TrimSpace(in.Reason) != "" {
				return models.FoundingEntry{Role: models.RoleInterviewer, Kind: models.EntryRejection, Text: cut(in.Reason, maxReasonLen)}, nil, nil
			}
		}
	}
	if text := strings.TrimSpace(resp.Text()); text != "" {
		return models.FoundingEntry{Role: models.RoleInterviewer, Kind: models.EntryQuestion, Text: cut(text, maxQuestionLen), Topic: TopicOther}, nil, nil
	}
	return models.FoundingEntry{}, nil, errors.New("founding: the interviewer answered without a question, proposal or rejection")
}

// proposal normalizes what the model proposed: a name (one line), a
// valid handle (derived from the name when the model's is not one; an
// upgrade keeps its company's), a mission and a plan within the document
// limit.
func (s *Service) proposal(in models.ProposeCompanyInput) (models.FoundingProposal, bool) {
	name := strings.Join(strings.Fields(in.Name), " ")
	if name == "" || s.checkNameOK(name) != nil {
		return models.FoundingProposal{}, false
	}
	handle := strings.ToLower(strings.TrimSpace(in.Handle))
	if !models.ValidHandle(handle) {
		handle = companies.Slugify(name)
	}
	plan := strings.TrimSpace(in.FoundingPlan)
	if plan == "" {
		return models.FoundingProposal{}, false
	}
	if len(plan) > maxPlanBytes {
		plan = strings.ToValidUTF8(plan[:maxPlanBytes], "")
	}
	return models.FoundingProposal{Name: cut(name, 200), Handle: handle, Mission: cut(strings.TrimSpace(in.Mission), maxMissionChars), FoundingPlan: plan}, true
}

func (s *Service) checkNameOK(name string) error {
	_, err := checkName(name)
	return err
}

// cut bounds s to n characters.
// cut bounds s to n characters. A longer text ends at a word boundary
// with an ellipsis (within the n), never in the middle of a word — unless
// its last n/2 characters hold no space (one very long word), which is cut
// where it must be.
func cut(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 2 {
		return string(r[:n])
	}
	keep := r[:n-1] // room for the ellipsis
	if !unicode.IsSpace(r[n-1]) {
		for i := len(keep) - 1; i >= len(keep)/2; i-- {
			if unicode.IsSpace(keep[i]) {
				keep = keep[:i]
				break
			}
		}
	}
	return strings.TrimRightFunc(string(keep), func(c rune) bool { return unicode.IsSpace(c) || strings.ContainsRune(",;:.-–—", c) }) + "…"
}
