package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// updateConglomerate writes columns (and updated_at) of the conglomerate
// matching where; no matching row is models.ErrNotFound. The account's
// listeners (OnAccountChange) are told.
func (s *Store) updateConglomerate(ctx context.Context, op string, where string, arg any, cols map[string]any) error {
	cols["updated_at"] = now()
	res := s.db.WithContext(ctx).Model(&models.Conglomerate{}).Where(where, arg).Updates(cols)
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap(op, gorm.ErrRecordNotFound)
	}
	if res.Error == nil && s.listensToAccounts() {
		if id, ok := arg.(string); ok && where == "id = ?" {
			s.accountChanged(id)
		} else {
			s.accountChanged(s.conglomerateIDsWhere(ctx, where, arg)...)
		}
	}
	return wrap(op, res.Error)
}

// SetCustomerID records the conglomerate's payment-provider customer.
func (s Billing) SetCustomerID(ctx context.Context, cong ConglomerateScope, customerID string) error {
	if err := cong.check("set customer id"); err != nil {
		return err
	}
	return s.store().updateConglomerate(ctx, "set customer id", "id = ?", cong.id, map[string]any{"customer_id": customerID})
}

// SetSubscription records the plan and subscription state. A conglomerate
// may be named by id or, when conglomerateID is empty, by customer id.
func (s Billing) SetSubscription(ctx context.Context, conglomerateID, customerID, subscriptionID string, plan models.Plan, status string, renewsAt *time.Time) error {
	cols := map[string]any{"plan": plan, "plan_status": status, "plan_renews_at": renewsAt}
	if subscriptionID != "" {
		cols["subscription_id"] = subscriptionID
	}
	if customerID != "" {
		cols["customer_id"] = customerID
	}
	if conglomerateID != "" {
		return s.store().updateConglomerate(ctx, "set subscription", "id = ?", conglomerateID, cols)
	}
	return s.store().updateConglomerate(ctx, "set subscription", "customer_id = ?", customerID, cols)
}

// ConglomerateIDByCustomer finds the conglomerate of a customer id.
func (s Billing) ConglomerateIDByCustomer(ctx context.Context, customerID string) (string, error) {
	var c models.Conglomerate
	err := s.db.WithContext(ctx).Select("id").Where("customer_id = ?", customerID).Take(&c).Error
	return c.ID, wrap("conglomerate by customer", err)
}

// SetBlocked blocks (at non-nil) or unblocks the conglomerate's paid work.
func (s Billing) SetBlocked(ctx context.Context, conglomerateID, customerID string, at *time.Time, reason string) error {
	cols := map[string]any{"blocked_at": at, "blocked_reason": reason}
	if conglomerateID != "" {
		return s.store().updateConglomerate(ctx, "set blocked", "id = ?", conglomerateID, cols)
	}
	return s.store().updateConglomerate(ctx, "set blocked", "customer_id = ?", customerID, cols)
}

// SetAutoTopUp stores the auto top-up settings.
func (s Billing) SetAutoTopUp(ctx context.Context, cong ConglomerateScope, enabled bool, threshold, credits int64) error {
	if err := cong.check("set auto top-up"); err != nil {
		return err
	}
	return s.store().updateConglomerate(ctx, "set auto top-up", "id = ?", cong.id, map[string]any{
		"auto_top_up_enabled": enabled, "auto_top_up_threshold": threshold, "auto_top_up_credits": credits})
}

// SetConnectAccount links the conglomerate to its connected account.
func (s Billing) SetConnectAccount(ctx context.Context, cong ConglomerateScope, accountID string) error {
	if err := cong.check("set connect account"); err != nil {
		return err
	}
	return s.store().updateConglomerate(ctx, "set connect account", "id = ?", cong.id, map[string]any{"connect_account_id": accountID})
}

// UpdateConnectState stores what the provider reports of a connected
// account; an account no conglomerate holds is models.ErrNotFound.
func (s Billing) UpdateConnectState(ctx context.Context, st models.ConnectState) error {
	return s.store().updateConglomerate(ctx, "update connect state", "connect_account_id = ?", st.AccountID, map[string]any{
		"connect_charges_enabled": st.ChargesEnabled, "connect_payouts_enabled": st.PayoutsEnabled,
		"connect_details_submitted": st.DetailsSubmitted, "connect_requirements": truncate(strings.Join(st.Requirements, ","), 1000),
	})
}

// PaymentEventProcessed reports whether an event id was handled before.
func (s Billing) PaymentEventProcessed(ctx context.Context, id string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.ProcessedPaymentEvent{}).Where("id = ?", id).Count(&n).Error
	return n > 0, wrap("payment event processed", err)
}

// RecordPaymentEvent marks an event handled; recording it twice is fine.
func (s Billing) RecordPaymentEvent(ctx context.Context, ev models.ProcessedPaymentEvent) error {
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&ev).Error
	return wrap("record payment event", err)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
