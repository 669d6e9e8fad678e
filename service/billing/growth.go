package billing

import (
	"context"
	"errors"

	"holdco/models"
	"holdco/store"
)

// Hooks of the growth use cases (service/growth) into billing: a grant of
// credits resumes ad campaigns waiting for credits, and a paid domain
// checkout starts the domain's registration.

// GrantHook is told after credits were granted to an account.
type GrantHook func(ctx context.Context, scope store.ConglomerateScope)

// DomainPayment is a paid domain checkout as the payment provider reports
// it.
type DomainPayment struct {
	PurchaseID string
	CheckoutID string
	// AmountCents is the money received (the session's amount_total):
	// what a failed purchase may give back as credits, never more.
	AmountCents int64
}

// DomainPaidHook is told that a domain purchase's checkout was paid;
// an error makes the payment provider deliver the event again.
type DomainPaidHook func(ctx context.Context, scope store.ConglomerateScope, pay DomainPayment) error

// SetGrantHook sets the hook told after every grant (nil: none).
func (s *Service) SetGrantHook(h GrantHook) { s.grantHook = h }

// SetDomainPaidHook sets the hook told of paid domain checkouts.
func (s *Service) SetDomainPaidHook(h DomainPaidHook) { s.domainPaidHook = h }

func (s *Service) afterGrant(ctx context.Context, scope store.ConglomerateScope) {
	if s.grantHook != nil {
		s.grantHook(ctx, scope)
	}
}

func (s *Service) domainPaid(ctx context.Context, scope store.ConglomerateScope, pay DomainPayment) error {
	if s.domainPaidHook == nil {
		s.logger.WarnContext(ctx, "domain payment event: no domain use cases in this process; it will be delivered again")
		return errors.New("billing: domain payments are not handled by this process")
	}
	return s.domainPaidHook(ctx, scope, pay)
}

// CheckoutDomain opens a hosted checkout for a domain purchase of the
// account of the scope's company (the company buying it, authorized by
// the caller).
func (s *Service) CheckoutDomain(ctx context.Context, scope store.CompanyScope, req models.CheckoutRequest, returnURL string) (models.CheckoutSession, error) {
	if err := s.requirePayments(); err != nil {
		return models.CheckoutSession{}, err
	}
	c, err := s.store.GetConglomerate(ctx, scope.ConglomerateID())
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
	_, err := s.store.ApplyCreditEntry(ctx, scope, e, nil, dayStart(s.now()))
	if errors.Is(err, models.ErrDuplicate) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s.afterGrant(ctx, scope)
	return true, nil
}
