package store

import (
	"context"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// A company's own sales: products, its customers' payments and
// subscriptions, and the revenue they add up to.

// CreateProduct stores a product of the scope's company: a pending one
// (written before the provider creates it, so the provider's objects are
// keyed by its id) or one the provider created.
func (s Sales) CreateProduct(ctx context.Context, sc CompanyScope, p models.Product) (models.Product, error) {
	if err := sc.check("create product"); err != nil {
		return models.Product{}, err
	}
	p.CompanyID, p.ConglomerateID = sc.id, sc.conglomerateID
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now()
	}
	if err := s.db.WithContext(ctx).Create(&p).Error; err != nil {
		return models.Product{}, wrap("create product", err)
	}
	return p, nil
}

// ListProducts returns the company's products, newest first.
func (s Sales) ListProducts(ctx context.Context, sc CompanyScope) ([]models.Product, error) {
	if err := sc.check("list products"); err != nil {
		return nil, err
	}
	ps := []models.Product{}
	err := s.db.WithContext(ctx).Where("company_id = ? AND NOT pending", sc.id).Order("created_at DESC, id DESC").Find(&ps).Error
	return ps, wrap("list products", err)
}

// PendingProduct finds a pending product of the company with the same
// account, name, description, price and interval (a create that did not
// finish), or models.ErrNotFound.
func (s Sales) PendingProduct(ctx context.Context, sc CompanyScope, like models.Product) (models.Product, error) {
	if err := sc.check("pending product"); err != nil {
		return models.Product{}, err
	}
	var p models.Product
	err := s.db.WithContext(ctx).Where(map[string]any{"company_id": sc.id, "pending": true, "provider_account_id": like.ProviderAccountID,
		"name": like.Name, "description": like.Description, "price_cents": like.PriceCents, "currency": like.Currency,
		"interval": like.Interval}).Order("created_at, id").Take(&p).Error
	return p, wrap("pending product", err)
}

// ActivateProduct records the provider's product and price of a pending
// product: it is sold from then on.
func (s Sales) ActivateProduct(ctx context.Context, sc CompanyScope, id, providerProductID, providerPriceID string) (models.Product, error) {
	if err := sc.check("activate product"); err != nil {
		return models.Product{}, err
	}
	err := s.db.WithContext(ctx).Model(&models.Product{}).Where("id = ? AND company_id = ? AND pending", id, sc.id).
		Updates(map[string]any{"provider_product_id": providerProductID, "provider_price_id": providerPriceID, "pending": false, "active": true}).Error
	if err != nil {
		return models.Product{}, wrap("activate product", err)
	}
	return s.GetProduct(ctx, sc, id)
}

// GetProduct reads one of the company's products; a product of another
// company is models.ErrNotFound.
func (s Sales) GetProduct(ctx context.Context, sc CompanyScope, id string) (models.Product, error) {
	if err := sc.check("get product"); err != nil {
		return models.Product{}, err
	}
	var p models.Product
	err := s.db.WithContext(ctx).Where("id = ? AND company_id = ? AND NOT pending", id, sc.id).Take(&p).Error
	return p, wrap("get product", err)
}

// ProductByID is one of the company's products, a pending one too (a
// keyed create finds the row its call made, complete or not).
func (s Sales) ProductByID(ctx context.Context, sc CompanyScope, id string) (models.Product, error) {
	if err := sc.check("product by id"); err != nil {
		return models.Product{}, err
	}
	var p models.Product
	err := s.db.WithContext(ctx).Where("id = ? AND company_id = ?", id, sc.id).Take(&p).Error
	return p, wrap("product by id", err)
}

