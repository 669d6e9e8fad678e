package store

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// Domain purchases: the conglomerate's domain pool.

// CreateDomainPurchase stores a new purchase of the scope's company (its
// conglomerate's pool), awaiting payment.
func (s Growth) CreateDomainPurchase(ctx context.Context, c CompanyScope, p models.DomainPurchase) (models.DomainPurchase, error) {
	if err := c.check("create domain purchase"); err != nil {
		return p, err
	}
	p.CompanyID, p.ConglomerateID = c.id, c.conglomerateID
	if p.ID == "" {
		p.ID = uuid.NewString()
	}
	p.CreatedAt, p.UpdatedAt = now(), now()
	if p.State == "" {
		p.State = models.DomainAwaitingPayment
	}
	return p, wrap("create domain purchase", s.db.WithContext(ctx).Create(&p).Error)
}

// SetDomainCheckout records the payment provider's checkout session id
// and when the unpaid checkout expires.
func (s Growth) SetDomainCheckout(ctx context.Context, c CompanyScope, id, checkoutID string, expiresAt time.Time) error {
	if err := c.check("set domain checkout"); err != nil {
		return err
	}
	return wrap("set domain checkout", s.db.WithContext(ctx).Model(&models.DomainPurchase{}).
		Where("id = ? AND conglomerate_id = ?", id, c.conglomerateID).
		Updates(map[string]any{"checkout_id": checkoutID, "expires_at": expiresAt.UTC(), "updated_at": now()}).Error)
}

// DomainPurchaseOf reads a purchase for the scope's company: one of
// another conglomerate is ErrForbidden (it exists, but is another
// account's), a missing one models.ErrNotFound. Whether the company may
// see it (the visibility rule) is the caller's decision.
func (s Growth) DomainPurchaseOf(ctx context.Context, c CompanyScope, id string) (models.DomainPurchase, error) {
	var p models.DomainPurchase
	if err := c.check("domain purchase"); err != nil {
		return p, err
	}
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&p).Error; err != nil {
		return p, wrap("domain purchase", err)
	}
	if p.ConglomerateID != c.conglomerateID {
		return models.DomainPurchase{}, ErrForbidden
	}
	return p, nil
}

// DomainPurchaseInPool reads a purchase of the scope's conglomerate (the
// worker and the payment confirmation, which hold the conglomerate).
func (s Growth) DomainPurchaseInPool(ctx context.Context, cong ConglomerateScope, id string) (models.DomainPurchase, error) {
	var p models.DomainPurchase
	if err := cong.check("domain purchase in pool"); err != nil {
		return p, err
	}
	err := s.db.WithContext(ctx).Where("id = ? AND conglomerate_id = ?", id, cong.id).Take(&p).Error
	return p, wrap("domain purchase in pool", err)
}

// DomainPool lists the purchases the scope's company sees: the one
// attached to it, the parked ones of its conglomerate and the ones bought
// from it (any state), newest first.
func (s Growth) DomainPool(ctx context.Context, c CompanyScope) ([]models.DomainPurchase, error) {
	if err := c.check("domain pool"); err != nil {
		return nil, err
	}
	out := []models.DomainPurchase{}
	err := s.db.WithContext(ctx).Where("conglomerate_id = ? AND (attached_company_id = ? OR company_id = ? OR (state = ? AND attached_company_id IS NULL))",
		c.conglomerateID, c.id, c.id, models.DomainRegistered).Order("created_at DESC, id").Limit(500).Find(&out).Error
	return out, wrap("domain pool", err)
}

// HeldDomains reports which of the domains a paid purchase (of any
// conglomerate) holds.
func (s Growth) HeldDomains(ctx context.Context, domains []string) (map[string]bool, error) {
	var held []string
	err := s.db.WithContext(ctx).Model(&models.DomainPurchase{}).
		Where("domain IN ? AND state IN ?", domains, []models.DomainState{models.DomainOrderPending, models.DomainRegistered}).Pluck("domain", &held).Error
	out := make(map[string]bool, len(held))
	for _, d := range held {
		out[d] = true
	}
	return out, wrap("held domains", err)
}

// DomainPaid is a payment of a purchase's checkout.
type DomainPaid struct {
	CheckoutID string
	// PaidCents is the money received (0 for a local confirmation).
	PaidCents int64
	At        time.Time
	// Revive lets a payment end an expired checkout too: a provider's
	// payment made before the session ended may be delivered after the
	// sweep expired the row (money was received: it is honoured).
	Revive bool
}

// MarkDomainPaid moves an awaiting purchase (or, with Revive, an expired
// one) to order_pending with the money received (a second confirmation of
// the same payment changes nothing and reports false). Another paid
// purchase of the same domain is models.ErrDuplicate.
func (s Growth) MarkDomainPaid(ctx context.Context, cong ConglomerateScope, id string, pay DomainPaid) (bool, error) {
	if err := cong.check("mark domain paid"); err != nil {
		return false, err
	}
	upd := map[string]any{"state": models.DomainOrderPending, "paid_at": pay.At, "paid_cents": pay.PaidCents, "updated_at": pay.At}
	if pay.CheckoutID != "" {
		upd["checkout_id"] = pay.CheckoutID
	}
	res := s.db.WithContext(ctx).Model(&models.DomainPurchase{}).
		Where("id = ? AND conglomerate_id = ? AND state IN ?", id, cong.id, unpaidStates(pay.Revive)).Updates(upd)
	return res.RowsAffected == 1, wrap("mark domain paid", res.Error)
}

