package billing

import (
	"context"

	"holdco/models"
	"holdco/store"
	"holdco/workflows/contract"
)

// ChargeAutoTopUp charges the account's saved card for its auto top-up
// pack, if auto top-up is on and the balance is still under the threshold,
// and grants the credits (the payment's id is the grant's reference, so
// the webhook of the same payment grants nothing more). key makes the
// charge idempotent at the provider: a retried attempt with the same key
// charges once. A rule for the worker, which passes the scope.
func (s *Service) ChargeAutoTopUp(ctx context.Context, scope store.ConglomerateScope, key string) (contract.AutoTopUpOutcome, error) {
	cong, err := s.store.Identity().GetConglomerate(ctx, scope.ID())
	if err != nil {
		return contract.AutoTopUpOutcome{}, err
	}
	b := cong.Billing
	if !b.AutoTopUpEnabled || b.AutoTopUpCredits <= 0 {
		return contract.AutoTopUpOutcome{}, nil
	}
	bal, err := s.store.Billing().CreditBalance(ctx, scope, dayStart(s.now()))
	if err != nil || bal.Balance >= b.AutoTopUpThreshold {
		return contract.AutoTopUpOutcome{}, err
	}
	switch {
	case s.payments == nil:
		return contract.AutoTopUpOutcome{Failed: reasonPaymentsNotConfigured}, nil
	case b.CustomerID == nil:
		return contract.AutoTopUpOutcome{Failed: "no_payment_method"}, nil
	}
	res, err := s.payments.ChargeTopUp(ctx, models.ChargeRequest{ConglomerateID: cong.ID, CustomerID: *b.CustomerID,
		Credits: b.AutoTopUpCredits, UnitAmountCents: s.creditPrice(), IdempotencyKey: key})
	if err != nil {
		return contract.AutoTopUpOutcome{}, err
	}
	if !res.Succeeded {
		return contract.AutoTopUpOutcome{Failed: res.Status}, nil
	}
	if _, err := s.GrantCredits(ctx, scope, models.EntryTopUp, b.AutoTopUpCredits, "payment_intent:"+res.ID); err != nil && !models.IsCode(err, models.CodeConflict) {
		return contract.AutoTopUpOutcome{}, err
	}
	return contract.AutoTopUpOutcome{Charged: true, Credits: b.AutoTopUpCredits}, nil
}