// DeactivateProduct marks one of the company's products no longer sold.
func (s Sales) DeactivateProduct(ctx context.Context, sc CompanyScope, id string) error {
	if err := sc.check("deactivate product"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Model(&models.Product{}).Where("id = ? AND company_id = ?", id, sc.id).Update("active", false).Error
	return wrap("deactivate product", err)
}

// RecordCompanyPayment records a payment of the company's customer once:
// the provider's payment id is unique, and the insert does nothing when it
// is there already (a replayed event, or a second event reporting the same
// payment). inserted says whether this call recorded it.
func (s Sales) RecordCompanyPayment(ctx context.Context, sc CompanyScope, p models.CompanyPayment) (inserted bool, err error) {
	if err := sc.check("record company payment"); err != nil {
		return false, err
	}
	p.CompanyID, p.ConglomerateID = sc.id, sc.conglomerateID
	if p.CreatedAt.IsZero() {
		p.CreatedAt = now()
	}
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "provider_payment_id"}}, DoNothing: true}).Create(&p)
	if res.Error != nil {
		return false, wrap("record company payment", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// SetPaymentRefunded raises the refunded total of one of the company's
// payments to refundedTotal (capped at the amount paid) and returns by how
// much it rose: 0 when the stored total is already as high (a replayed or
// out-of-order refund event). The row is locked while it is compared, so
// two refund events racing each other add up to the higher total, never
// to their sum. A payment the company did not record is
// models.ErrNotFound.
func (s Sales) SetPaymentRefunded(ctx context.Context, sc CompanyScope, providerPaymentID string, refundedTotal int64) (int64, models.CompanyPayment, error) {
	if err := sc.check("set payment refunded"); err != nil {
		return 0, models.CompanyPayment{}, err
	}
	var delta int64
	var p models.CompanyPayment
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		q := tx.Where("provider_payment_id = ? AND company_id = ?", providerPaymentID, sc.id)
		if s.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Take(&p).Error; err != nil {
			return err
		}
		total := min(refundedTotal, p.AmountCents)
		if total <= p.RefundedCents {
			return nil
		}
		delta, p.RefundedCents = total-p.RefundedCents, total
		return tx.Model(&models.CompanyPayment{}).Where("id = ?", p.ID).Update("refunded_cents", total).Error
	})
	return delta, p, wrap("set payment refunded", err)
}

// ListCompanyPayments returns the company's latest payments, newest
// first.
func (s Sales) ListCompanyPayments(ctx context.Context, sc CompanyScope, limit int) ([]models.CompanyPayment, error) {
	if err := sc.check("list company payments"); err != nil {
		return nil, err
	}
	ps := []models.CompanyPayment{}
	err := s.db.WithContext(ctx).Where("company_id = ?", sc.id).Order("paid_at DESC, id DESC").Limit(limit).Find(&ps).Error
	return ps, wrap("list company payments", err)
}

// revenueRow is one company's sums.
type revenueRow struct {
	CompanyID string
	Gross     int64
	Refunded  int64
	Payments  int64
}

const revenueSums = "COALESCE(SUM(amount_cents), 0) AS gross, COALESCE(SUM(refunded_cents), 0) AS refunded, COUNT(*) AS payments"

// CompanyRevenue is the company's revenue in one query: payments in the
// sales currency, net of refunds. There are no withdrawals yet, so the
// balance is the lifetime earnings.
func (s Sales) CompanyRevenue(ctx context.Context, sc CompanyScope) (models.Revenue, error) {
	if err := sc.check("company revenue"); err != nil {
		return models.Revenue{}, err
	}
	var r revenueRow
	err := s.db.WithContext(ctx).Model(&models.CompanyPayment{}).Select(revenueSums).
		Where("company_id = ? AND currency = ?", sc.id, models.SalesCurrency).Scan(&r).Error
	if err != nil {
		return models.Revenue{}, wrap("company revenue", err)
	}
	return models.NewRevenue(r.Gross, r.Refunded, 0, r.Payments), nil
}

// CompaniesRevenue is the revenue of several companies of the
// conglomerate in one query, by company id; a company without payments
// (or of another conglomerate) has a zero revenue.
func (s Sales) CompaniesRevenue(ctx context.Context, cong ConglomerateScope, companyIDs []string) (map[string]models.Revenue, error) {
	if err := cong.check("companies revenue"); err != nil {
		return nil, err
	}
	out := make(map[string]models.Revenue, len(companyIDs))
	for _, id := range companyIDs {
		out[id] = models.NewRevenue(0, 0, 0, 0)
	}
	if len(companyIDs) == 0 {
		return out, nil
	}
	var rows []revenueRow
	err := s.db.WithContext(ctx).Model(&models.CompanyPayment{}).Select("company_id, "+revenueSums).
		Where("conglomerate_id = ? AND company_id IN ? AND currency = ?", cong.id, companyIDs, models.SalesCurrency).
		Group("company_id").Scan(&rows).Error
	if err != nil {
		return nil, wrap("companies revenue", err)
	}
	for _, r := range rows {
		out[r.CompanyID] = models.NewRevenue(r.Gross, r.Refunded, 0, r.Payments)
	}
	return out, nil
}

