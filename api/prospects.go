package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/prospects"
)

// ProspectResponse is one of a company's leads.
type ProspectResponse struct {
	ID           string    `json:"id" format:"uuid"`
	CompanyID    string    `json:"company_id" format:"uuid"`
	Name         string    `json:"name"`
	Email        string    `json:"email" doc:"Empty when unknown; one prospect per address (any case)."`
	Organization string    `json:"organization"`
	Status       string    `json:"status" enum:"new,contacted,replied,qualified,won,lost"`
	Notes        string    `json:"notes" doc:"Markdown."`
	Source       string    `json:"source"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// ProspectListResponse is a page of prospects, newest first.
type ProspectListResponse struct {
	Prospects []ProspectResponse `json:"prospects"`
	Next      *string            `json:"next" doc:"Pass as before for the next page; null on the last page."`
}

// ProspectRequest is a new prospect or the fields to change (absent fields
// stay as they are on PATCH).
type ProspectRequest struct {
	Name         *string `json:"name,omitempty" maxLength:"200"`
	Email        *string `json:"email,omitempty" maxLength:"320"`
	Organization *string `json:"organization,omitempty" maxLength:"200"`
	Status       *string `json:"status,omitempty" enum:"new,contacted,replied,qualified,won,lost"`
	Notes        *string `json:"notes,omitempty" maxLength:"10000" multiline:"true"`
	Source       *string `json:"source,omitempty" maxLength:"500"`
}

func (r ProspectRequest) input() prospects.Input {
	in := prospects.Input{Name: r.Name, Email: r.Email, Organization: r.Organization, Notes: r.Notes, Source: r.Source}
	if r.Status != nil {
		st := models.ProspectStatus(*r.Status)
		in.Status = &st
	}
	return in
}

type prospectHandlers struct{ svc *prospects.Service }

func registerProspectRoutes(api huma.API, h *prospectHandlers) {
	tags := []string{"prospects"}
	huma.Register(api, huma.Operation{OperationID: "list-prospects", Method: http.MethodGet, Path: "/companies/{company_id}/prospects",
		Tags: tags, Summary: "List the company's prospects", Security: bearerSecurity,
		Description: "The company's leads, newest first. Filter with `status`, repeated."}, h.list)
	huma.Register(api, huma.Operation{OperationID: "add-prospect", Method: http.MethodPost, Path: "/companies/{company_id}/prospects",
		Tags: tags, Summary: "Add a prospect", Security: bearerSecurity, DefaultStatus: http.StatusCreated,
		Description: "`name` is required; status defaults to new. An email the company has already answers 409."}, h.add)
	huma.Register(api, huma.Operation{OperationID: "update-prospect", Method: http.MethodPatch, Path: "/companies/{company_id}/prospects/{prospect_id}",
		Tags: tags, Summary: "Change a prospect", Security: bearerSecurity,
		Description: "Any status may follow any other (the pipeline is new, contacted, replied, qualified, won, lost)."}, h.update)
}

func toProspect(p models.Prospect) ProspectResponse {
	return ProspectResponse{ID: p.ID, CompanyID: p.CompanyID, Name: p.Name, Email: p.Email, Organization: p.Organization,
		Status: string(p.Status), Notes: p.Notes, Source: p.Source, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

type listProspectsInput struct {
	CompanyID string   `path:"company_id" format:"uuid"`
	Status    []string `query:"status,explode" required:"false" enum:"new,contacted,replied,qualified,won,lost"`
	Limit     int      `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Before    string   `query:"before" format:"uuid"`
}

type prospectListOutput struct{ Body ProspectListResponse }

func (h *prospectHandlers) list(ctx context.Context, in *listProspectsInput) (*prospectListOutput, error) {
	st := make([]models.ProspectStatus, len(in.Status))
	for i, s := range in.Status {
		st[i] = models.ProspectStatus(s)
	}
	p, err := h.svc.List(ctx, in.CompanyID, prospects.ListInput{Statuses: st, Limit: in.Limit, Before: in.Before})
	if err != nil {
		return nil, err
	}
	out := &prospectListOutput{Body: ProspectListResponse{Prospects: make([]ProspectResponse, len(p.Prospects))}}
	for i, x := range p.Prospects {
		out.Body.Prospects[i] = toProspect(x)
	}
	if p.Next != "" {
		out.Body.Next = &p.Next
	}
	return out, nil
}

type addProspectInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Body      ProspectRequest
}

type prospectOutput struct{ Body ProspectResponse }

func prospectOut(p models.Prospect, err error) (*prospectOutput, error) {
	if err != nil {
		return nil, err
	}
	return &prospectOutput{Body: toProspect(p)}, nil
}

func (h *prospectHandlers) add(ctx context.Context, in *addProspectInput) (*prospectOutput, error) {
	return prospectOut(h.svc.Add(ctx, in.CompanyID, in.Body.input()))
}

type updateProspectInput struct {
	CompanyID  string `path:"company_id" format:"uuid"`
	ProspectID string `path:"prospect_id" format:"uuid"`
	Body       ProspectRequest
}

func (h *prospectHandlers) update(ctx context.Context, in *updateProspectInput) (*prospectOutput, error) {
	return prospectOut(h.svc.Update(ctx, in.CompanyID, in.ProspectID, in.Body.input()))
}
