package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/companies"
)

// CompanyResponse is a company.
type CompanyResponse struct {
	ID             string     `json:"id" format:"uuid"`
	ConglomerateID *string    `json:"conglomerate_id" format:"uuid" doc:"null once the account that owned an archived company was deleted."`
	Name           string     `json:"name"`
	Handle         string     `json:"handle"`
	Status         string     `json:"status" enum:"active,paused,archived"`
	Idea           string     `json:"idea"`
	Mission        string     `json:"mission"`
	AgentChat      bool       `json:"agent_chat" doc:"Whether the company's agent takes messages (the owner's switch; scheduled runs and tasks go on either way)."`
	Generation     int        `json:"generation" doc:"3 for companies founded now; older companies are 2 and may switch with POST /companies/{company_id}/v3-upgrade."`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	ArchivedAt     *time.Time `json:"archived_at"`
}

// CompanyListResponse lists the companies that are not archived.
type CompanyListResponse struct {
	Companies []CompanyResponse `json:"companies"`
}

// ArchivedCompanyResponse is an archived company in the archive list.
type ArchivedCompanyResponse struct {
	ID                    string    `json:"id" format:"uuid"`
	Name                  string    `json:"name"`
	Handle                string    `json:"handle"`
	ArchivedAt            time.Time `json:"archived_at"`
	LifetimeEarningsCents int64     `json:"lifetime_earnings_cents" doc:"What the company's customers paid over its life, net of refunds, in US cents."`
	CurrentBalanceCents   int64     `json:"current_balance_cents" doc:"Lifetime earnings not yet withdrawn, in US cents (there are no withdrawals yet; withdrawal routes will stay open for archived companies)."`
}

// ArchivedCompanyListResponse lists archived companies.
type ArchivedCompanyListResponse struct {
	Companies []ArchivedCompanyResponse `json:"companies"`
}

// CreateCompanyRequest founds a company directly (the founding interview
// is the other way).
type CreateCompanyRequest struct {
	Name    string `json:"name" minLength:"1" maxLength:"200"`
	Handle  string `json:"handle,omitempty" maxLength:"64" pattern:"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$" doc:"Platform-wide unique slug; derived from the name when omitted."`
	Idea    string `json:"idea,omitempty" maxLength:"20000" multiline:"true"`
	Mission string `json:"mission,omitempty" maxLength:"20000" multiline:"true"`
	Paused  bool   `json:"paused,omitempty" doc:"Start paused: no scheduled agent runs."`
}

// UpdateCompanyRequest changes a company; omitted fields stay.
type UpdateCompanyRequest struct {
	Name    *string `json:"name,omitempty" minLength:"1" maxLength:"200"`
	Idea    *string `json:"idea,omitempty" maxLength:"20000" multiline:"true"`
	Mission *string `json:"mission,omitempty" maxLength:"20000" multiline:"true"`
	Status  *string `json:"status,omitempty" enum:"active,paused" doc:"Archive with DELETE instead."`
	// AgentChat false stops messages to the company's agent (403).
	AgentChat *bool `json:"agent_chat,omitempty" doc:"false: messages to the agent are refused with 403 until it is switched on again."`
}

// ArchiveCompanyRequest may say why a company is archived.
type ArchiveCompanyRequest struct {
	Reason string `json:"reason,omitempty" maxLength:"500" multiline:"true"`
}

// CompanyApiKeyResponse is the company's permanent API key.
type CompanyApiKeyResponse struct {
	CompanyID string    `json:"company_id" format:"uuid"`
	APIKey    string    `json:"api_key" doc:"svc_c_v1_… — authenticates as the company."`
	CreatedAt time.Time `json:"created_at"`
}

type companyHandlers struct{ svc *companies.Service }

