package store

import (
	"context"
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

// CompanySummary is the dashboard's figures of one company that are not
// lists: the account's credits, the file usage, the inbox counts, the
// revenue, the attached domain and the ad campaign.
type CompanySummary struct {
	Credits   AccountCredits
	FileCount int64
	FileBytes int64
	Inbox     models.InboxCounts
	Revenue   models.Revenue
	Domain    *models.DomainPurchase // nil: none attached
	Ads       *models.AdCampaign     // nil: no campaign
}

// CompanySummary reads the summary in one statement: each figure is one
// indexed row (the account, the usage, the domain, the campaign) or one
// aggregate over the company's emails and payments.
func (s Companies) CompanySummary(ctx context.Context, c CompanyScope, dayStart time.Time) (CompanySummary, error) {
	if err := c.check("company summary"); err != nil {
		return CompanySummary{}, err
	}
	var row struct {
		DailyCreditCap                *int64
		Balance                       *int64
		SpentDay                      *time.Time
		SpentToday                    *int64
		FileCount, FileBytes          *int64
		Total, Unread, Received, Sent int64
		Gross, Refunded, Payments     int64
		DomainID                      *string
		Domain                        *string
		DomainState                   *string
		AdCompanyID                   *string
		DailyCap                      *int64
		AdState                       *string
		TotalSpent                    *int64
		TotalClicks                   *int64
		CreativeVersion               *int64
	}
	err := s.db.WithContext(ctx).Raw(`SELECT g.daily_credit_cap, a.balance, a.spent_day, a.spent_today,
		u.file_count, u.bytes AS file_bytes, i.total, i.unread, i.received, i.sent, r.gross, r.refunded, r.payments,
		d.id AS domain_id, d.domain AS domain, d.state AS domain_state,
		ad.company_id AS ad_company_id, ad.daily_cap, ad.state AS ad_state, ad.total_spent, ad.total_clicks, ad.creative_version
		FROM companies c
		LEFT JOIN conglomerates g ON g.id = ?
		LEFT JOIN credit_accounts a ON a.conglomerate_id = g.id
		LEFT JOIN company_file_usage u ON u.company_id = c.id
		CROSS JOIN (SELECT COUNT(*) AS total,
			COALESCE(SUM(CASE WHEN direction = ? AND read_at IS NULL THEN 1 ELSE 0 END), 0) AS unread,
			COALESCE(SUM(CASE WHEN direction = ? THEN 1 ELSE 0 END), 0) AS received,
			COALESCE(SUM(CASE WHEN direction = ? THEN 1 ELSE 0 END), 0) AS sent
			FROM company_emails WHERE company_id = ?) i
		CROSS JOIN (SELECT `+revenueSums+` FROM company_payments WHERE company_id = ? AND currency = ?) r
		LEFT JOIN domain_purchases d ON d.attached_company_id = c.id
		LEFT JOIN ad_campaigns ad ON ad.company_id = c.id
		WHERE c.id = ?`,
		c.conglomerateID, models.EmailInbound, models.EmailInbound, models.EmailOutbound, c.id, c.id, models.SalesCurrency, c.id).
		Take(&row).Error
	if err != nil {
		return CompanySummary{}, wrap("company summary", err)
	}
	out := CompanySummary{Credits: AccountCredits{DailyCreditCap: row.DailyCreditCap},
		Inbox:   models.InboxCounts{Total: row.Total, Unread: row.Unread, Received: row.Received, Sent: row.Sent},
		Revenue: models.NewRevenue(row.Gross, row.Refunded, 0, row.Payments)}
	if row.Balance != nil {
		acct := models.CreditAccount{Balance: *row.Balance}
		if row.SpentDay != nil && row.SpentToday != nil {
			acct.SpentDay, acct.SpentToday = *row.SpentDay, *row.SpentToday
		}
		out.Credits.Balance, out.Credits.SpentToday = acct.Balance, spentOn(acct, dayStart)
	}
	if row.FileCount != nil && row.FileBytes != nil {
		out.FileCount, out.FileBytes = *row.FileCount, *row.FileBytes
	}
	if row.DomainID != nil {
		out.Domain = &models.DomainPurchase{ID: *row.DomainID, Domain: *row.Domain, State: models.DomainState(*row.DomainState), AttachedCompanyID: &c.id}
	}
	if row.AdCompanyID != nil {
		out.Ads = &models.AdCampaign{CompanyID: c.id, ConglomerateID: c.conglomerateID, DailyCap: *row.DailyCap, State: models.AdState(*row.AdState),
			TotalSpent: *row.TotalSpent, TotalClicks: *row.TotalClicks, CreativeVersion: *row.CreativeVersion}
	}
	return out, nil
}
