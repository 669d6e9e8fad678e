package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
)

// ConglomerateResponse is an account as its member sees it.
type ConglomerateResponse struct {
	ID             string    `json:"id" format:"uuid"`
	Name           string    `json:"name"`
	OwnerUserID    string    `json:"owner_user_id" format:"uuid"`
	Role           string    `json:"role" enum:"owner,member" doc:"The caller's role."`
	TrialStartedAt time.Time `json:"trial_started_at"`
	TrialEndsAt    time.Time `json:"trial_ends_at" doc:"End of the 3-day free trial."`
	DailyCreditCap *int64    `json:"daily_credit_cap" doc:"Credits the account may spend per UTC day across its companies; null: no cap."`
	CreatedAt      time.Time `json:"created_at"`
}

// ConglomerateListResponse lists the caller's conglomerates.
type ConglomerateListResponse struct {
	Conglomerates []ConglomerateResponse `json:"conglomerates"`
}

// UpdateConglomerateRequest changes settings; omitted fields stay as they are.
type UpdateConglomerateRequest struct {
	Name           *string `json:"name,omitempty" minLength:"1" maxLength:"200"`
	DailyCreditCap *int64  `json:"daily_credit_cap,omitempty" minimum:"0" maximum:"1000000000" nullable:"true" doc:"null removes the cap."`
}

type conglomerateHandlers struct{ svc *companies.Service }

func registerConglomerateRoutes(api huma.API, h *conglomerateHandlers) {
	huma.Register(api, huma.Operation{
		OperationID: "my-conglomerates", Method: http.MethodGet, Path: "/conglomerates/me", Tags: []string{"conglomerates"},
		Summary: "My conglomerates", Security: bearerSecurity,
	}, h.mine)
	huma.Register(api, huma.Operation{
		OperationID: "get-conglomerate", Method: http.MethodGet, Path: "/conglomerates/{conglomerate_id}", Tags: []string{"conglomerates"},
		Summary: "Get a conglomerate", Description: "The caller must belong to it: 404 when it does not exist, 403 when it is another account's.",
		Security: bearerSecurity,
	}, h.get)
	huma.Register(api, huma.Operation{
		OperationID: "update-conglomerate", Method: http.MethodPatch, Path: "/conglomerates/{conglomerate_id}", Tags: []string{"conglomerates"},
		Summary: "Update conglomerate settings", Security: bearerSecurity,
	}, h.update)
}

func toConglomerateResponse(v service.ConglomerateView) ConglomerateResponse {
	return ConglomerateResponse{
		ID: v.ID, Name: v.Name, OwnerUserID: v.OwnerUserID, Role: string(v.Role),
		TrialStartedAt: v.TrialStartedAt, TrialEndsAt: v.TrialEndsAt(), DailyCreditCap: v.DailyCreditCap, CreatedAt: v.CreatedAt,
	}
}

type conglomerateListOutput struct{ Body ConglomerateListResponse }

func (h *conglomerateHandlers) mine(ctx context.Context, _ *struct{}) (*conglomerateListOutput, error) {
	views, err := h.svc.MyConglomerates(ctx)
	if err != nil {
		return nil, err
	}
	out := &conglomerateListOutput{Body: ConglomerateListResponse{Conglomerates: make([]ConglomerateResponse, 0, len(views))}}
	for _, v := range views {
		out.Body.Conglomerates = append(out.Body.Conglomerates, toConglomerateResponse(v))
	}
	return out, nil
}

type conglomerateIDInput struct {
	ConglomerateID string `path:"conglomerate_id" format:"uuid"`
}

type conglomerateOutput struct{ Body ConglomerateResponse }

func (h *conglomerateHandlers) get(ctx context.Context, in *conglomerateIDInput) (*conglomerateOutput, error) {
	v, err := h.svc.GetConglomerate(ctx, in.ConglomerateID)
	if err != nil {
		return nil, err
	}
	return &conglomerateOutput{Body: toConglomerateResponse(v)}, nil
}

type updateConglomerateInput struct {
	ConglomerateID string `path:"conglomerate_id" format:"uuid"`
	RawBody        []byte
	Body           UpdateConglomerateRequest
}

func (h *conglomerateHandlers) update(ctx context.Context, in *updateConglomerateInput) (*conglomerateOutput, error) {
	u := companies.ConglomerateUpdate{Name: in.Body.Name}
	// Absent and null differ for the cap: null removes it.
	var present map[string]json.RawMessage
	if err := json.Unmarshal(in.RawBody, &present); err == nil {
		if _, ok := present["daily_credit_cap"]; ok {
			u.DailyCreditCap.Set, u.DailyCreditCap.Value = true, in.Body.DailyCreditCap
		}
	}
	v, err := h.svc.UpdateConglomerate(ctx, in.ConglomerateID, u)
	if err != nil {
		return nil, err
	}
	return &conglomerateOutput{Body: toConglomerateResponse(v)}, nil
}

func toUserResponse(u models.User) UserResponse {
	return UserResponse{ID: u.ID, Email: u.Email, Name: u.Name, CreatedAt: u.CreatedAt}
}
