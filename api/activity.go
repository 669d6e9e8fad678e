package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/companies"
)

// ActivityEventResponse is one event of a company's feed.
type ActivityEventResponse struct {
	ID        string       `json:"id" format:"uuid"`
	Kind      string       `json:"kind" example:"document_updated" doc:"company_created, company_provisioned, document_updated, document_deleted, file_uploaded, file_deleted, files_deleted, email_received, email_sent, payment_received, refund_issued, subscription_started, subscription_canceled, milestone_reached; later turns, domains and ads add kinds."`
	Actor     string       `json:"actor" enum:"user,agent,customer,system"`
	Summary   string       `json:"summary"`
	Subject   string       `json:"subject" doc:"What the event is about: a document type, a file id, a payment id; empty when nothing."`
	Data      ActivityData `json:"data"`
	CreatedAt time.Time    `json:"created_at"`
}

// ActivityData is an event's data: the JSON object the store keeps (it
// writes it from a map), answered as stored rather than decoded into a map
// and encoded again. The schema is an object of any members, as a map's.
type ActivityData []byte

// activityData is the stored data s when it is one JSON object, else
// empty: an unreadable one shows as {} (as it did decoded into a map).
func activityData(s string) ActivityData {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	if i == len(s) || s[i] != '{' || !json.Valid([]byte(s)) {
		return nil
	}
	return ActivityData(s)
}

// MarshalJSON writes the object as stored ({} when there is none).
func (d ActivityData) MarshalJSON() ([]byte, error) {
	if len(d) == 0 {
		return []byte("{}"), nil
	}
	return d, nil
}

// Schema is a map[string]any's: an object with any members.
func (ActivityData) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, AdditionalProperties: &huma.Schema{}}
}

// ActivityCursorResponse continues the feed after the last event of a page.
type ActivityCursorResponse struct {
	Before   time.Time `json:"before"`
	BeforeID string    `json:"before_id" format:"uuid"`
}

// ActivityListResponse is a page of the feed, newest first.
type ActivityListResponse struct {
	Events []ActivityEventResponse `json:"events"`
	Next   *ActivityCursorResponse `json:"next" doc:"Pass as before and before_id for the next page; null on the last page."`
}

// MilestoneResponse is a reached milestone.
type MilestoneResponse struct {
	Kind      string     `json:"kind" enum:"first_dollar"`
	Goal      string     `json:"goal"`
	ReachedAt time.Time  `json:"reached_at"`
	SeenAt    *time.Time `json:"seen_at"`
}

// MilestoneGoalResponse is the next milestone to reach.
type MilestoneGoalResponse struct {
	Kind string `json:"kind" enum:"first_dollar"`
	Goal string `json:"goal"`
}

// MilestonesResponse is the company's milestone shelf.
type MilestonesResponse struct {
	Achieved []MilestoneResponse    `json:"achieved"`
	Unseen   []MilestoneResponse    `json:"unseen" doc:"Achieved milestones not yet marked seen, oldest first."`
	NextGoal *MilestoneGoalResponse `json:"next_goal" doc:"null once every milestone is reached."`
}

// MarkMilestonesSeenResponse says how many milestones were marked seen.
type MarkMilestonesSeenResponse struct {
	Marked int64 `json:"marked"`
}

type activityHandlers struct{ svc *companies.Service }

func registerActivityRoutes(api huma.API, h *activityHandlers) {
	tags := []string{"activity"}
	huma.Register(api, huma.Operation{OperationID: "list-activity", Method: http.MethodGet, Path: "/companies/{company_id}/activity",
		Tags: tags, Summary: "The company's activity feed, newest first", Security: bearerSecurity,
		Description: "Events with equal timestamps are ordered by id. `before` alone lists events strictly older than that instant; " +
			"`before` with `before_id` (both from `next`) continues exactly after the previous page."}, h.list)
	huma.Register(api, huma.Operation{OperationID: "get-milestones", Method: http.MethodGet, Path: "/companies/{company_id}/milestones",
		Tags: tags, Summary: "The company's milestones", Security: bearerSecurity,
		Description: "The only kind is first_dollar, reached by the company's first revenue, once."}, h.milestones)
	huma.Register(api, huma.Operation{OperationID: "mark-milestones-seen", Method: http.MethodPost, Path: "/companies/{company_id}/milestones/seen",
		Tags: tags, Summary: "Mark every unseen milestone seen", Security: bearerSecurity}, h.markSeen)
}

type activityInput struct {
	CompanyID string    `path:"company_id" format:"uuid"`
	Limit     int       `query:"limit" minimum:"1" maximum:"100" default:"50"`
	Before    time.Time `query:"before" required:"false" doc:"RFC 3339 date-time."`
	BeforeID  string    `query:"before_id" format:"uuid" required:"false"`
}

type activityOutput struct{ Body ActivityListResponse }

func (h *activityHandlers) list(ctx context.Context, in *activityInput) (*activityOutput, error) {
	page, err := h.svc.Activity(ctx, in.CompanyID, companies.ActivityInput{Limit: in.Limit, Before: in.Before, BeforeID: in.BeforeID})
	if err != nil {
		return nil, err
	}
	out := &activityOutput{Body: ActivityListResponse{Events: toActivityEvents(page.Events)}}
	if page.Next != nil {
		out.Body.Next = &ActivityCursorResponse{Before: page.Next.Before, BeforeID: page.Next.BeforeID}
	}
	return out, nil
}

func toActivityEvents(es []models.ActivityEvent) []ActivityEventResponse {
	out := make([]ActivityEventResponse, 0, len(es))
	for _, e := range es {
		out = append(out, ActivityEventResponse{ID: e.ID, Kind: string(e.Kind), Actor: string(e.Actor), Summary: e.Summary,
			Subject: e.Subject, Data: activityData(e.Data), CreatedAt: e.CreatedAt})
	}
	return out
}

func toMilestones(m companies.Milestones) MilestonesResponse {
	conv := func(ms []models.Milestone) []MilestoneResponse {
		out := make([]MilestoneResponse, 0, len(ms))
		for _, x := range ms {
			out = append(out, MilestoneResponse{Kind: string(x.Kind), Goal: x.Kind.Goal(), ReachedAt: x.ReachedAt, SeenAt: x.SeenAt})
		}
		return out
	}
	r := MilestonesResponse{Achieved: conv(m.Achieved), Unseen: conv(m.Unseen)}
	if m.NextGoal != nil {
		r.NextGoal = &MilestoneGoalResponse{Kind: string(*m.NextGoal), Goal: m.NextGoal.Goal()}
	}
	return r
}

type milestonesOutput struct{ Body MilestonesResponse }

func (h *activityHandlers) milestones(ctx context.Context, in *companyIDInput) (*milestonesOutput, error) {
	m, err := h.svc.Milestones(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	return &milestonesOutput{Body: toMilestones(m)}, nil
}

type markSeenOutput struct{ Body MarkMilestonesSeenResponse }

func (h *activityHandlers) markSeen(ctx context.Context, in *companyIDInput) (*markSeenOutput, error) {
	n, err := h.svc.MarkMilestonesSeen(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	return &markSeenOutput{Body: MarkMilestonesSeenResponse{Marked: n}}, nil
}
