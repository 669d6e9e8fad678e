package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/identity"
)

// TokenResponse describes a personal access token, never its secret.
type TokenResponse struct {
	ID         string     `json:"id" format:"uuid"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	ExpiresAt  *time.Time `json:"expires_at" doc:"null: never expires."`
}

// CreateTokenRequest names a new personal access token.
type CreateTokenRequest struct {
	Name          string `json:"name" minLength:"1" maxLength:"100"`
	ExpiresInDays *int   `json:"expires_in_days,omitempty" minimum:"1" maximum:"365" doc:"Omit for a token that does not expire."`
}

// CreateTokenResponse carries the raw token: it is shown this once only.
type CreateTokenResponse struct {
	TokenResponse
	Token string `json:"token" doc:"The raw svc_u_v1_… value; store it now, it is never shown again."`
}

type tokenHandlers struct{ svc *identity.Service }

func registerTokenRoutes(api huma.API, h *tokenHandlers) {
	huma.Register(api, huma.Operation{
		OperationID: "list-tokens", Method: http.MethodGet, Path: "/auth/tokens", Tags: []string{"tokens"},
		Summary: "List my personal access tokens", Description: "Live (not revoked, not expired) personal access tokens, newest first; no secrets; CLI sessions and web sessions are not listed.",
		Security: bearerSecurity,
	}, h.list)
	huma.Register(api, huma.Operation{
		OperationID: "create-token", Method: http.MethodPost, Path: "/auth/tokens", Tags: []string{"tokens"},
		Summary: "Create a personal access token", Description: "Needs a user credential with conglomerate scope. The raw value is returned once.",
		Security: bearerSecurity, DefaultStatus: http.StatusCreated,
	}, h.create)
	huma.Register(api, huma.Operation{
		OperationID: "revoke-token", Method: http.MethodDelete, Path: "/auth/tokens/{token_id}", Tags: []string{"tokens"},
		Summary: "Revoke a personal access token", Description: "Soft revoke, idempotent. 404 when no such token, 403 when it is another user's.",
		Security: bearerSecurity, DefaultStatus: http.StatusNoContent,
	}, h.revoke)
}

func toTokenResponse(k models.APIKey) TokenResponse {
	return TokenResponse{ID: k.ID, Name: k.Name, CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt}
}

type tokenListOutput struct{ Body []TokenResponse }

func (h *tokenHandlers) list(ctx context.Context, _ *struct{}) (*tokenListOutput, error) {
	keys, err := h.svc.ListPersonalTokens(ctx)
	if err != nil {
		return nil, err
	}
	out := &tokenListOutput{Body: make([]TokenResponse, 0, len(keys))}
	for _, k := range keys {
		out.Body = append(out.Body, toTokenResponse(k))
	}
	return out, nil
}

type createTokenInput struct{ Body CreateTokenRequest }
type createTokenOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         CreateTokenResponse
}

func (h *tokenHandlers) create(ctx context.Context, in *createTokenInput) (*createTokenOutput, error) {
	t, err := h.svc.CreatePersonalToken(ctx, in.Body.Name, in.Body.ExpiresInDays)
	if err != nil {
		return nil, err
	}
	return &createTokenOutput{CacheControl: "no-store", Body: CreateTokenResponse{TokenResponse: toTokenResponse(t.Key), Token: t.Raw}}, nil
}

type tokenIDInput struct {
	TokenID string `path:"token_id" format:"uuid"`
}

func (h *tokenHandlers) revoke(ctx context.Context, in *tokenIDInput) (*struct{}, error) {
	return nil, h.svc.RevokePersonalToken(ctx, in.TokenID)
}
