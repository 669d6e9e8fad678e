package companies

import (
	"context"
	"time"

	"holdco/models"
	"holdco/service/analytics"
	"holdco/store"
)

// AnalyticsHeadline tells which days the dashboard's analytics headline
// sums, once the events this process acknowledged are folded into the
// rollups (service/analytics).
type AnalyticsHeadline interface {
	HeadlineDays(ctx context.Context) store.HeadlineDays
}

// The dashboard's lists are bounded: the newest events and the most
// recently updated documents (with the total), the rest paged elsewhere.
const (
	DashboardActivity  = 10
	DashboardDocuments = 20
	DashboardOpenTasks = 20
)

// Dashboard is everything the company page shows, read in one request
// with a fixed number of queries whatever the size of the company's data:
// one for the company and everything that is one row or a fixed number of
// rows (store.Companies.AuthorizeCompanySummary: the authorization step's row, the
// figures, the resources, the milestones, the last turn's headline, the
// analytics headline's sums), one for the three lists
// (store.DashboardLists: activity, documents, open tasks), both sent in
// one round trip on Postgres (store.Companies.AuthorizeCompanyDashboard).
// Sections that later capabilities fill (the last turn, analytics,
// domain, ads) are nil until they exist.
type Dashboard struct {
	Company        models.Company
	Resources      []ResourceView
	Ready          bool
	Credits        store.AccountCredits
	RecentActivity []models.ActivityEvent
	Documents      []models.DocumentSummary
	DocumentsMore  bool
	Milestones     Milestones
	FileCount      int64
	FileBytes      int64
	Inbox          models.InboxCounts
	Revenue        models.Revenue
	OpenTasks      []models.Task
	// LastTurn is the headline of the company's newest agent turn (its
	// id, status, trigger, question, cost and times; not its message,
	// text or answer); nil before its first.
	LastTurn *models.Turn
	// Analytics is the headline of the analytics summary (default range);
	// nil when the process has no analytics.
	Analytics *analytics.Headline
	// Domain is the company's attached domain and Ads its ad campaign
	// (nil: none).
	Domain *models.DomainPurchase
	Ads    *models.AdCampaign
}

// Dashboard reads the company page in one go.
func (s *Service) Dashboard(ctx context.Context, companyID string) (Dashboard, error) {
	// The authorization and the one-row part in one statement (the
	// company, credits, files, inbox, revenue, domain, ads, resources,
	// milestones, the last turn and the analytics headline's sums), the
	// three lists in another (activity, documents, open tasks); one round
	// trip on Postgres.
	var days store.HeadlineDays
	if s.analytics != nil {
		days = s.analytics.HeadlineDays(ctx)
	}
	c, sum, lists, err := s.core.AuthorizeCompanyDashboard(ctx, companyID, s.now().UTC().Truncate(24*time.Hour), days,
		DashboardActivity, DashboardDocuments, DashboardOpenTasks)
	if err != nil {
		return Dashboard{}, err
	}
	d := Dashboard{Company: c.Company, Resources: resourceViewsOf(sum.Resources), Ready: true, Milestones: ShelfOf(sum.Milestones),
		LastTurn: sum.LastTurn}
	for i := range d.Resources {
		d.Resources[i] = tenantView(d.Resources[i])
		d.Ready = d.Ready && d.Resources[i].Status == models.ResourceReady
	}
	d.Credits, d.FileCount, d.FileBytes, d.Inbox, d.Revenue = sum.Credits, sum.FileCount, sum.FileBytes, sum.Inbox, sum.Revenue
	d.Domain, d.Ads = sum.Domain, sum.Ads
	d.RecentActivity, d.Documents, d.DocumentsMore, d.OpenTasks = lists.Activity, lists.Documents, lists.DocumentsMore, lists.OpenTasks
	if s.analytics != nil {
		h := analytics.HeadlineOf(sum.AnalyticsCur, sum.AnalyticsPrev)
		d.Analytics = &h
	}
	return d, nil
}
