package billing

import (
	"context"
	"errors"

	"holdco/models"
	"holdco/observability"
	"holdco/store"
)

// What billing does for the growth use cases (service/growth): the
// checkout of a domain purchase and keyed grants (refunds).

// CheckoutDomain opens a hosted checkout for a domain purchase of the
// account of the scope's company (the company buying it, authorized by
// the caller).
func (s *Service) CheckoutDomain(ctx context.Context, scope store.CompanyScope, req models.CheckoutRequest, returnURL string) (models.CheckoutSession, error) {
	if err := s.requirePayments(); err != nil {
		return models.CheckoutSession{}, err
	}
	c, err := s.store.Identity().GetConglomerate(ctx, scope.ConglomerateID())
	if err != nil {
		return models.CheckoutSession{}, err
	}
	req.Kind, req.ConglomerateID = models.CheckoutDomain, c.ID
	req.SuccessURL, req.CancelURL = returnURL+"&checkout=success", returnURL+"&checkout=cancelled"
	if c.Billing.CustomerID != nil {
		req.CustomerID = *c.Billing.CustomerID
	}
	cs, err := s.payments.Checkout(ctx, req)
	if err != nil {
		return cs, upstream("The payment provider could not open a checkout; retry shortly.", err)
	}
	return cs, nil
}

// GrantOnce grants credits once per key (a second grant with the same key
// adds nothing and reports false): refunds an activity may retry.
func (s *Service) GrantOnce(ctx context.Context, scope store.ConglomerateScope, companyID string, typ models.LedgerEntryType, credits int64, reference, key string) (bool, error) {
	if typ.Spends() || !typ.Valid() || credits <= 0 || key == "" {
		return false, models.Errorf(models.CodeInvalidArgument, "A keyed grant is a positive number of credits of a grant type.").WithField("credits")
	}
	e := models.CreditLedgerEntry{Type: typ, Amount: credits, Reference: reference, CreatedAt: s.now(),
		ID: chargeID(scope.ID(), key)}
	if companyID != "" {
		e.CompanyID = &companyID
	}
	out, err := s.store.Billing().ApplyCreditEntry(ctx, scope, e, nil, dayStart(s.now()))
	if errors.Is(err, models.ErrDuplicate) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	observability.CreditsGranted(string(typ), credits)
	s.afterGrant(ctx, out.Woken)
	return true, nil
}
