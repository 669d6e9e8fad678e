package api

import (
	"time"

	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/files"
	"holdco/service/mail"
)

// DashboardCredits is the account's credit state as the company page shows it.
type DashboardCredits struct {
	Balance        int64  `json:"balance" doc:"The account's credits (shared by all its companies)."`
	SpentToday     int64  `json:"spent_today" doc:"Credits spent today (UTC) across the account."`
	DailyCreditCap *int64 `json:"daily_credit_cap" doc:"null when the account has no daily cap."`
}

// DashboardFiles is the company's file usage and limits.
type DashboardFiles struct {
	FileCount    int64 `json:"file_count"`
	UsedBytes    int64 `json:"used_bytes"`
	QuotaBytes   int64 `json:"quota_bytes"`
	MaxFileBytes int64 `json:"max_file_bytes"`
}

// DashboardInbox is the company inbox's address and counts.
type DashboardInbox struct {
	Address  string `json:"address" format:"email"`
	Total    int64  `json:"total"`
	Unread   int64  `json:"unread" doc:"Received messages not opened yet."`
	Received int64  `json:"received"`
	Sent     int64  `json:"sent"`
}

// DashboardRevenue is what the company's own customers paid it.
type DashboardRevenue struct {
	Currency              string `json:"currency" doc:"Empty until the first payment."`
	BalanceCents          int64  `json:"balance_cents" doc:"The company's own balance: lifetime earnings minus withdrawals."`
	LifetimeEarningsCents int64  `json:"lifetime_earnings_cents" doc:"Payments net of refunds."`
	RefundedCents         int64  `json:"refunded_cents"`
	Payments              int64  `json:"payments"`
}

// DashboardResponse is everything the company page needs, in one request.
// Sections that later capabilities fill are null until they exist.
type DashboardResponse struct {
	Company        CompanyResponse           `json:"company"`
	Resources      CompanyResourcesResponse  `json:"resources"`
	Credits        DashboardCredits          `json:"credits"`
	RecentActivity []ActivityEventResponse   `json:"recent_activity" doc:"The ten newest events; GET …/activity pages further."`
	Documents      []DocumentSummaryResponse `json:"documents" doc:"The 20 most recently updated visible documents, without content; GET …/documents lists all."`
	DocumentsMore  bool                      `json:"documents_more" doc:"true when the company has more visible documents than listed here."`
	Milestones     MilestonesResponse        `json:"milestones"`
	Files          DashboardFiles            `json:"files"`
	Inbox          DashboardInbox            `json:"inbox"`
	Revenue        DashboardRevenue          `json:"revenue"`
	OpenTasks      []TaskResponse            `json:"open_tasks" doc:"Up to 20 pending, dispatched or running tasks, newest first."`
	LastTurn       *DashboardTurn            `json:"last_turn" doc:"The company's latest agent turn; null before its first."`
	Analytics      *DashboardAnalytics       `json:"analytics" doc:"Headline of the analytics summary (30d); GET …/analytics/summary has the rest."`
	Domain         *DashboardDomain          `json:"domain" doc:"The attached domain; null when none."`
	Ads            *DashboardAds             `json:"ads" doc:"The ad campaign's headline; null before a cap was first set. GET …/meta-ads has the whole panel."`
}

// DashboardDomain is the company's attached domain.
type DashboardDomain struct {
	DomainPurchaseID string `json:"domain_purchase_id" format:"uuid"`
	Domain           string `json:"domain"`
	Status           string `json:"status" enum:"registered"`
}

// DashboardAds is the ad campaign's headline.
type DashboardAds struct {
	DailyCap    int64  `json:"daily_cap"`
	State       string `json:"state" enum:"PAUSED,PENDING,ACTIVE,INSUFFICIENT_CREDITS"`
	TotalSpent  int64  `json:"total_spent" doc:"Credits spent by closed days."`
	TotalClicks int64  `json:"total_clicks"`
	HasCreative bool   `json:"has_creative"`
}