// SubscriptionChange says which once-only transitions an update made.
type SubscriptionChange struct {
	Started  bool // first seen active or trialing
	Canceled bool // first seen canceled
}

// subscriptionLive: the states in which a customer has what they pay for.
func subscriptionLive(status string) bool {
	return status == models.SubscriptionActive || status == models.SubscriptionTrialing
}

// UpsertCustomerSubscription records a subscription's state as of
// sub.ProviderUpdatedAt. An older state than the stored one changes
// nothing (events arrive out of order); a canceled subscription stays
// canceled. StartedAt and CanceledAt are set once, and the change says
// whether this call set them. A subscription recorded for another company
// is models.ErrNotFound.
func (s Sales) UpsertCustomerSubscription(ctx context.Context, sc CompanyScope, sub models.CustomerSubscription) (SubscriptionChange, models.CustomerSubscription, error) {
	var ch SubscriptionChange
	if err := sc.check("upsert customer subscription"); err != nil {
		return ch, sub, err
	}
	at := sub.ProviderUpdatedAt
	sub.CompanyID, sub.ConglomerateID = sc.id, sc.conglomerateID
	sub.CreatedAt, sub.UpdatedAt = now(), now()
	sub.StartedAt, sub.CanceledAt = nil, nil
	if subscriptionLive(sub.Status) {
		sub.StartedAt = &at
	}
	if sub.Status == models.SubscriptionCanceled {
		sub.CanceledAt = &at
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "provider_subscription_id"}}, DoNothing: true}).Create(&sub)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 1 {
			ch = SubscriptionChange{Started: sub.StartedAt != nil, Canceled: sub.CanceledAt != nil}
			return nil
		}
		q := tx.Where("provider_subscription_id = ? AND company_id = ?", sub.ProviderSubscriptionID, sc.id)
		if s.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		var cur models.CustomerSubscription
		if err := q.Take(&cur).Error; err != nil {
			return err
		}
		if at.Before(cur.ProviderUpdatedAt) {
			sub = cur
			return nil
		}
		cols := map[string]any{"status": sub.Status, "current_period_end": sub.CurrentPeriodEnd, "cancel_at_period_end": sub.CancelAtPeriodEnd,
			"provider_updated_at": at, "updated_at": now()}
		if sub.ProductID != "" {
			cols["product_id"] = sub.ProductID
		}
		if cur.CanceledAt != nil {
			cols["status"] = models.SubscriptionCanceled
		}
		if cur.StartedAt == nil && subscriptionLive(sub.Status) && cur.CanceledAt == nil {
			cols["started_at"], ch.Started = at, true
		}
		if cur.CanceledAt == nil && sub.Status == models.SubscriptionCanceled {
			cols["canceled_at"], ch.Canceled = at, true
		}
		if err := tx.Model(&models.CustomerSubscription{}).Where("id = ?", cur.ID).Updates(cols).Error; err != nil {
			return err
		}
		var updated models.CustomerSubscription
		err := tx.Where("id = ?", cur.ID).Take(&updated).Error
		sub = updated
		return err
	})
	return ch, sub, wrap("upsert customer subscription", err)
}

// ListCustomerSubscriptions returns the company's customers'
// subscriptions, newest first.
func (s Sales) ListCustomerSubscriptions(ctx context.Context, sc CompanyScope) ([]models.CustomerSubscription, error) {
	if err := sc.check("list customer subscriptions"); err != nil {
		return nil, err
	}
	subs := []models.CustomerSubscription{}
	err := s.db.WithContext(ctx).Where("company_id = ?", sc.id).Order("created_at DESC, id DESC").Find(&subs).Error
	return subs, wrap("list customer subscriptions", err)
}

// GetCustomerSubscription reads one of the company's customers'
// subscriptions by holdco's id or the provider's; any other is
// models.ErrNotFound.
func (s Sales) GetCustomerSubscription(ctx context.Context, sc CompanyScope, id string) (models.CustomerSubscription, error) {
	if err := sc.check("get customer subscription"); err != nil {
		return models.CustomerSubscription{}, err
	}
	var sub models.CustomerSubscription
	err := s.db.WithContext(ctx).Where("company_id = ? AND (id = ? OR provider_subscription_id = ?)", sc.id, id, id).Take(&sub).Error
	return sub, wrap("get customer subscription", err)
}
