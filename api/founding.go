package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/founding"
)

// StartFoundingRequest opens a founding interview.
type StartFoundingRequest struct {
	Idea string `json:"idea" minLength:"1" maxLength:"20000" multiline:"true" doc:"The business idea, up to 20,000 characters."`
}

// AnswerFoundingRequest is the founder's answer to the open interview.
type AnswerFoundingRequest struct {
	Action string `json:"action,omitempty" enum:"answer,accept,withdraw" default:"answer" doc:"answer: answers the interviewer's question, or asks for changes to its proposal; accept: founds the proposal (state reviewing only); withdraw: ends the interview rejected."`
	Answer string `json:"answer,omitempty" maxLength:"4000" multiline:"true" doc:"The answer (required with action answer), up to 4,000 characters."`
	Handle string `json:"handle,omitempty" maxLength:"200" doc:"Optional, with action accept only: the handle to found the company with instead of the proposal's, normalized as GET /founding/handle-check does (its normalized value is used). 422 (field handle) when the check would refuse it, with another action, or on a v3 upgrade; 409 handle_taken with suggested_handle when it is taken now; taken by someone else before the company is founded, the next free one (name-2, …) is used."`
}

// FoundingProposalResponse is what the interviewer proposes to found.
type FoundingProposalResponse struct {
	Name         string `json:"name"`
	Handle       string `json:"handle" doc:"Proposed handle; if it is taken when the company is founded, the next free one (name-2, …) is used."`
	Mission      string `json:"mission"`
	FoundingPlan string `json:"founding_plan" doc:"Markdown; stored as the company's founding_plan document when founded."`
}

// FoundingEntryResponse is one line of the interview's transcript.
type FoundingEntryResponse struct {
	Role  string    `json:"role" enum:"interviewer,founder"`
	Kind  string    `json:"kind" enum:"idea,question,proposal,rejection,answer,accept,withdraw"`
	Text  string    `json:"text"`
	Topic *string   `json:"topic" doc:"A question's topic: name, customers, mission, plan or other; null otherwise."`
	At    time.Time `json:"at"`
}

// FirstPassResponse is the first turn of a founded company.
type FirstPassResponse struct {
	Status string  `json:"status" enum:"pending,started,skipped,not_started" doc:"pending until provisioning is ready."`
	TurnID *string `json:"turn_id" format:"uuid"`
	Error  *string `json:"error" doc:"Why it did not start (insufficient_credits, conflict, …)."`
	Detail *string `json:"detail"`
}

// FoundingResponse is a founding (or v3 upgrade) interview.
type FoundingResponse struct {
	ID             string                    `json:"id" format:"uuid"`
	Kind           string                    `json:"kind" enum:"founding,v3_upgrade"`
	State          string                    `json:"state" enum:"naming,shaping,reviewing,founding,founded,rejected" doc:"naming → shaping → reviewing → founding → founded; rejected from any open state. See docs/founding.md."`
	Idea           string                    `json:"idea"`
	Question       *string                   `json:"question" doc:"The interviewer's open question; null when none waits."`
	Proposal       *FoundingProposalResponse `json:"proposal" doc:"The latest proposal (from reviewing on); null before."`
	Transcript     []FoundingEntryResponse   `json:"transcript"`
	SegmentRunning bool                      `json:"segment_running" doc:"The interviewer's claim is live: it works on the last answer (or the company is being founded) and its worker heartbeats. Answers are refused (409) meanwhile."`
	RejectedReason *string                   `json:"rejected_reason"`
	CompanyID      *string                   `json:"company_id" format:"uuid" doc:"The founded company, or the company a v3 upgrade switches."`
	FirstPass      *FirstPassResponse        `json:"first_pass" doc:"A founded company's first turn (started once provisioning is ready), or an upgraded company's first turn on its new founding plan; null before founded."`
	CreatedAt      time.Time                 `json:"created_at"`
	UpdatedAt      time.Time                 `json:"updated_at"`
	EndedAt        *time.Time                `json:"ended_at"`
}

// FoundingCurrentResponse is the caller's open interview, else their most
// recent one.
type FoundingCurrentResponse struct {
	FoundingResponse
	Open bool `json:"open" doc:"false: no interview is open and this is the most recent one (founded or rejected)."`
}

// HandleCheckResponse says whether a handle is free.
type HandleCheckResponse struct {
	Handle     string `json:"handle" doc:"As asked."`
	Normalized string `json:"normalized" doc:"The handle it becomes: lower case, accents dropped, other characters as single hyphens, at most 64 characters."`
	Valid      bool   `json:"valid" doc:"handle is already a handle as typed (equals normalized)."`
	Available  bool   `json:"available" doc:"normalized is free."`
	Suggestion string `json:"suggestion" doc:"A free handle: normalized when available, else the nearest free one (normalized-2, -3, …)."`
}

