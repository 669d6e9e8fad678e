// Package paymentevents applies the payment provider's webhook events to
// the domain each is about: a domain checkout's payment to growth, every
// other event (credits, plans, payouts, disputes) to billing. It sits above
// both, so neither installs anything in the other: billing verifies the
// event and records it once (billing.ApplyPaymentWebhook), this router
// picks the domain.
package paymentevents

import (
	"context"
	"log/slog"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/growth"
)

// Service routes payment events.
type Service struct {
	billing *billing.Service
	growth  *growth.Service
	logger  *slog.Logger
}

// New builds the router on the two domains payment events are about.
func New(core *service.Core, bill *billing.Service, grow *growth.Service) *Service {
	return &Service{billing: bill, growth: grow, logger: core.Logger()}
}

// HandlePaymentWebhook verifies and applies a payment event once (see
// billing.ApplyPaymentWebhook for the refusals and the acknowledgements).
func (s *Service) HandlePaymentWebhook(ctx context.Context, payload []byte, signature string) (billing.WebhookResult, error) {
	return s.billing.ApplyPaymentWebhook(ctx, payload, signature, s.apply)
}

func (s *Service) apply(ctx context.Context, ev billing.PaymentEvent) error {
	if ev.Kind != models.EventDomainPaid {
		return s.billing.ApplyPaymentEvent(ctx, ev)
	}
	if !ev.Known {
		s.logger.WarnContext(ctx, "domain payment for no known account: ignored", "event", ev.ID)
		return nil
	}
	return s.growth.MarkDomainPaid(ctx, ev.Account, growth.DomainPayment{PurchaseID: ev.PurchaseID, CheckoutID: ev.Reference,
		AmountCents: max(ev.AmountCents, 0)})
}
