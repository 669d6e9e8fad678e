package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"holdco/service/companies"
)

// DashboardCredits is the account's credit state as the company page shows it.
type DashboardCredits struct {
	Balance        int64  `json:"balance" doc:"The account's credits (shared by all its companies)."`
	SpentToday     int64  `json:"spent_today" doc:"Credits spent today (UTC) across the account."`
	DailyCreditCap *int64 `json:"daily_credit_cap" doc:"null when the account has no daily cap."`
}

// DashboardResponse is everything the company page needs, in one request.
// Sections that later capabilities fill are null until they exist.
type DashboardResponse struct {
	Company        CompanyResponse           `json:"company"`
	Resources      CompanyResourcesResponse  `json:"resources"`
	Credits        DashboardCredits          `json:"credits"`
	RecentActivity []ActivityEventResponse   `json:"recent_activity" doc:"The ten newest events; GET …/activity pages further."`
	Documents      []DocumentSummaryResponse `json:"documents" doc:"The 20 most recently updated visible documents, without content; GET …/documents lists all."`
	DocumentsTotal int64                     `json:"documents_total" doc:"How many visible documents the company has."`
	Milestones     MilestonesResponse        `json:"milestones"`
	OpenTasks      *[]any                    `json:"open_tasks" doc:"Tasks arrive with agent turns; null until then."`
	LastTurn       *map[string]any           `json:"last_turn" doc:"The company's latest agent turn; null until agent turns exist."`
	Analytics      *map[string]any           `json:"analytics" doc:"Headline of the analytics summary; null until analytics exist."`
	Domain         *map[string]any           `json:"domain" doc:"The attached domain; null until domains exist."`
	Ads            *map[string]any           `json:"ads" doc:"The ad panel's state; null until ads exist."`
}

type dashboardHandlers struct{ svc *companies.Service }

func registerDashboardRoutes(api huma.API, h *dashboardHandlers) {
	huma.Register(api, huma.Operation{OperationID: "get-dashboard", Method: http.MethodGet, Path: "/companies/{company_id}/dashboard",
		Tags: []string{"companies"}, Summary: "Everything the company page shows, in one request", Security: bearerSecurity,
		Description: "Company, resources, the account's credits, recent activity, documents and milestones. " +
			"The number of database queries is fixed, whatever the size of the company's data."}, h.get)
}

type dashboardOutput struct{ Body DashboardResponse }

func (h *dashboardHandlers) get(ctx context.Context, in *companyIDInput) (*dashboardOutput, error) {
	d, err := h.svc.Dashboard(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	res := CompanyResourcesResponse{Ready: d.Ready, Resources: make([]CompanyResourceResponse, 0, len(d.Resources))}
	for _, v := range d.Resources {
		res.Resources = append(res.Resources, toResourceResponse(v))
	}
	return &dashboardOutput{Body: DashboardResponse{
		Company:        toCompanyResponse(d.Company),
		Resources:      res,
		Credits:        DashboardCredits{Balance: d.Credits.Balance, SpentToday: d.Credits.SpentToday, DailyCreditCap: d.Credits.DailyCreditCap},
		RecentActivity: toActivityEvents(d.RecentActivity),
		Documents:      toDocumentSummaries(d.Documents),
		DocumentsTotal: d.DocumentsTotal,
		Milestones:     toMilestones(d.Milestones),
	}}, nil
}
