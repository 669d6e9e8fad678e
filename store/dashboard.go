package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"holdco/models"
)

// AccountCredits is the credit state of a company's account as its pages
// show it.
type AccountCredits struct {
	Balance        int64
	SpentToday     int64
	DailyCreditCap *int64
}

// CompanyAccountCredits reads the balance, today's spend (the UTC day
// starting at dayStart) and the daily cap of the account that owns the
// scope's company, in one query.
func (s Companies) CompanyAccountCredits(ctx context.Context, c CompanyScope, dayStart time.Time) (AccountCredits, error) {
	if err := c.check("company account credits"); err != nil {
		return AccountCredits{}, err
	}
	var row struct {
		DailyCreditCap *int64
		Balance        *int64
		SpentDay       *time.Time
		SpentToday     *int64
	}
	err := s.db.WithContext(ctx).Table("conglomerates AS g").
		Select("g.daily_credit_cap, a.balance, a.spent_day, a.spent_today").
		Joins("LEFT JOIN credit_accounts a ON a.conglomerate_id = g.id").
		Where("g.id = ?", c.conglomerateID).Take(&row).Error
	if err != nil {
		return AccountCredits{}, wrap("company account credits", err)
	}
	out := AccountCredits{DailyCreditCap: row.DailyCreditCap}
	if row.Balance != nil {
		acct := models.CreditAccount{Balance: *row.Balance}
		if row.SpentDay != nil && row.SpentToday != nil {
			acct.SpentDay, acct.SpentToday = *row.SpentDay, *row.SpentToday
		}
		out.Balance, out.SpentToday = acct.Balance, spentOn(acct, dayStart)
	}
	return out, nil
}

// CompanySummary is the dashboard's one-row part of one company: the
// account's credits, the file usage, the inbox counts, the revenue, the
// attached domain, the ad campaign, the provisioning resources, the
// milestones and the headline of the newest turn.
type CompanySummary struct {
	Credits   AccountCredits
	FileCount int64
	FileBytes int64
	Inbox     models.InboxCounts
	Revenue   models.Revenue
	Domain    *models.DomainPurchase // nil: none attached
	Ads       *models.AdCampaign     // nil: no campaign
	// Resources are the company's resource rows (at most one per
	// models.ResourceKinds, in that order; a kind without a row is
	// absent), as ListResources reads them.
	Resources []models.CompanyResource
	// Milestones are the reached ones in the order ListMilestones gives
	// (reached_at, kind).
	Milestones []models.Milestone
	// LastTurn is the headline of the newest turn (LatestTurn's, all
	// statuses): its id, company, trigger, status, question, cost and
	// times; the message, the text and the answer are not read. nil
	// before the first turn.
	LastTurn *models.Turn
}

// CompanySummary reads the summary in one statement: each figure is one
// indexed row (the account, the usage, the domain, the campaign, each
// resource kind, each milestone kind, the newest turn by its index) or
// one aggregate over the company's emails and payments. It is scanned
// with database/sql directly (no reflection per column).
func (s Companies) CompanySummary(ctx context.Context, c CompanyScope, dayStart time.Time) (CompanySummary, error) {
	if err := c.check("company summary"); err != nil {
		return CompanySummary{}, err
	}
	q, args := companySummaryQuery(c)
	rows, err := s.db.WithContext(ctx).Raw(q, args...).Rows()
	if err != nil {
		return CompanySummary{}, wrap("company summary", err)
	}
	defer func() { _ = rows.Close() }()
	var (
		dailyCreditCap, balance, spentToday, fileCount, fileBytes *int64
		spentDay                                                  *time.Time
		total, unread, received, sent, gross, refunded, payments  int64
		domainID, domain, domainState, adCompanyID, adState       *string
		dailyCap, totalSpent, totalClicks, creativeVersion        *int64
		turnID, turnTrigger, turnStatus, turnQuestion             *string
		turnCost                                                  *int64
		turnStarted, turnEnded, turnCreated, turnUpdated          *time.Time
	)
	dest := []any{&dailyCreditCap, &balance, &spentDay, &spentToday, &fileCount, &fileBytes,
		&total, &unread, &received, &sent, &gross, &refunded, &payments,
		&domainID, &domain, &domainState, &adCompanyID, &dailyCap, &adState, &totalSpent, &totalClicks, &creativeVersion,
		&turnID, &turnTrigger, &turnStatus, &turnQuestion, &turnCost, &turnStarted, &turnEnded, &turnCreated, &turnUpdated}
	type resourceCols struct {
		status, ref, lastError *string
		attempts               *int64
		updatedAt              *time.Time
	}
	res := make([]resourceCols, len(models.ResourceKinds))
	for i := range res {
		dest = append(dest, &res[i].status, &res[i].ref, &res[i].lastError, &res[i].attempts, &res[i].updatedAt)
	}
	type milestoneCols struct{ reachedAt, seenAt *time.Time }
	ms := make([]milestoneCols, len(models.MilestoneKinds))
	for i := range ms {
		dest = append(dest, &ms[i].reachedAt, &ms[i].seenAt)
	}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return CompanySummary{}, wrap("company summary", err)
		}
		return CompanySummary{}, wrap("company summary", models.ErrNotFound)
	}
	if err := rows.Scan(dest...); err != nil {
		return CompanySummary{}, wrap("company summary", err)
	}
	if err := rows.Close(); err != nil {
		return CompanySummary{}, wrap("company summary", err)
	}
	out := CompanySummary{Credits: AccountCredits{DailyCreditCap: dailyCreditCap},
		Inbox:      models.InboxCounts{Total: total, Unread: unread, Received: received, Sent: sent},
		Revenue:    models.NewRevenue(gross, refunded, 0, payments),
		Resources:  []models.CompanyResource{},
		Milestones: []models.Milestone{}}
	if balance != nil {
		acct := models.CreditAccount{Balance: *balance}
		if spentDay != nil && spentToday != nil {
			acct.SpentDay, acct.SpentToday = *spentDay, *spentToday
		}
		out.Credits.Balance, out.Credits.SpentToday = acct.Balance, spentOn(acct, dayStart)
	}
	if fileCount != nil && fileBytes != nil {
		out.FileCount, out.FileBytes = *fileCount, *fileBytes
	}
	if domainID != nil {
		out.Domain = &models.DomainPurchase{ID: *domainID, Domain: *domain, State: models.DomainState(*domainState), AttachedCompanyID: &c.id}
	}
	if adCompanyID != nil {
		out.Ads = &models.AdCampaign{CompanyID: c.id, ConglomerateID: c.conglomerateID, DailyCap: *dailyCap, State: models.AdState(*adState),
			TotalSpent: *totalSpent, TotalClicks: *totalClicks, CreativeVersion: *creativeVersion}
	}
	if turnID != nil {
		out.LastTurn = &models.Turn{ID: *turnID, CompanyID: c.id, ConglomerateID: c.conglomerateID, Trigger: models.TurnTrigger(*turnTrigger),
			Status: models.TurnStatus(*turnStatus), Question: *turnQuestion, CreditsCost: turnCost, StartedAt: turnStarted, EndedAt: turnEnded,
			CreatedAt: *turnCreated, UpdatedAt: *turnUpdated}
	}
	for i, kind := range models.ResourceKinds {
		r := res[i]
		if r.status == nil {
			continue
		}
		cr := models.CompanyResource{CompanyID: c.id, Kind: kind, Status: models.ResourceStatus(*r.status), Ref: *r.ref, LastError: *r.lastError,
			Attempts: int(*r.attempts)}
		if r.updatedAt != nil {
			cr.UpdatedAt = *r.updatedAt
		}
		out.Resources = append(out.Resources, cr)
	}
	for i, kind := range models.MilestoneKinds {
		if ms[i].reachedAt != nil {
			out.Milestones = append(out.Milestones, models.Milestone{CompanyID: c.id, Kind: kind, ReachedAt: *ms[i].reachedAt, SeenAt: ms[i].seenAt})
		}
	}
	// ListMilestones's order.
	slices.SortStableFunc(out.Milestones, func(a, b models.Milestone) int {
		if n := a.ReachedAt.Compare(b.ReachedAt); n != 0 {
			return n
		}
		return strings.Compare(string(a.Kind), string(b.Kind))
	})
	return out, nil
}