func registerCompanyRoutes(api huma.API, h *companyHandlers) {
	tags := []string{"companies"}
	huma.Register(api, huma.Operation{OperationID: "create-company", Method: http.MethodPost, Path: "/conglomerates/{conglomerate_id}/companies",
		Tags: tags, Summary: "Create a company", Security: bearerSecurity, DefaultStatus: http.StatusCreated,
		Description: "Starts a business like the founding interview and the connector's create_business: the plan (402/403 plan_*), " +
			"the account's business limit and the platform's cap (403 business_limit_reached), at least 12 credits counting the 15 welcome credits " +
			"the account gets with its first business (402 insufficient_credits). " +
			"A taken handle answers 409 handle_taken with `suggested_handle`; a handle derived from the name takes the next free one. " +
			"Provisioning starts at once, or within seconds from the worker when it could not start right away. " +
			"Send an `Idempotency-Key` header to retry safely after a lost response."}, h.create)
	huma.Register(api, huma.Operation{OperationID: "list-companies", Method: http.MethodGet, Path: "/conglomerates/{conglomerate_id}/companies",
		Tags: tags, Summary: "List companies (not archived)", Security: bearerSecurity}, h.list)
	huma.Register(api, huma.Operation{OperationID: "list-archived-companies", Method: http.MethodGet, Path: "/conglomerates/{conglomerate_id}/companies/archived",
		Tags: tags, Summary: "List archived companies", Security: bearerSecurity}, h.listArchived)
	huma.Register(api, huma.Operation{OperationID: "get-company", Method: http.MethodGet, Path: "/companies/{company_id}",
		Tags: tags, Summary: "Get a company", Security: bearerSecurity,
		Description: "404 when missing or archived, 403 when another account's (or another company's key)."}, h.get)
	huma.Register(api, huma.Operation{OperationID: "update-company", Method: http.MethodPut, Path: "/companies/{company_id}",
		Tags: tags, Summary: "Update a company", Security: bearerSecurity}, h.update)
	huma.Register(api, huma.Operation{OperationID: "archive-company", Method: http.MethodDelete, Path: "/companies/{company_id}",
		Tags: tags, Summary: "Archive a company", Security: bearerSecurity, DefaultStatus: http.StatusNoContent,
		Description: "Soft and irreversible; repeating it is a 204 no-op. 502 when live payment objects could not be deactivated (nothing archived; retry)."}, h.archive)
	huma.Register(api, huma.Operation{OperationID: "get-company-api-key", Method: http.MethodGet, Path: "/companies/{company_id}/api-key",
		Tags: tags, Summary: "Get the company API key", Security: bearerSecurity,
		Description: "The first read mints the key."}, h.apiKey)
	huma.Register(api, huma.Operation{OperationID: "rotate-company-api-key", Method: http.MethodPost, Path: "/companies/{company_id}/api-key/rotate",
		Tags: tags, Summary: "Rotate the company API key", Security: bearerSecurity,
		Description: "Human credentials only. The old key stops within 5 seconds (the authentication cache)."}, h.rotate)
}

func toCompanyResponse(c models.Company) CompanyResponse {
	return CompanyResponse{ID: c.ID, ConglomerateID: optional(c.ConglomerateID), Name: c.Name, Handle: c.Handle, Status: string(c.Status),
		Idea: c.Idea, Mission: c.Mission, AgentChat: !c.ChatDisabled, Generation: c.Generation, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, ArchivedAt: c.ArchivedAt}
}

type companyOutput struct{ Body CompanyResponse }

type createCompanyInput struct {
	ConglomerateID string `path:"conglomerate_id" format:"uuid"`
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" doc:"Optional. A retry with the same key and the same body within 24 hours answers 201 with the company the first request created; the same key with another body is 409 (reason idempotency_key_reused)."`
	Body           CreateCompanyRequest
}

