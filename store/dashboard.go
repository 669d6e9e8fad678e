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
func (s *Store) CompanyAccountCredits(ctx context.Context, c CompanyScope, dayStart time.Time) (AccountCredits, error) {
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