// companySummaryQuery is CompanySummary's statement: one LEFT JOIN per
// resource kind and per milestone kind (each a primary key lookup), the
// newest turn through its (company_id, created_at) index.
func companySummaryQuery(c CompanyScope) (string, []any) {
	var sel, joins strings.Builder
	var joinArgs []any
	for i, kind := range models.ResourceKinds {
		fmt.Fprintf(&sel, ",\n\t\tr%d.status, r%d.ref, r%d.last_error, r%d.attempts, r%d.updated_at", i, i, i, i, i)
		fmt.Fprintf(&joins, "\n\t\tLEFT JOIN company_resources r%d ON r%d.company_id = c.id AND r%d.kind = ?", i, i, i)
		joinArgs = append(joinArgs, string(kind))
	}
	for i, kind := range models.MilestoneKinds {
		fmt.Fprintf(&sel, ",\n\t\tm%d.reached_at, m%d.seen_at", i, i)
		fmt.Fprintf(&joins, "\n\t\tLEFT JOIN company_milestones m%d ON m%d.company_id = c.id AND m%d.kind = ?", i, i, i)
		joinArgs = append(joinArgs, string(kind))
	}
	q := `SELECT g.daily_credit_cap, a.balance, a.spent_day, a.spent_today,
		u.file_count, u.bytes, i.total, i.unread, i.received, i.sent, r.gross, r.refunded, r.payments,
		d.id, d.domain, d.state,
		ad.company_id, ad.daily_cap, ad.state, ad.total_spent, ad.total_clicks, ad.creative_version,
		t.id, t."trigger", t.status, t.question, t.credits_cost, t.started_at, t.ended_at, t.created_at, t.updated_at` + sel.String() + `
		FROM companies c
		LEFT JOIN conglomerates g ON g.id = ?
		LEFT JOIN credit_accounts a ON a.conglomerate_id = g.id
		LEFT JOIN company_file_usage u ON u.company_id = c.id
		CROSS JOIN (SELECT COUNT(*) AS total,
			COALESCE(SUM(CASE WHEN direction = ? AND read_at IS NULL THEN 1 ELSE 0 END), 0) AS unread,
			COALESCE(SUM(CASE WHEN direction = ? THEN 1 ELSE 0 END), 0) AS received,
			COALESCE(SUM(CASE WHEN direction = ? THEN 1 ELSE 0 END), 0) AS sent
			FROM company_emails WHERE company_id = ?) i
		CROSS JOIN (SELECT ` + revenueSums + ` FROM company_payments WHERE company_id = ? AND currency = ?) r
		LEFT JOIN domain_purchases d ON d.attached_company_id = c.id
		LEFT JOIN ad_campaigns ad ON ad.company_id = c.id
		LEFT JOIN turns t ON t.id = (SELECT id FROM turns WHERE company_id = ? ORDER BY created_at DESC, id DESC LIMIT 1)` + joins.String() + `
		WHERE c.id = ?`
	args := []any{c.conglomerateID, models.EmailInbound, models.EmailInbound, models.EmailOutbound, c.id, c.id, models.SalesCurrency, c.id}
	args = append(args, joinArgs...)
	return q, append(args, c.id)
}