func (h *companyHandlers) create(ctx context.Context, in *createCompanyInput) (*companyOutput, error) {
	b := in.Body
	c, err := h.svc.CreateCompany(ctx, in.ConglomerateID, companies.CompanyInput{Name: b.Name, Handle: b.Handle, Idea: b.Idea, Mission: b.Mission, Paused: b.Paused,
		IdempotencyKey: in.IdempotencyKey})
	if err != nil {
		return nil, err
	}
	return &companyOutput{Body: toCompanyResponse(c)}, nil
}

type companyListOutput struct{ Body CompanyListResponse }

func (h *companyHandlers) list(ctx context.Context, in *conglomerateIDInput) (*companyListOutput, error) {
	cs, err := h.svc.ListCompanies(ctx, in.ConglomerateID)
	if err != nil {
		return nil, err
	}
	out := &companyListOutput{Body: CompanyListResponse{Companies: make([]CompanyResponse, 0, len(cs))}}
	for _, c := range cs {
		out.Body.Companies = append(out.Body.Companies, toCompanyResponse(c))
	}
	return out, nil
}

type archivedListOutput struct{ Body ArchivedCompanyListResponse }

func (h *companyHandlers) listArchived(ctx context.Context, in *conglomerateIDInput) (*archivedListOutput, error) {
	cs, err := h.svc.ListArchivedCompanies(ctx, in.ConglomerateID)
	if err != nil {
		return nil, err
	}
	out := &archivedListOutput{Body: ArchivedCompanyListResponse{Companies: make([]ArchivedCompanyResponse, 0, len(cs))}}
	for _, c := range cs {
		r := ArchivedCompanyResponse{ID: c.ID, Name: c.Name, Handle: c.Handle,
			LifetimeEarningsCents: c.Revenue.LifetimeEarningsCents, CurrentBalanceCents: c.Revenue.BalanceCents}
		if c.ArchivedAt != nil {
			r.ArchivedAt = *c.ArchivedAt
		}
		out.Body.Companies = append(out.Body.Companies, r)
	}
	return out, nil
}

type companyIDInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
}

func (h *companyHandlers) get(ctx context.Context, in *companyIDInput) (*companyOutput, error) {
	c, err := h.svc.GetCompany(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	return &companyOutput{Body: toCompanyResponse(c)}, nil
}

type updateCompanyInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Body      UpdateCompanyRequest
}

func (h *companyHandlers) update(ctx context.Context, in *updateCompanyInput) (*companyOutput, error) {
	u := companies.CompanyUpdate{Name: in.Body.Name, Idea: in.Body.Idea, Mission: in.Body.Mission, AgentChat: in.Body.AgentChat}
	if in.Body.Status != nil {
		st := models.CompanyStatus(*in.Body.Status)
		u.Status = &st
	}
	c, err := h.svc.UpdateCompany(ctx, in.CompanyID, u)
	if err != nil {
		return nil, err
	}
	return &companyOutput{Body: toCompanyResponse(c)}, nil
}

type archiveCompanyInput struct {
	CompanyID string                 `path:"company_id" format:"uuid"`
	Body      *ArchiveCompanyRequest `required:"false"`
}

func (h *companyHandlers) archive(ctx context.Context, in *archiveCompanyInput) (*struct{}, error) {
	return nil, h.svc.ArchiveCompany(ctx, in.CompanyID)
}

type apiKeyOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         CompanyApiKeyResponse
}

func keyOutput(k companies.CompanyKey) *apiKeyOutput {
	return &apiKeyOutput{CacheControl: "no-store", Body: CompanyApiKeyResponse{CompanyID: k.CompanyID, APIKey: k.Key, CreatedAt: k.CreatedAt}}
}

func (h *companyHandlers) apiKey(ctx context.Context, in *companyIDInput) (*apiKeyOutput, error) {
	k, err := h.svc.CompanyAPIKey(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	return keyOutput(k), nil
}

func (h *companyHandlers) rotate(ctx context.Context, in *companyIDInput) (*apiKeyOutput, error) {
	k, err := h.svc.RotateCompanyAPIKey(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	return keyOutput(k), nil
}
