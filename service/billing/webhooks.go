package billing

import (
	"context"
	"errors"
	"fmt"
	"holdco/models"
	"holdco/service"
	"time"
)

// WebhookResult says what a payment webhook did.
type WebhookResult struct {
	EventID   string
	Duplicate bool
	Ignored   bool
}

// HandlePaymentWebhook verifies and applies a payment event once. A bad
// signature is refused (bad_request) with nothing recorded; an event seen
// before is acknowledged without acting; an event holdco does not act on
// is acknowledged and ignored. Every effect is idempotent on its own too
// (credits are unique by reference), so two deliveries racing each other
// still credit once. A failure to apply answers an error so the provider
// delivers the event again.
func (s *Service) HandlePaymentWebhook(ctx context.Context, payload []byte, signature string) (WebhookResult, error) {
	if s.payments == nil {
		return WebhookResult{}, models.Errorf(models.CodeNotFound, "Payments are not configured on this server.")
	}
	ev, err := s.payments.ParseWebhook(ctx, payload, signature)
	if errors.Is(err, models.ErrBadSignature) {
		return WebhookResult{}, models.Errorf(models.CodeBadRequest, "The webhook signature does not verify.").Wrap(err)
	}
	if err != nil {
		return WebhookResult{}, upstream("The event could not be read; it will be delivered again.", err)
	}
	res := WebhookResult{EventID: ev.ID, Ignored: ev.Kind == models.EventIgnored}
	if res.Duplicate, err = s.store.PaymentEventProcessed(ctx, ev.ID); err != nil || res.Duplicate {
		return res, err
	}
	if err := s.applyPaymentEvent(ctx, ev); err != nil {
		return res, err
	}
	return res, s.store.RecordPaymentEvent(ctx, models.ProcessedPaymentEvent{ID: ev.ID, Type: ev.Type, Livemode: ev.Livemode, ProcessedAt: s.now()})
}

func (s *Service) applyPaymentEvent(ctx context.Context, ev models.PaymentEvent) error {
	log := s.logger.With("event", ev.ID, "type", ev.Type)
	congID, err := s.eventConglomerate(ctx, ev)
	if err != nil {
		return err
	}
	switch ev.Kind {
	case models.EventCredits:
		if congID == "" {
			log.WarnContext(ctx, "payment event for no known account: ignored")
			return nil
		}
		// The payment provider acts for no user: the system scope.
		scope := s.store.SystemConglomerateScope(congID)
		_, err := s.store.ApplyCreditEntry(ctx, scope, models.CreditLedgerEntry{Type: ev.EntryType, Amount: ev.Credits,
			Reference: ev.Reference, CreatedAt: s.now()}, nil, dayStart(s.now()))
		if errors.Is(err, models.ErrDuplicate) {
			return nil // credited by an earlier event of the same payment
		}
		if err == nil {
			s.afterGrant(ctx, scope)
		}
		return err
	case models.EventDomainPaid:
		if congID == "" {
			log.WarnContext(ctx, "domain payment for no known account: ignored")
			return nil
		}
		return s.domainPaid(ctx, s.store.SystemConglomerateScope(congID), DomainPayment{PurchaseID: ev.PurchaseID, CheckoutID: ev.Reference,
			AmountCents: max(ev.AmountCents, 0)})
	case models.EventSubscription:
		if congID == "" {
			log.WarnContext(ctx, "subscription event for no known account: ignored")
			return nil
		}
		plan, status := ev.Plan, ev.PlanStatus
		if status == models.SubscriptionCanceled || status == "incomplete_expired" {
			plan = models.PlanFree
		}
		err := s.store.SetSubscription(ctx, congID, ev.CustomerID, ev.SubscriptionID, plan, status, ev.PlanRenewsAt)
		if errors.Is(err, models.ErrDuplicate) { // the customer id belongs to another account
			log.WarnContext(ctx, "subscription event: customer linked to another account; ignored", "customer", ev.CustomerID)
			return nil
		}
		return ignoreMissing(err)
	case models.EventConnectAccount:
		return ignoreMissing(s.store.UpdateConnectState(ctx, ev.Connect))
	case models.EventDispute:
		if congID == "" {
			return nil
		}
		var at *time.Time
		if ev.Blocked {
			t := s.now()
			at = &t
		}
		return ignoreMissing(s.store.SetBlocked(ctx, congID, "", at, ev.Reason))
	}
	return nil
}

// eventConglomerate finds the account an event is about: the id holdco
// put in the object's metadata, or the customer's account. "" when none.
func (s *Service) eventConglomerate(ctx context.Context, ev models.PaymentEvent) (string, error) {
	if ev.ConglomerateID != "" {
		if _, err := s.store.GetConglomerate(ctx, ev.ConglomerateID); err == nil {
			return ev.ConglomerateID, nil
		} else if !errors.Is(err, models.ErrNotFound) {
			return "", err
		}
	}
	if ev.CustomerID == "" {
		return "", nil
	}
	id, err := s.store.ConglomerateIDByCustomer(ctx, ev.CustomerID)
	return id, ignoreMissing(err)
}

// ignoreMissing: an event about a deleted account changes nothing.
func ignoreMissing(err error) error {
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	return err
}

// PaymentHealth probes the payment provider (admin only; live calls).
func (s *Service) PaymentHealth(ctx context.Context) (models.PaymentHealth, error) {
	p, ok := service.PrincipalFrom(ctx)
	if !ok || !p.IsAdmin() {
		return models.PaymentHealth{}, models.Errorf(models.CodeForbidden, "Only an operator may probe the payment provider.")
	}
	if err := s.requirePayments(); err != nil {
		return models.PaymentHealth{}, err
	}
	h, err := s.payments.Health(ctx)
	if err != nil {
		return h, upstream(fmt.Sprintf("The payment provider could not be probed: %v", err), err)
	}
	return h, nil
}
