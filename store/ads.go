package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// Ad campaigns: one per company.

// AdCampaign reads the scope's company's campaign; a company that never
// set a cap has none (models.ErrNotFound).
func (s Growth) AdCampaign(ctx context.Context, c CompanyScope) (models.AdCampaign, error) {
	var a models.AdCampaign
	if err := c.check("ad campaign"); err != nil {
		return a, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ?", c.id).Take(&a).Error
	return a, wrap("ad campaign", err)
}

// UpdateAdCampaign creates the scope's company's campaign when it has
// none, then lets change modify it (in one transaction, the row locked on
// Postgres) and stores it with the activity events change returns. An
// error of change rolls back and is returned unchanged.
func (s Growth) UpdateAdCampaign(ctx context.Context, c CompanyScope, change func(a *models.AdCampaign) ([]models.ActivityInput, error)) (models.AdCampaign, error) {
	var a models.AdCampaign
	if err := c.check("update ad campaign"); err != nil {
		return a, err
	}
	var changeErr error
	err := s.store().InTx(ctx, func(tx *Store) error {
		at := now()
		fresh := models.AdCampaign{CompanyID: c.id, ConglomerateID: c.conglomerateID, State: models.AdPaused, CreatedAt: at, UpdatedAt: at, StateChangedAt: at}
		if err := tx.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&fresh).Error; err != nil {
			return err
		}
		q := tx.db.Where("company_id = ?", c.id)
		if tx.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Take(&a).Error; err != nil {
			return err
		}
		before := a.State
		events, err := change(&a)
		if err != nil {
			changeErr = err
			return err
		}
		a.CompanyID, a.ConglomerateID, a.UpdatedAt = c.id, c.conglomerateID, at
		if a.State != before {
			a.StateChangedAt = at
		}
		if err := tx.db.Save(&a).Error; err != nil {
			return err
		}
		for _, ev := range events {
			if err := tx.recordActivityAt(ctx, c.id, ev, at); err != nil {
				return err
			}
		}
		return nil
	})
	if changeErr != nil {
		return a, changeErr
	}
	return a, wrap("update ad campaign", err)
}

// ClearAdReconcilePending clears the outbox mark of the campaign, unless it
// changed since updatedAt (that change's own signal clears it).
func (s Growth) ClearAdReconcilePending(ctx context.Context, c CompanyScope, updatedAt time.Time) error {
	if err := c.check("clear ad reconcile"); err != nil {
		return err
	}
	return wrap("clear ad reconcile", s.db.WithContext(ctx).Model(&models.AdCampaign{}).
		Where("company_id = ? AND updated_at = ?", c.id, updatedAt).Update("reconcile_pending", false).Error)
}

// PendingAdCampaign is a campaign whose reconciler was not signalled
// after its last change.
type PendingAdCampaign struct {
	Campaign models.AdCampaign
	Scope    CompanyScope
}

// PendingAdReconciles returns campaigns changed before the time whose
// reconciler signal a crash lost.
func (s Growth) PendingAdReconciles(ctx context.Context, before time.Time, limit int) ([]PendingAdCampaign, error) {
	var rows []models.AdCampaign
	err := s.db.WithContext(ctx).Where("reconcile_pending AND updated_at < ?", before).Order("updated_at, company_id").Limit(limit).Find(&rows).Error
	out := make([]PendingAdCampaign, 0, len(rows))
	for _, a := range rows {
		out = append(out, PendingAdCampaign{Campaign: a, Scope: CompanyScope{id: a.CompanyID, conglomerateID: a.ConglomerateID}})
	}
	return out, wrap("pending ad reconciles", err)
}

// wakeStalledCampaigns marks the account's campaigns waiting for credits
// (INSUFFICIENT_CREDITS with a positive cap) to be reconciled again, in
// the transaction of the grant that gave it credits, and returns them.
// The mark is the campaign's outbox: the growth sweeper signals the
// reconcilers of marks the granting process did not signal (it built no
// Temporal client, or crashed after the commit).
func wakeStalledCampaigns(tx *gorm.DB, conglomerateID string) ([]PendingAdCampaign, error) {
	at := now()
	stalled := tx.Model(&models.AdCampaign{}).Where("conglomerate_id = ? AND state = ? AND daily_cap > 0", conglomerateID, models.AdInsufficientCredits)
	res := stalled.Updates(map[string]any{"reconcile_pending": true, "updated_at": at})
	if res.Error != nil || res.RowsAffected == 0 {
		return nil, res.Error
	}
	var rows []models.AdCampaign
	if err := tx.Where("conglomerate_id = ? AND state = ? AND reconcile_pending AND updated_at = ?", conglomerateID, models.AdInsufficientCredits, at).
		Order("company_id").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]PendingAdCampaign, 0, len(rows))
	for _, a := range rows {
		out = append(out, PendingAdCampaign{Campaign: a, Scope: CompanyScope{id: a.CompanyID, conglomerateID: a.ConglomerateID}})
	}
	return out, nil
}

// CompanyGrowth reads, in one query, the scope's company's attached domain
// and its ad campaign (each nil when none) with the fields the dashboard
// shows.
func (s Growth) CompanyGrowth(ctx context.Context, c CompanyScope) (*models.DomainPurchase, *models.AdCampaign, error) {
	if err := c.check("company growth"); err != nil {
		return nil, nil, err
	}
	var row struct {
		DomainID        *string
		Domain          *string
		DomainState     *string
		AdCompanyID     *string
		DailyCap        *int64
		AdState         *string
		TotalSpent      *int64
		TotalClicks     *int64
		CreativeVersion *int64
	}
	err := s.db.WithContext(ctx).Table("companies AS c").
		Select("d.id AS domain_id, d.domain AS domain, d.state AS domain_state, a.company_id AS ad_company_id, a.daily_cap, a.state AS ad_state, "+
			"a.total_spent, a.total_clicks, a.creative_version").
		Joins("LEFT JOIN domain_purchases d ON d.attached_company_id = c.id").
		Joins("LEFT JOIN ad_campaigns a ON a.company_id = c.id").
		Where("c.id = ?", c.id).Take(&row).Error
	if err != nil {
		return nil, nil, wrap("company growth", err)
	}
	var d *models.DomainPurchase
	if row.DomainID != nil {
		d = &models.DomainPurchase{ID: *row.DomainID, Domain: *row.Domain, State: models.DomainState(*row.DomainState), AttachedCompanyID: &c.id}
	}
	var a *models.AdCampaign
	if row.AdCompanyID != nil {
		a = &models.AdCampaign{CompanyID: c.id, ConglomerateID: c.conglomerateID, DailyCap: *row.DailyCap, State: models.AdState(*row.AdState),
			TotalSpent: *row.TotalSpent, TotalClicks: *row.TotalClicks, CreativeVersion: *row.CreativeVersion}
	}
	return d, a, nil
}