func toDashboardGrowth(d *models.DomainPurchase, a *models.AdCampaign) (*DashboardDomain, *DashboardAds) {
	var dom *DashboardDomain
	if d != nil {
		dom = &DashboardDomain{DomainPurchaseID: d.ID, Domain: d.Domain, Status: string(d.State)}
	}
	var ads *DashboardAds
	if a != nil {
		ads = &DashboardAds{DailyCap: a.DailyCap, State: string(a.State), TotalSpent: a.TotalSpent, TotalClicks: a.TotalClicks, HasCreative: a.CreativeVersion > 0}
	}
	return dom, ads
}

// DashboardTurn is the headline of the company's latest turn (GET
// /turns/{turn_id} has the whole of it).
type DashboardTurn struct {
	TurnID      string     `json:"turn_id" format:"uuid"`
	Status      string     `json:"status" enum:"queued,running,waiting,completed,failed,interrupted"`
	Trigger     string     `json:"trigger" enum:"message,task,schedule,first_pass"`
	Question    *string    `json:"question" doc:"The agent's question while the turn waits for an answer."`
	CreditsCost *int64     `json:"credits_cost" doc:"null until the turn ended."`
	CreatedAt   time.Time  `json:"created_at"`
	EndedAt     *time.Time `json:"ended_at"`
}

func toDashboardTurn(t *models.Turn) *DashboardTurn {
	if t == nil {
		return nil
	}
	d := &DashboardTurn{TurnID: t.ID, Status: string(t.Status), Trigger: string(t.Trigger), CreatedAt: t.CreatedAt, EndedAt: t.EndedAt}
	if t.Question != "" {
		d.Question = &t.Question
	}
	if !t.Status.Active() {
		d.CreditsCost = t.CreditsCost
	}
	return d
}

type dashboardHandlers struct {
	svc   *companies.Service
	files *files.Service // limits only
	mail  *mail.Service  // the inbox address only
}

func registerDashboardRoutes(api huma.API, h *dashboardHandlers) {
	huma.Register(api, huma.Operation{OperationID: "get-dashboard", Method: http.MethodGet, Path: "/companies/{company_id}/dashboard",
		Tags: []string{"companies"}, Summary: "Everything the company page shows, in one request", Security: bearerSecurity,
		Description: "Company, resources, the account's credits, recent activity, documents, milestones, file usage, the inbox and revenue. " +
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
	domain, ads := toDashboardGrowth(d.Domain, d.Ads)
	return &dashboardOutput{Body: DashboardResponse{
		Domain:         domain,
		Ads:            ads,
		Company:        toCompanyResponse(d.Company),
		Resources:      res,
		Credits:        DashboardCredits{Balance: d.Credits.Balance, SpentToday: d.Credits.SpentToday, DailyCreditCap: d.Credits.DailyCreditCap},
		RecentActivity: toActivityEvents(d.RecentActivity),
		Documents:      toDocumentSummaries(d.Documents),
		DocumentsMore:  d.DocumentsMore,
		Milestones:     toMilestones(d.Milestones),
		OpenTasks:      toTaskResponses(d.OpenTasks),
		LastTurn:       toDashboardTurn(d.LastTurn),
		Analytics:      toDashboardAnalytics(d.Analytics),
		Files: DashboardFiles{FileCount: d.FileCount, UsedBytes: d.FileBytes, QuotaBytes: h.files.Limits().QuotaBytes,
			MaxFileBytes: h.files.Limits().MaxFileBytes},
		Inbox: DashboardInbox{Address: h.mail.Address(d.Company.Handle), Total: d.Inbox.Total, Unread: d.Inbox.Unread,
			Received: d.Inbox.Received, Sent: d.Inbox.Sent},
		Revenue: DashboardRevenue{Currency: d.Revenue.Currency, BalanceCents: d.Revenue.BalanceCents,
			LifetimeEarningsCents: d.Revenue.LifetimeEarningsCents, RefundedCents: d.Revenue.RefundedCents, Payments: d.Revenue.Payments},
	}}, nil
}

func toTaskResponses(ts []models.Task) []TaskResponse {
	out := make([]TaskResponse, 0, len(ts))
	for _, t := range ts {
		out = append(out, toTaskResponse(t))
	}
	return out
}
