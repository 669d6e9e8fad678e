package billing

import (
	"context"

	"holdco/models"
	"holdco/store"
)

// AutoTopUpTrigger starts (or joins) the account's auto top-up workflow.
// It must not fail or slow the spend that calls it: it bounds its own
// time and logs its own failures.
type AutoTopUpTrigger interface {
	Nudge(ctx context.Context, conglomerateID string)
}

// SetAutoTopUpTrigger sets what a spend calls when it leaves the balance
// under the account's auto top-up threshold (nil: nothing).
func (s *Service) SetAutoTopUpTrigger(t AutoTopUpTrigger) { s.autoTopUp = t }

// afterSpend nudges the auto top-up when the spend left the balance under
// the threshold of an account that has it on.
func (s *Service) afterSpend(ctx context.Context, cong models.Conglomerate, st CreditState) {
	b := cong.Billing
	if s.autoTopUp != nil && b.AutoTopUpEnabled && b.AutoTopUpCredits > 0 && st.Balance < b.AutoTopUpThreshold {
		s.autoTopUp.Nudge(ctx, cong.ID)
	}
}

// AutoTopUpOutcome is what one auto top-up attempt did.
type AutoTopUpOutcome struct {
	// Charged: the card was charged and the credits granted.
	Charged bool
	Credits int64
	// Failed says why no charge was possible ("" when none was needed):
	// no_payment_method, payments_not_configured, or the payment's status.
	Failed string
}

// ChargeAutoTopUp charges the account's saved card for its auto top-up
// pack, if auto top-up is on and the balance is still under the threshold,
// and grants the credits (the payment's id is the grant's reference, so
// the webhook of the same payment grants nothing more). key makes the
// charge idempotent at the provider: a retried attempt with the same key
// charges once. A rule for the worker, which passes the scope.
func (s *Service) ChargeAutoTopUp(ctx context.Context, scope store.ConglomerateScope, key string) (AutoTopUpOutcome, error) {
	cong, err := s.store.GetConglomerate(ctx, scope.ID())
	if err != nil {
		return AutoTopUpOutcome{}, err
	}
	b := cong.Billing
	if !b.AutoTopUpEnabled || b.AutoTopUpCredits <= 0 {
		return AutoTopUpOutcome{}, nil
	}
	bal, err := s.store.CreditBalance(ctx, scope, dayStart(s.now()))
	if err != nil || bal.Balance >= b.AutoTopUpThreshold {
		return AutoTopUpOutcome{}, err
	}
	switch {
	case s.payments == nil:
		return AutoTopUpOutcome{Failed: reasonPaymentsNotConfigured}, nil
	case b.CustomerID == nil:
		return AutoTopUpOutcome{Failed: "no_payment_method"}, nil
	}
	res, err := s.payments.ChargeTopUp(ctx, models.ChargeRequest{ConglomerateID: cong.ID, CustomerID: *b.CustomerID,
		Credits: b.AutoTopUpCredits, UnitAmountCents: s.creditPrice(), IdempotencyKey: key})
	if err != nil {
		return AutoTopUpOutcome{}, err
	}
	if !res.Succeeded {
		return AutoTopUpOutcome{Failed: res.Status}, nil
	}
	if _, err := s.GrantCredits(ctx, scope, models.EntryTopUp, b.AutoTopUpCredits, "payment_intent:"+res.ID); err != nil && !models.IsCode(err, models.CodeConflict) {
		return AutoTopUpOutcome{}, err
	}
	return AutoTopUpOutcome{Charged: true, Credits: b.AutoTopUpCredits}, nil
}
