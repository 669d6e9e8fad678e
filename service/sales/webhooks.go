package sales

import (
	"context"
	"errors"
	"fmt"
	"time"

	"holdco/models"
	"holdco/store"
)

// WebhookResult says what an event of a connected account did.
type WebhookResult struct {
	EventID   string
	Duplicate bool
	Ignored   bool
}

// HandleSalesWebhook verifies and records an event of a connected account
// (the Connect webhook endpoint, its own signing secret). The connected
// account named by the event decides the conglomerate; the company is the
// one in the object's metadata (or, for a refund, the one that recorded
// the payment) and must belong to that conglomerate, so one tenant's
// account can never credit another tenant's company: such an event is
// acknowledged, logged without its data and ignored. Each effect is
// idempotent on its own (a payment is unique by the provider's payment,
// refund totals only rise, subscription states apply newest first), so a
// replay or two deliveries racing each other count once. A failure to
// apply answers an error so the provider delivers the event again.
func (s *Service) HandleSalesWebhook(ctx context.Context, payload []byte, signature string) (WebhookResult, error) {
	if s.payments == nil {
		return WebhookResult{}, models.Errorf(models.CodeNotFound, "Sales are not configured on this server.")
	}
	ev, err := s.payments.ParseSalesWebhook(ctx, payload, signature)
	if errors.Is(err, models.ErrBadSignature) {
		return WebhookResult{}, models.Errorf(models.CodeBadRequest, "The webhook signature does not verify.").Wrap(err)
	}
	if err != nil {
		return WebhookResult{}, upstream("The event could not be read; it will be delivered again.", err)
	}
	res := WebhookResult{EventID: ev.ID, Ignored: ev.Kind == models.SalesEventIgnored}
	if res.Duplicate, err = s.store.Billing().PaymentEventProcessed(ctx, ev.ID); err != nil || res.Duplicate {
		return res, err
	}
	applied, err := s.applySalesEvent(ctx, ev)
	if err != nil {
		return res, err
	}
	res.Ignored = res.Ignored || !applied
	return res, s.store.Billing().RecordPaymentEvent(ctx, models.ProcessedPaymentEvent{ID: ev.ID, Type: ev.Type, Livemode: ev.Livemode, ProcessedAt: s.now()})
}

