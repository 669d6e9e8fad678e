package api

import (
	"context"
	"holdco/service/companies"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// UserAuthDisabledResponse is a company's revoked app sign-in client.
type UserAuthDisabledResponse struct {
	CompanyID             string     `json:"company_id" format:"uuid"`
	ClientID              string     `json:"client_id"`
	RevokedAt             *time.Time `json:"revoked_at"`
	RevokedReason         string     `json:"revoked_reason"`
	RevokedConglomerateID string     `json:"revoked_conglomerate_id"`
}

type userAuthHandlers struct{ svc *companies.Service }

func registerUserAuthRoutes(api huma.API, h *userAuthHandlers) {
	huma.Register(api, huma.Operation{OperationID: "admin-disable-user-auth", Method: http.MethodPost, Path: "/admin/user-auth/{company_id}/disable",
		Tags: []string{"admin"}, Summary: "Disable a company's app sign-in", Security: bearerSecurity, Metadata: map[string]any{adminOnly: true},
		Description: "Stamps revoked_at on the company's OpenID client. The reason and conglomerate survive archiving or deleting the company; provisioning never un-revokes (`holdco admin user-auth enable` does)."}, h.disable)
}

type disableInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Reason    string `query:"reason" required:"true" minLength:"4" maxLength:"500"`
}

type disableOutput struct{ Body UserAuthDisabledResponse }

func (h *userAuthHandlers) disable(ctx context.Context, in *disableInput) (*disableOutput, error) {
	c, err := h.svc.DisableUserAuth(ctx, in.CompanyID, in.Reason)
	if err != nil {
		return nil, err
	}
	return &disableOutput{Body: UserAuthDisabledResponse{CompanyID: c.CompanyID, ClientID: c.ClientID, RevokedAt: c.RevokedAt,
		RevokedReason: c.RevokedReason, RevokedConglomerateID: c.RevokedConglomerateID}}, nil
}