func unpaidStates(revive bool) []models.DomainState {
	if revive {
		return []models.DomainState{models.DomainAwaitingPayment, models.DomainExpired}
	}
	return []models.DomainState{models.DomainAwaitingPayment}
}

// FailUnpaidDomain ends a payment that could not take its domain (another
// purchase holds it) as failed, recording the money received and the
// credits granted back for it.
func (s Growth) FailUnpaidDomain(ctx context.Context, cong ConglomerateScope, id, reason string, pay DomainPaid, refundedCredits int64) error {
	if err := cong.check("fail domain"); err != nil {
		return err
	}
	return wrap("fail domain", s.db.WithContext(ctx).Model(&models.DomainPurchase{}).
		Where("id = ? AND conglomerate_id = ? AND state IN ?", id, cong.id, unpaidStates(pay.Revive)).
		Updates(map[string]any{"state": models.DomainFailed, "failure_reason": reason, "paid_at": pay.At, "paid_cents": pay.PaidCents,
			"refunded_credits": refundedCredits, "updated_at": pay.At}).Error)
}

// ExpireDomainCheckouts ends, across tenants, up to limit unpaid checkouts
// whose expiry passed (state expired; nothing was paid, nothing is
// refunded) and returns how many. For the worker's growth sweeper.
func (s Growth) ExpireDomainCheckouts(ctx context.Context, at time.Time, limit int) (int64, error) {
	ids := s.db.Model(&models.DomainPurchase{}).Select("id").
		Where("state = ? AND expires_at IS NOT NULL AND expires_at <= ?", models.DomainAwaitingPayment, at).Order("expires_at, id").Limit(limit)
	res := s.db.WithContext(ctx).Model(&models.DomainPurchase{}).
		Where("id IN (?) AND state = ?", ids, models.DomainAwaitingPayment).
		Updates(map[string]any{"state": models.DomainExpired, "updated_at": at})
	return res.RowsAffected, wrap("expire domain checkouts", res.Error)
}

// SetDomainWorkflowStarted marks that domain:<id> was started.
func (s Growth) SetDomainWorkflowStarted(ctx context.Context, cong ConglomerateScope, id string) error {
	if err := cong.check("domain workflow started"); err != nil {
		return err
	}
	return wrap("domain workflow started", s.db.WithContext(ctx).Model(&models.DomainPurchase{}).
		Where("id = ? AND conglomerate_id = ?", id, cong.id).Update("workflow_started", true).Error)
}

// UnstartedDomainPurchases returns paid purchases, last changed before the
// time, whose workflow no one started (a crash between the payment's
// commit and the start), with their conglomerate's scope.
func (s Growth) UnstartedDomainPurchases(ctx context.Context, before time.Time, limit int) ([]UnstartedDomain, error) {
	var rows []models.DomainPurchase
	err := s.db.WithContext(ctx).Where("state = ? AND NOT workflow_started AND updated_at < ?", models.DomainOrderPending, before).
		Order("updated_at, id").Limit(limit).Find(&rows).Error
	out := make([]UnstartedDomain, 0, len(rows))
	for _, p := range rows {
		out = append(out, UnstartedDomain{Purchase: p, Scope: ConglomerateScope{id: p.ConglomerateID}})
	}
	return out, wrap("unstarted domain purchases", err)
}

// UnstartedDomain is a paid purchase whose workflow is not started yet.
type UnstartedDomain struct {
	Purchase models.DomainPurchase
	Scope    ConglomerateScope
}

// SetDomainOrder records the registrar's order id.
func (s Growth) SetDomainOrder(ctx context.Context, cong ConglomerateScope, id, orderID string) error {
	if err := cong.check("set domain order"); err != nil {
		return err
	}
	return wrap("set domain order", s.db.WithContext(ctx).Model(&models.DomainPurchase{}).
		Where("id = ? AND conglomerate_id = ?", id, cong.id).Updates(map[string]any{"order_id": orderID, "updated_at": now()}).Error)
}

// DomainOutcome ends a purchase's order.
type DomainOutcome struct {
	Registered      bool
	FailureReason   string
	RefundedCredits int64
	At              time.Time
	// AttachTo attaches the registered domain to this company when it has
	// none ("" leaves it parked).
	AttachTo string
}