// applySalesEvent records the event; false when it was about nothing holdco
// knows (or about a company the account does not own).
func (s *Service) applySalesEvent(ctx context.Context, ev models.SalesEvent) (bool, error) {
	if ev.Kind == models.SalesEventIgnored {
		return false, nil
	}
	log := s.logger.With("event", ev.ID, "type", ev.Type)
	cong, err := s.store.AuthorizeConnectedAccount(ctx, ev.Account)
	if errors.Is(err, models.ErrNotFound) {
		log.WarnContext(ctx, "sales event of a connected account no conglomerate holds: ignored")
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var sc store.CompanyScope
	if ev.Kind == models.SalesEventRefund {
		sc, err = s.store.CompanyOfPayment(ctx, cong, ev.Refund.ProviderPaymentID)
	} else {
		sc, _, err = s.store.CompanyInConglomerate(ctx, cong, ev.CompanyID)
	}
	if errors.Is(err, models.ErrNotFound) {
		log.WarnContext(ctx, "sales event for no company of the connected account's conglomerate: ignored")
		return false, nil
	}
	if err != nil {
		return false, err
	}
	switch ev.Kind {
	case models.SalesEventPayment:
		return true, s.recordPayment(ctx, sc, ev)
	case models.SalesEventRefund:
		return true, s.recordRefund(ctx, sc, ev)
	case models.SalesEventSubscription:
		_, err := s.applySubscription(ctx, s.store, sc, ev.Account, ev.Subscription, ev.CreatedAt, models.ActorCustomer)
		if errors.Is(err, models.ErrNotFound) { // recorded for another company
			log.WarnContext(ctx, "subscription event for a subscription of another company: ignored")
			return false, nil
		}
		return true, err
	}
	return false, nil
}

// recordPayment records a payment once and, in the same transaction, its
// activity event and the company's first_dollar milestone when it is the
// first revenue.
func (s *Service) recordPayment(ctx context.Context, sc store.CompanyScope, ev models.SalesEvent) error {
	p := ev.Payment
	return s.store.InTx(ctx, func(tx *store.Store) error {
		inserted, err := tx.Sales().RecordCompanyPayment(ctx, sc, models.CompanyPayment{ProviderAccountID: ev.Account, ProviderPaymentID: p.ProviderPaymentID,
			ProductID: p.ProductID, SubscriptionID: p.SubscriptionID, AmountCents: p.AmountCents, Currency: p.Currency, PaidAt: ev.CreatedAt})
		if err != nil || !inserted {
			return err
		}
		if err := tx.Companies().RecordActivity(ctx, sc, models.ActivityInput{Kind: models.ActivityPaymentReceived, Actor: models.ActorCustomer,
			Summary: "Payment received: " + money(p.AmountCents, p.Currency), Subject: p.ProviderPaymentID,
			Data: map[string]any{"amount_cents": p.AmountCents, "currency": p.Currency, "product_id": p.ProductID}}); err != nil {
			return err
		}
		if p.AmountCents <= 0 || p.Currency != models.SalesCurrency {
			return nil
		}
		// Unique per company: of first payments racing each other, exactly
		// one reaches it, in the transaction that records it.
		_, err = tx.Companies().ReachMilestone(ctx, sc, models.MilestoneFirstDollar, ev.CreatedAt)
		return err
	})
}

// recordRefund raises the payment's refunded total and records by how much.
func (s *Service) recordRefund(ctx context.Context, sc store.CompanyScope, ev models.SalesEvent) error {
	return s.store.InTx(ctx, func(tx *store.Store) error {
		delta, p, err := tx.Sales().SetPaymentRefunded(ctx, sc, ev.Refund.ProviderPaymentID, ev.Refund.RefundedCents)
		if err != nil || delta == 0 {
			return err
		}
		return tx.Companies().RecordActivity(ctx, sc, models.ActivityInput{Kind: models.ActivityRefundIssued, Actor: models.ActorSystem,
			Summary: "Refund issued: " + money(delta, p.Currency), Subject: p.ProviderPaymentID,
			Data: map[string]any{"amount_cents": delta, "refunded_cents": p.RefundedCents, "currency": p.Currency}})
	})
}

// applySubscription records a subscription state as of at, with the
// activity of a start or a cancellation in the same transaction.
func (s *Service) applySubscription(ctx context.Context, st *store.Store, sc store.CompanyScope, account string, in models.SalesSubscription, at time.Time, actor models.ActivityActor) (models.CustomerSubscription, error) {
	var out models.CustomerSubscription
	err := st.InTx(ctx, func(tx *store.Store) error {
		ch, sub, err := tx.Sales().UpsertCustomerSubscription(ctx, sc, models.CustomerSubscription{ProviderAccountID: account,
			ProviderSubscriptionID: in.ProviderSubscriptionID, ProductID: in.ProductID, Status: in.Status, CurrentPeriodEnd: in.CurrentPeriodEnd,
			CancelAtPeriodEnd: in.CancelAtPeriodEnd, ProviderUpdatedAt: at})
		if err != nil {
			return err
		}
		out = sub
		data := map[string]any{"product_id": sub.ProductID, "status": sub.Status}
		if ch.Started {
			if err := tx.Companies().RecordActivity(ctx, sc, models.ActivityInput{Kind: models.ActivitySubscriptionStart, Actor: models.ActorCustomer,
				Summary: "Subscription started", Subject: sub.ProviderSubscriptionID, Data: data}); err != nil {
				return err
			}
		}
		if ch.Canceled {
			return tx.Companies().RecordActivity(ctx, sc, models.ActivityInput{Kind: models.ActivitySubscriptionCancel, Actor: actor,
				Summary: "Subscription canceled", Subject: sub.ProviderSubscriptionID, Data: data})
		}
		return nil
	})
	if errors.Is(err, models.ErrNotFound) && actor != models.ActorCustomer {
		return out, models.Errorf(models.CodeNotFound, "Subscription %s does not exist in this company.", in.ProviderSubscriptionID)
	}
	return out, err
}

// money formats cents for an activity summary: "$12.50", or "12.50 EUR".
func money(cents int64, currency string) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	amount := fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
	if currency == models.SalesCurrency {
		return "$" + amount
	}
	return amount + " " + currency
}