// V3UpgradeStatusResponse is a company's v3 upgrade state.
type V3UpgradeStatusResponse struct {
	CompanyID         string            `json:"company_id" format:"uuid"`
	Generation        int               `json:"generation"`
	CurrentGeneration int               `json:"current_generation"`
	Eligible          bool              `json:"eligible" doc:"POST would open a switch interview now."`
	Reason            *string           `json:"reason" enum:"current_generation,interview_open,account_standing" doc:"Why not eligible; null when eligible."`
	Standing          string            `json:"standing" doc:"The account's standing for founding: good, or the plan's refusal (plan_expired, plan_blocked, payment_required, plan_no_ai)."`
	Interview         *FoundingResponse `json:"interview" doc:"The company's latest switch interview; null when none."`
}

type foundingHandlers struct{ svc *founding.Service }

func registerFoundingRoutes(api huma.API, h *foundingHandlers) {
	tags := []string{"founding"}
	huma.Register(api, huma.Operation{OperationID: "start-founding", Method: http.MethodPost, Path: "/founding",
		Tags: tags, Summary: "Start a founding interview", Security: bearerSecurity, DefaultStatus: http.StatusCreated,
		Description: "Opens the interview in `naming` (one open interview per user; the interviewer's first question follows within seconds: " +
			"poll GET /founding/current while `segment_running`). Gates: the plan (402/403 plan codes), the founding caps (409 conflict with " +
			"`interview_id` when one is open; 429 rate_limited past the interviews per day; 403 business_limit_reached at the account's business " +
			"limit) and the platform company cap (403 business_limit_reached, scope platform). No moderation call and no credit gate. " +
			"An idea without any word, or with an operator-denied term, is 400 idea_not_allowed."}, h.start)
	huma.Register(api, huma.Operation{OperationID: "get-current-founding", Method: http.MethodGet, Path: "/founding/current",
		Tags: tags, Summary: "Get the current founding interview", Security: bearerSecurity,
		Description: "The open interview with its transcript and claim liveness (`segment_running`); with none open, the most recent " +
			"founded or rejected one (`open` false); 404 when the user never had one."}, h.current)
	huma.Register(api, huma.Operation{OperationID: "answer-founding", Method: http.MethodPost, Path: "/founding/current/answers",
		Tags: tags, Summary: "Answer the open founding interview", Security: bearerSecurity,
		Description: "Delivers the answer as an Update of the interview's workflow; answers once it is recorded (the interviewer then works: " +
			"`segment_running`). 409 while the interviewer works, for accept before a proposal, or while the company is being founded; " +
			"422 for an empty or too long answer; 404 without an open interview. An accept may name the company's `handle` " +
			"(checked as GET /founding/handle-check checks it; 409 handle_taken with suggested_handle when taken)."}, h.answer)
	huma.Register(api, huma.Operation{OperationID: "check-handle", Method: http.MethodGet, Path: "/founding/handle-check",
		Tags: tags, Summary: "Check a company handle", Security: bearerSecurity,
		Description: "Normalizes `handle` (a wanted handle or a name) and says whether it is free, with a free suggestion."}, h.checkHandle)
	huma.Register(api, huma.Operation{OperationID: "start-v3-upgrade", Method: http.MethodPost, Path: "/companies/{company_id}/v3-upgrade",
		Tags: tags, Summary: "Start a v3 upgrade interview", Security: bearerSecurity, DefaultStatus: http.StatusCreated,
		Description: "Opens a switch interview for an older-generation company (the founding interview's states; founded renames the company, " +
			"sets its mission, replaces its founding plan and moves it to the current generation). 409 with `reason` current_generation or " +
			"interview_open; the plan's codes when the account's standing does not allow founding. User credentials only."}, h.startUpgrade)
	huma.Register(api, huma.Operation{OperationID: "get-v3-upgrade", Method: http.MethodGet, Path: "/companies/{company_id}/v3-upgrade",
		Tags: tags, Summary: "Get a company's v3 upgrade state", Security: bearerSecurity,
		Description: "The company's latest switch interview, the account's standing and whether an upgrade may start now. User credentials only."}, h.getUpgrade)
}

// clientMobile reads X-Client-Mobile (nil when absent).
func clientMobile(v string) *bool {
	switch v {
	case "true", "1":
		return new(true)
	case "false", "0":
		return new(false)
	}
	return nil
}

type startFoundingInput struct {
	AnalyticsSessionID string `header:"X-Analytics-Session-Id" maxLength:"128" pattern:"^[!-~]*$" doc:"Optional analytics session of the client: visible ASCII, up to 128 characters."`
	ClientMobile       string `header:"X-Client-Mobile" enum:"true,false,1,0" doc:"Optional: whether the client is a mobile device (true, false, 1 or 0)."`
	Body               StartFoundingRequest
}

type foundingOutput struct{ Body FoundingResponse }