// FinishDomainPurchase records the registrar's answer once (an order that
// ended before is returned unchanged, changed false) with the activity
// event of the buying company.
func (s Growth) FinishDomainPurchase(ctx context.Context, cong ConglomerateScope, id string, o DomainOutcome, ev models.ActivityInput) (models.DomainPurchase, bool, error) {
	var p models.DomainPurchase
	if err := cong.check("finish domain purchase"); err != nil {
		return p, false, err
	}
	changed := false
	err := s.store().InTx(ctx, func(tx *Store) error {
		db := tx.db
		if err := db.Where("id = ? AND conglomerate_id = ?", id, cong.id).Take(&p).Error; err != nil {
			return err
		}
		if p.State != models.DomainOrderPending {
			return nil
		}
		upd := map[string]any{"updated_at": o.At}
		if o.Registered {
			upd["state"], upd["registered_at"] = models.DomainRegistered, o.At
			if o.AttachTo != "" {
				var n int64
				if err := db.Model(&models.DomainPurchase{}).Where("attached_company_id = ?", o.AttachTo).Count(&n).Error; err != nil {
					return err
				}
				if n == 0 {
					upd["attached_company_id"] = o.AttachTo
				}
			}
		} else {
			upd["state"], upd["failure_reason"], upd["refunded_credits"] = models.DomainFailed, o.FailureReason, o.RefundedCredits
		}
		if err := db.Model(&p).Updates(upd).Error; err != nil {
			return err
		}
		if err := db.Where("id = ?", id).Take(&p).Error; err != nil {
			return err
		}
		changed = true
		return tx.recordActivityAt(ctx, p.CompanyID, ev, now())
	})
	return p, changed, wrap("finish domain purchase", err)
}

// AttachDomain attaches a registered purchase of the pool to the scope's
// company, detaching the domain it had (both in one transaction, with
// the activity event). The purchase must be registered (otherwise
// ErrDomainState with the row) and not attached to another company.
func (s Growth) AttachDomain(ctx context.Context, c CompanyScope, id string, ev models.ActivityInput) (models.DomainPurchase, error) {
	var p models.DomainPurchase
	if err := c.check("attach domain"); err != nil {
		return p, err
	}
	err := s.store().InTx(ctx, func(tx *Store) error {
		q := tx.db.Where("id = ? AND conglomerate_id = ?", id, c.conglomerateID)
		if tx.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Take(&p).Error; err != nil {
			return err
		}
		if p.State != models.DomainRegistered {
			return ErrDomainState
		}
		if p.AttachedCompanyID != nil && *p.AttachedCompanyID == c.id {
			return nil
		}
		if p.AttachedCompanyID != nil {
			return ErrDomainState
		}
		at := now()
		if err := tx.db.Model(&models.DomainPurchase{}).Where("attached_company_id = ?", c.id).
			Updates(map[string]any{"attached_company_id": nil, "updated_at": at}).Error; err != nil {
			return err
		}
		if err := tx.db.Model(&p).Updates(map[string]any{"attached_company_id": c.id, "updated_at": at}).Error; err != nil {
			return err
		}
		p.AttachedCompanyID, p.UpdatedAt = &c.id, at
		return tx.recordActivityAt(ctx, c.id, ev, at)
	})
	if errors.Is(err, ErrDomainState) {
		return p, err
	}
	return p, wrap("attach domain", err)
}

// ErrDomainState: the purchase is not in a state the change allows; the
// row returned beside it says which.
var ErrDomainState = errors.New("store: domain purchase state")

// DetachDomain parks the purchase attached to the scope's company; one
// not attached to it is ErrDomainState (with the row).
func (s Growth) DetachDomain(ctx context.Context, c CompanyScope, id string, ev models.ActivityInput) (models.DomainPurchase, error) {
	var p models.DomainPurchase
	if err := c.check("detach domain"); err != nil {
		return p, err
	}
	err := s.store().InTx(ctx, func(tx *Store) error {
		if err := tx.db.Where("id = ? AND conglomerate_id = ?", id, c.conglomerateID).Take(&p).Error; err != nil {
			return err
		}
		if p.AttachedCompanyID == nil || *p.AttachedCompanyID != c.id {
			return ErrDomainState
		}
		at := now()
		res := tx.db.Model(&models.DomainPurchase{}).Where("id = ? AND attached_company_id = ?", id, c.id).
			Updates(map[string]any{"attached_company_id": nil, "updated_at": at})
		if res.Error != nil {
			return res.Error
		}
		p.AttachedCompanyID, p.UpdatedAt = nil, at
		return tx.recordActivityAt(ctx, c.id, ev, at)
	})
	if errors.Is(err, ErrDomainState) {
		return p, err
	}
	return p, wrap("detach domain", err)
}

// CompanyOfDomain is the company a registered domain is attached to, for
// the sites listener's routing by Host (public: the domain names the
// site); "" when none.
func (s Growth) CompanyOfDomain(ctx context.Context, domain string) (string, error) {
	var p models.DomainPurchase
	err := s.db.WithContext(ctx).Select("attached_company_id").
		Where("domain = ? AND state = ? AND attached_company_id IS NOT NULL", domain, models.DomainRegistered).Take(&p).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	if err != nil || p.AttachedCompanyID == nil {
		return "", wrap("company of domain", err)
	}
	return *p.AttachedCompanyID, nil
}
