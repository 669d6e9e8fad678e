package models

import (
	"time"

	"gorm.io/gorm"
)

// FoundingState is where a founding interview is.
//
//	naming → shaping → reviewing → founding → founded
//	   ↑________|__________|   (an answer in reviewing asks for changes)
//	any open state → rejected (the interviewer refuses the idea, the founder
//	withdraws, the interview idles out or founding is refused)
//
// naming: the interviewer asks what the business is called; shaping: it
// asks about customers, mission or plan; reviewing: it proposed the
// company (name, handle, mission, founding plan) and waits for the
// founder's accept or changes; founding: accepted, the company is being
// created. founded and rejected are terminal.
type FoundingState string

const (
	FoundingNaming    FoundingState = "naming"
	FoundingShaping   FoundingState = "shaping"
	FoundingReviewing FoundingState = "reviewing"
	FoundingFounding  FoundingState = "founding"
	FoundingFounded   FoundingState = "founded"
	FoundingRejected  FoundingState = "rejected"
)

// Open reports whether the interview has not ended.
func (s FoundingState) Open() bool { return s != FoundingFounded && s != FoundingRejected }

// FoundingKind is what an interview founds.
type FoundingKind string

const (
	// FoundingNew founds a new company.
	FoundingNew FoundingKind = "founding"
	// FoundingV3Upgrade switches an existing older-generation company to
	// the current generation (new mission and founding plan).
	FoundingV3Upgrade FoundingKind = "v3_upgrade"
)

// CurrentCompanyGeneration is the generation of companies founded now;
// companies made before generations existed are generation 2.
const CurrentCompanyGeneration = 3

// FoundingEntry is one line of an interview's transcript.
type FoundingEntry struct {
	// Role is "interviewer" or "founder".
	Role string `json:"role"`
	// Kind is question, proposal or rejection (interviewer), answer,
	// accept or withdraw (founder), or idea (the founder's first line).
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Topic of a question: name, customers, mission, plan or other.
	Topic string    `json:"topic,omitempty"`
	At    time.Time `json:"at"`
}

// Roles and kinds of transcript entries.
const (
	RoleInterviewer = "interviewer"
	RoleFounder     = "founder"

	EntryIdea      = "idea"
	EntryQuestion  = "question"
	EntryProposal  = "proposal"
	EntryRejection = "rejection"
	EntryAnswer    = "answer"
	EntryAccept    = "accept"
	EntryWithdraw  = "withdraw"
)

// FoundingProposal is what the interviewer proposes to found.
type FoundingProposal struct {
	Name         string `json:"name"`
	Handle       string `json:"handle"`
	Mission      string `json:"mission"`
	FoundingPlan string `json:"founding_plan"`
}

// The founding interviewer's tools: a model conducts the interview by
// calling exactly one of them per answer. service/founding offers them
// (with their schemas) and reads the calls; the scripted model
// (providers/llm/scripted) makes them. Both use these names and inputs.
const (
	ToolAskFounder     = "ask_founder"
	ToolProposeCompany = "propose_company"
	ToolRejectIdea     = "reject_idea"
)

// AskFounderInput is ask_founder's input.
type AskFounderInput struct {
	Question string `json:"question"`
	Topic    string `json:"topic"`
}

// ProposeCompanyInput is propose_company's input: the proposal.
type ProposeCompanyInput = FoundingProposal

// RejectIdeaInput is reject_idea's input.
type RejectIdeaInput struct {
	Reason string `json:"reason"`
}

// FoundingInterview is one founding (or v3 upgrade) interview: the row the
// REST API reads; the workflow founding:<user_id> moves it.
type FoundingInterview struct {
	ID             string        `gorm:"primaryKey;size:36"`
	UserID         string        `gorm:"size:36;not null;index:idx_founding_user,priority:1"`
	ConglomerateID string        `gorm:"size:36;not null;index:idx_founding_conglomerate"`
	Kind           FoundingKind  `gorm:"size:16;not null"`
	State          FoundingState `gorm:"size:16;not null"`
	// OpenKey is the user id while the interview is open and NULL after: a
	// unique index makes one open interview per user.
	OpenKey *string `gorm:"size:36;uniqueIndex:idx_founding_open"`
	Idea    string  `gorm:"type:text;not null"`
	// CompanyID is the founded company, or the company a v3 upgrade
	// switches.
	CompanyID  *string           `gorm:"size:36;index:idx_founding_company"`
	Transcript []FoundingEntry   `gorm:"serializer:json;type:text;not null"`
	Proposal   *FoundingProposal `gorm:"serializer:json;type:text"`
	// RejectedReason says why a rejected interview ended.
	RejectedReason string `gorm:"size:1000;not null"`
	// SegmentRunning is the interviewer's claim: set while it works on an
	// answer, with SegmentHeartbeatAt renewed every few seconds; a claim
	// whose heartbeat is stale is not live (the worker died; the segment
	// is retried).
	SegmentRunning     bool `gorm:"not null"`
	SegmentHeartbeatAt *time.Time
	// WorkflowStartedAt is set once the interview's workflow exists; the
	// sweeper starts open interviews without it.
	WorkflowStartedAt  *time.Time
	AnalyticsSessionID string `gorm:"size:128;not null"`
	ClientMobile       *bool
	// First pass of a founded company: started when provisioning is ready.
	FirstPassStatus string    `gorm:"size:16;not null"`
	FirstPassTurnID *string   `gorm:"size:36"`
	FirstPassError  string    `gorm:"size:40;not null"`
	FirstPassDetail string    `gorm:"size:1000;not null"`
	CreatedAt       time.Time `gorm:"not null;index:idx_founding_user,priority:2"`
	UpdatedAt       time.Time `gorm:"not null"`
	EndedAt         *time.Time
}

// BeforeCreate gives the interview its id.
func (f *FoundingInterview) BeforeCreate(*gorm.DB) error {
	ensureID(&f.ID)
	if f.Transcript == nil {
		f.Transcript = []FoundingEntry{}
	}
	return nil
}

// SegmentLive reports whether the interviewer's claim is live at now: set
// and heartbeated within staleAfter.
func (f FoundingInterview) SegmentLive(now time.Time, staleAfter time.Duration) bool {
	return f.SegmentRunning && f.SegmentHeartbeatAt != nil && now.Sub(*f.SegmentHeartbeatAt) < staleAfter
}

// Question is the interviewer's open question ("" when none).
func (f FoundingInterview) Question() string {
	if !f.State.Open() || len(f.Transcript) == 0 {
		return ""
	}
	last := f.Transcript[len(f.Transcript)-1]
	if last.Role == RoleInterviewer && last.Kind == EntryQuestion {
		return last.Text
	}
	return ""
}
