package api

import (
	"context"
	"holdco/service/companies"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
)

// ProvisionCompanyRequest (re)starts provisioning.
type ProvisionCompanyRequest struct {
	SeedRepo *bool `json:"seed_repo,omitempty" doc:"Seed a new repository with a README (auto_init). false is an import resume: never seed. Default true."`
}

// ProvisionTriggerResponse names the provisioning workflow started or joined.
type ProvisionTriggerResponse struct {
	WorkflowID string `json:"workflow_id" example:"provision:0b7c…"`
	RunID      string `json:"run_id"`
}

// CompanyResourceResponse is one resource's provisioning status.
type CompanyResourceResponse struct {
	Kind       string     `json:"kind" enum:"repository,database,hosting"`
	Status     string     `json:"status" enum:"not_provisioned,provisioning,ready,failed"`
	Ref        string     `json:"ref,omitempty" doc:"Where the resource is: repository name or clone URL, database name, site URL."`
	ErrorClass string     `json:"error_class,omitempty" enum:"provider_error,timeout,unavailable" doc:"Why the last attempt failed, as a class."`
	LastError  string     `json:"last_error,omitempty" doc:"The raw error of the last attempt; only in the operators' admin health."`
	Attempts   int        `json:"attempts"`
	UpdatedAt  *time.Time `json:"updated_at"`
}

// CompanyResourcesResponse is the combined provisioning status.
type CompanyResourcesResponse struct {
	Ready     bool                      `json:"ready" doc:"All three resources are ready."`
	Resources []CompanyResourceResponse `json:"resources"`
}

// ResourceHealth is a resource checked against reality.
type ResourceHealth struct {
	CompanyResourceResponse
	Healthy bool   `json:"healthy"`
	Problem string `json:"problem,omitempty"`
}

// CompanyHealth is one company's diagnosis.
type CompanyHealth struct {
	CompanyID      string           `json:"company_id" format:"uuid"`
	ConglomerateID string           `json:"conglomerate_id"`
	Handle         string           `json:"handle"`
	Healthy        bool             `json:"healthy"`
	Resources      []ResourceHealth `json:"resources"`
}

// CompaniesHealthResponse is the health of every company that is not archived.
type CompaniesHealthResponse struct {
	CheckedAt time.Time       `json:"checked_at"`
	Healthy   int             `json:"healthy"`
	Unhealthy int             `json:"unhealthy"`
	Companies []CompanyHealth `json:"companies"`
}

// HealResponse is a diagnosis and whether re-provisioning was requested.
type HealResponse struct {
	CompanyHealth
	HealRequested bool   `json:"heal_requested"`
	WorkflowID    string `json:"workflow_id"`
}

type provisioningHandlers struct{ svc *companies.Service }

func registerProvisioningRoutes(api huma.API, h *provisioningHandlers) {
	huma.Register(api, huma.Operation{OperationID: "provision-company", Method: http.MethodPost, Path: "/companies/{company_id}/provision",
		Tags: []string{"companies"}, Summary: "(Re)start provisioning", Security: bearerSecurity,
		Description: "Starts the provisioning workflow, or joins the one running (never two runs), whatever the company's status. Repeated calls are safe."}, h.provision)
	huma.Register(api, huma.Operation{OperationID: "company-resources", Method: http.MethodGet, Path: "/companies/{company_id}/resources",
		Tags: []string{"companies"}, Summary: "Provisioning status of the repository, database and hosting project", Security: bearerSecurity}, h.resources)
	huma.Register(api, huma.Operation{OperationID: "admin-companies-health", Method: http.MethodGet, Path: "/admin/companies/health",
		Tags: []string{"admin"}, Summary: "Health of every company's resources", Security: bearerSecurity, Metadata: map[string]any{adminOnly: true},
		Description: "Checks that each resource really exists and works (repository readable, database accepts a connection, site answers), not only the recorded status."}, h.health)
	huma.Register(api, huma.Operation{OperationID: "admin-heal-company", Method: http.MethodPost, Path: "/admin/companies/{company_id}/heal",
		Tags: []string{"admin"}, Summary: "Diagnose and re-provision a company", Security: bearerSecurity, Metadata: map[string]any{adminOnly: true},
		Description: "Returns the diagnosis; when something is failed or missing, re-provisions it through the provisioning workflow (signal-with-start)."}, h.heal)
}

type provisionInput struct {
	CompanyID string                   `path:"company_id" format:"uuid"`
	Body      *ProvisionCompanyRequest `required:"false"`
}

type provisionOutput struct{ Body ProvisionTriggerResponse }

func (h *provisioningHandlers) provision(ctx context.Context, in *provisionInput) (*provisionOutput, error) {
	seed := true
	if in.Body != nil && in.Body.SeedRepo != nil {
		seed = *in.Body.SeedRepo
	}
	t, err := h.svc.ProvisionCompany(ctx, in.CompanyID, seed)
	if err != nil {
		return nil, err
	}
	return &provisionOutput{Body: ProvisionTriggerResponse{WorkflowID: t.WorkflowID, RunID: t.RunID}}, nil
}

func toResourceResponse(v companies.ResourceView) CompanyResourceResponse {
	return CompanyResourceResponse{Kind: string(v.Kind), Status: string(v.Status), Ref: v.Ref, ErrorClass: v.ErrorClass, LastError: v.LastError, Attempts: v.Attempts, UpdatedAt: v.UpdatedAt}
}

type resourcesOutput struct{ Body CompanyResourcesResponse }

func (h *provisioningHandlers) resources(ctx context.Context, in *companyIDInput) (*resourcesOutput, error) {
	views, err := h.svc.CompanyResources(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	out := &resourcesOutput{Body: CompanyResourcesResponse{Ready: true}}
	for _, v := range views {
		out.Body.Resources = append(out.Body.Resources, toResourceResponse(v))
		out.Body.Ready = out.Body.Ready && v.Status == "ready"
	}
	return out, nil
}

func toCompanyHealth(d companies.CompanyDiagnosis) CompanyHealth {
	ch := CompanyHealth{CompanyID: d.CompanyID, ConglomerateID: d.ConglomerateID, Handle: d.Handle, Healthy: d.Healthy, Resources: []ResourceHealth{}}
	for _, r := range d.Resources {
		ch.Resources = append(ch.Resources, ResourceHealth{CompanyResourceResponse: toResourceResponse(r.ResourceView), Healthy: r.Healthy, Problem: r.Problem})
	}
	return ch
}

type healthListOutput struct{ Body CompaniesHealthResponse }

func (h *provisioningHandlers) health(ctx context.Context, _ *struct{}) (*healthListOutput, error) {
	ds, err := h.svc.DiagnoseCompanies(ctx)
	if err != nil {
		return nil, err
	}
	out := &healthListOutput{Body: CompaniesHealthResponse{CheckedAt: h.svc.Now(), Companies: make([]CompanyHealth, 0, len(ds))}}
	for _, d := range ds {
		out.Body.Companies = append(out.Body.Companies, toCompanyHealth(d))
		if d.Healthy {
			out.Body.Healthy++
		} else {
			out.Body.Unhealthy++
		}
	}
	return out, nil
}

type healOutput struct{ Body HealResponse }

func (h *provisioningHandlers) heal(ctx context.Context, in *companyIDInput) (*healOutput, error) {
	r, err := h.svc.HealCompany(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	return &healOutput{Body: HealResponse{CompanyHealth: toCompanyHealth(r.CompanyDiagnosis), HealRequested: r.HealRequested, WorkflowID: r.WorkflowID}}, nil
}
