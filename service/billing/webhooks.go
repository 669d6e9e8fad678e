package billing

import (
	"context"
	"errors"
	"fmt"
	"holdco/models"
	"holdco/observability"
	"holdco/service"
	"holdco/store"
	"time"
)

// WebhookResult says what a payment webhook did.
type WebhookResult struct {
	EventID   string
	Duplicate bool
	Ignored   bool
}

// PaymentEvent is a verified payment event with the account it is about.
type PaymentEvent struct {
	models.PaymentEvent
	// Account is the system scope of the account the event names (the id
	// holdco put in the object's metadata, or the customer's account) and
	// Known whether holdco has such an account. The payment provider acts
	// for no user: its signature is the credential.
	Account store.ConglomerateScope
	Known   bool
}

// ApplyPaymentWebhook verifies a payment event and applies it once with
// apply (service/paymentevents routes each kind to its domain). A bad
// signature is refused (bad_request) with nothing recorded; an event seen
// before is acknowledged without acting; an event holdco does not act on
// is acknowledged and ignored. Every effect is idempotent on its own too
// (credits are unique by reference), so two deliveries racing each other
// still credit once. A failure to apply answers an error so the provider
// delivers the event again.
func (s *Service) ApplyPaymentWebhook(ctx context.Context, payload []byte, signature string, apply func(context.Context, PaymentEvent) error) (WebhookResult, error) {
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
	if res.Duplicate, err = s.store.Billing().PaymentEventProcessed(ctx, ev.ID); err != nil || res.Duplicate {
		return res, err
	}
	congID, err := s.eventConglomerate(ctx, ev)
	if err != nil {
		return res, err
	}
	in := PaymentEvent{PaymentEvent: ev}
	if congID != "" {
		in.Account, in.Known = s.store.SystemConglomerateScope(congID), true
	}
	if err := apply(ctx, in); err != nil {
		return res, err
	}
	return res, s.store.Billing().RecordPaymentEvent(ctx, models.ProcessedPaymentEvent{ID: ev.ID, Type: ev.Type, Livemode: ev.Livemode, ProcessedAt: s.now()})
}

// ApplyPaymentEvent applies an event of billing's: credits bought or
// granted by a plan, a subscription's state, a connected account's state,
// a dispute. A domain checkout's payment is growth's: it is refused here
// (the provider delivers it again to a process that routes it).
func (s *Service) ApplyPaymentEvent(ctx context.Context, ev PaymentEvent) error {
	log := s.logger.With("event", ev.ID, "type", ev.Type)
	switch ev.Kind {
	case models.EventCredits:
		if !ev.Known {
			log.WarnContext(ctx, "payment event for no known account: ignored")
			return nil
		}
		out, err := s.store.Billing().ApplyCreditEntry(ctx, ev.Account, models.CreditLedgerEntry{Type: ev.EntryType, Amount: ev.Credits,
			Reference: ev.Reference, CreatedAt: s.now()}, nil, dayStart(s.now()))
		if errors.Is(err, models.ErrDuplicate) {
			return nil // credited by an earlier event of the same payment
		}
		if err == nil {
			observability.CreditsGranted(string(ev.EntryType), ev.Credits)
			s.afterGrant(ctx, out.Woken)
		}
		return err
	case models.EventDomainPaid:
		log.WarnContext(ctx, "domain payment event: not billing's; it will be delivered again")
		return errors.New("billing: a domain payment is applied by the payment events' router (service/paymentevents)")
	case models.EventSubscription:
		if !ev.Known {
			log.WarnContext(ctx, "subscription event for no known account: ignored")
			return nil
		}
		plan, status := ev.Plan, ev.PlanStatus
		if status == models.SubscriptionCanceled || status == "incomplete_expired" {
			plan = models.PlanFree
		}
		err := s.store.Billing().SetSubscription(ctx, ev.Account.ID(), ev.CustomerID, ev.SubscriptionID, plan, status, ev.PlanRenewsAt)
		if errors.Is(err, models.ErrDuplicate) { // the customer id belongs to another account
			log.WarnContext(ctx, "subscription event: customer linked to another account; ignored", "customer", ev.CustomerID)
			return nil
		}
		return ignoreMissing(err)
	case models.EventConnectAccount:
		return ignoreMissing(s.store.Billing().UpdateConnectState(ctx, ev.Connect))
	case models.EventDispute:
		if !ev.Known {
			return nil
		}
		var at *time.Time
		if ev.Blocked {
			t := s.now()
			at = &t
		}
		return ignoreMissing(s.store.Billing().SetBlocked(ctx, ev.Account.ID(), "", at, ev.Reason))
	}
	return nil
}

// eventConglomerate finds the account an event is about: the id holdco
// put in the object's metadata, or the customer's account. "" when none.
func (s *Service) eventConglomerate(ctx context.Context, ev models.PaymentEvent) (string, error) {
	if ev.ConglomerateID != "" {
		if _, err := s.store.Identity().GetConglomerate(ctx, ev.ConglomerateID); err == nil {
			return ev.ConglomerateID, nil
		} else if !errors.Is(err, models.ErrNotFound) {
			return "", err
		}
	}
	if ev.CustomerID == "" {
		return "", nil
	}
	id, err := s.store.Billing().ConglomerateIDByCustomer(ctx, ev.CustomerID)
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