func (h *foundingHandlers) start(ctx context.Context, in *startFoundingInput) (*foundingOutput, error) {
	return foundingOut(h.svc.StartFounding(ctx, founding.StartInput{Idea: in.Body.Idea, AnalyticsSessionID: in.AnalyticsSessionID, ClientMobile: clientMobile(in.ClientMobile)}))
}

type currentFoundingOutput struct{ Body FoundingCurrentResponse }

func (h *foundingHandlers) current(ctx context.Context, _ *struct{}) (*currentFoundingOutput, error) {
	iv, err := h.svc.CurrentFounding(ctx)
	if err != nil {
		return nil, err
	}
	return &currentFoundingOutput{Body: FoundingCurrentResponse{FoundingResponse: toFoundingResponse(iv), Open: iv.State.Open()}}, nil
}

type answerFoundingInput struct {
	Body AnswerFoundingRequest
}

func (h *foundingHandlers) answer(ctx context.Context, in *answerFoundingInput) (*foundingOutput, error) {
	return foundingOut(h.svc.Answer(ctx, founding.AnswerInput{Action: in.Body.Action, Text: in.Body.Answer, Handle: in.Body.Handle}))
}

type handleCheckInput struct {
	Handle string `query:"handle" required:"true" minLength:"1" maxLength:"200" doc:"A wanted handle, or a name to derive one from."`
}

type handleCheckOutput struct{ Body HandleCheckResponse }

func (h *foundingHandlers) checkHandle(ctx context.Context, in *handleCheckInput) (*handleCheckOutput, error) {
	c, err := h.svc.CheckHandle(ctx, in.Handle)
	if err != nil {
		return nil, err
	}
	return &handleCheckOutput{Body: HandleCheckResponse{Handle: c.Handle, Normalized: c.Normalized, Valid: c.Valid, Available: c.Available, Suggestion: c.Suggestion}}, nil
}

type startUpgradeInput struct {
	CompanyID          string `path:"company_id" format:"uuid"`
	AnalyticsSessionID string `header:"X-Analytics-Session-Id" maxLength:"128" pattern:"^[!-~]*$" doc:"Optional analytics session of the client: visible ASCII, up to 128 characters."`
	ClientMobile       string `header:"X-Client-Mobile" enum:"true,false,1,0" doc:"Optional: whether the client is a mobile device (true, false, 1 or 0)."`
}

func (h *foundingHandlers) startUpgrade(ctx context.Context, in *startUpgradeInput) (*foundingOutput, error) {
	return foundingOut(h.svc.StartV3Upgrade(ctx, in.CompanyID, founding.V3UpgradeInput{AnalyticsSessionID: in.AnalyticsSessionID, ClientMobile: clientMobile(in.ClientMobile)}))
}

type upgradeIDInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
}

type upgradeOutput struct{ Body V3UpgradeStatusResponse }

func (h *foundingHandlers) getUpgrade(ctx context.Context, in *upgradeIDInput) (*upgradeOutput, error) {
	st, err := h.svc.V3Upgrade(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	out := V3UpgradeStatusResponse{CompanyID: st.Company.ID, Generation: st.Company.Generation, CurrentGeneration: models.CurrentCompanyGeneration,
		Eligible: st.Eligible, Reason: optional(st.Reason), Standing: st.Standing}
	if st.Interview != nil {
		r := toFoundingResponse(*st.Interview)
		out.Interview = &r
	}
	return &upgradeOutput{Body: out}, nil
}

func foundingOut(iv founding.Interview, err error) (*foundingOutput, error) {
	if err != nil {
		return nil, err
	}
	return &foundingOutput{Body: toFoundingResponse(iv)}, nil
}

func toFoundingResponse(iv founding.Interview) FoundingResponse {
	f := iv.FoundingInterview
	r := FoundingResponse{ID: f.ID, Kind: string(f.Kind), State: string(f.State), Idea: f.Idea, Question: optional(f.Question()),
		Transcript: make([]FoundingEntryResponse, 0, len(f.Transcript)), SegmentRunning: iv.SegmentLive, RejectedReason: optional(f.RejectedReason),
		CompanyID: f.CompanyID, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt, EndedAt: f.EndedAt}
	for _, e := range f.Transcript {
		r.Transcript = append(r.Transcript, FoundingEntryResponse{Role: e.Role, Kind: e.Kind, Text: e.Text, Topic: optional(e.Topic), At: e.At})
	}
	if p := f.Proposal; p != nil {
		r.Proposal = &FoundingProposalResponse{Name: p.Name, Handle: p.Handle, Mission: p.Mission, FoundingPlan: p.FoundingPlan}
	}
	if f.State == models.FoundingFounded {
		fp := &FirstPassResponse{Status: f.FirstPassStatus, TurnID: f.FirstPassTurnID, Error: optional(f.FirstPassError), Detail: optional(f.FirstPassDetail)}
		if fp.Status == "" {
			fp.Status = "pending"
		}
		r.FirstPass = fp
	}
	return r
}
