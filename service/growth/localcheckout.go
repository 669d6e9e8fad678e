package growth

import (
	"context"
	"errors"

	"holdco/models"
)

// The local checkout (payments not configured): holdco's own page stands
// in for the payment provider. Its signed link is the credential: it
// names one purchase of one account and was handed to that account's user
// by CreateCheckout, as a billing link is.

// LocalCheckout is what the local confirmation page shows.
type LocalCheckout struct {
	Purchase models.DomainPurchase
	Unicode  string
}

func (s *Service) openLocalCheckout(ctx context.Context, token string) (localCheckoutClaims, models.DomainPurchase, error) {
	var cl localCheckoutClaims
	if err := s.core.Signer().Open(localCheckoutPurpose, token, &cl); err != nil {
		return cl, models.DomainPurchase{}, models.Errorf(models.CodeNotFound, "This payment link is not valid.")
	}
	if cl.Expired(s.now()) {
		return cl, models.DomainPurchase{}, models.Errorf(models.CodeNotFound, "This payment link has expired; start the purchase again.")
	}
	// The signed link is the credential: it names one purchase of one
	// account, handed to that account's user by CreateCheckout.
	p, err := s.store.Growth().DomainPurchaseInPool(ctx, s.store.SystemConglomerateScope(cl.ConglomerateID), cl.PurchaseID)
	if errors.Is(err, models.ErrNotFound) {
		return cl, p, models.Errorf(models.CodeNotFound, "This purchase no longer exists.")
	}
	return cl, p, err
}

// ReadLocalCheckout reads the purchase a local payment link names.
func (s *Service) ReadLocalCheckout(ctx context.Context, token string) (LocalCheckout, error) {
	_, p, err := s.openLocalCheckout(ctx, token)
	return LocalCheckout{Purchase: p, Unicode: unicodeOf(p.Domain)}, err
}

// ConfirmLocalCheckout completes a local checkout (payments not
// configured): the purchase goes on as paid and its registration starts,
// but no money was received (paid_cents 0), so a failure refunds nothing.
// A name another purchase holds fails it at once, without a grant.
// Confirming twice changes nothing; an expired checkout is refused.
func (s *Service) ConfirmLocalCheckout(ctx context.Context, token string) (LocalCheckout, error) {
	if s.billing.PaymentsConfigured() {
		return LocalCheckout{}, models.Errorf(models.CodeNotFound, "Payments are handled by the payment provider on this server.")
	}
	cl, p, err := s.openLocalCheckout(ctx, token)
	if err != nil {
		return LocalCheckout{}, err
	}
	if p.State == models.DomainExpired {
		return LocalCheckout{}, models.Errorf(models.CodeNotFound, "This checkout expired unpaid; start the purchase again.")
	}
	scope := s.store.SystemConglomerateScope(cl.ConglomerateID)
	if err := s.MarkDomainPaid(ctx, scope, DomainPayment{PurchaseID: p.ID, CheckoutID: localCheckoutPrefix + p.ID}); err != nil {
		return LocalCheckout{}, err
	}
	p, err = s.store.Growth().DomainPurchaseInPool(ctx, scope, p.ID)
	return LocalCheckout{Purchase: p, Unicode: unicodeOf(p.Domain)}, err
}
