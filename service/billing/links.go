package billing

import (
	"context"
	"errors"
	"holdco/models"
	"holdco/service"
	"net/url"
)

// DashboardPath is the web app's page for an account (billing, payouts,
// companies), opened with ?conglomerate_id=<id>. The frontend serves it;
// without a frontend, holdco's own minimal pages answer it with HTML. It
// is never a REST route, so a browser following a dashboard link, or
// coming back from checkout or the billing portal, gets a page, not JSON.
const DashboardPath = "/dashboard"

// DashboardURL is the web app's page for the account.
func (s *Service) DashboardURL(conglomerateID string) string {
	return s.cfg.FrontendURL + DashboardPath + "?conglomerate_id=" + url.QueryEscape(conglomerateID)
}

// billingLinkClaims is the signed payload of a billing link.
type billingLinkClaims struct {
	ConglomerateID string `json:"c"`
	Action         string `json:"a"`
	Credits        int64  `json:"n,omitempty"`
	service.Expiring
}

const billingLinkPurpose = "billing-link"

func (s *Service) billingLink(conglomerateID, action string, credits int64) string {
	tok, _ := s.sign.Seal(billingLinkPurpose, billingLinkClaims{ConglomerateID: conglomerateID, Action: action, Credits: credits,
		Expiring: service.Expiring{Exp: s.now().Add(billingLinkTTL).Unix()}})
	return s.cfg.PublicURL + BillingLinkPath + "?t=" + url.QueryEscape(tok)
}

// FollowBillingLink opens what a billing link names (a checkout session or
// the customer portal) and returns the provider's page to redirect to. The
// link itself is the credential: it was handed to the account's user and
// can only start a payment for that account or show its billing.
func (s *Service) FollowBillingLink(ctx context.Context, token string) (string, error) {
	var cl billingLinkClaims
	if err := s.sign.Open(billingLinkPurpose, token, &cl); err != nil {
		return "", models.Errorf(models.CodeNotFound, "This billing link is not valid.")
	}
	if cl.Expired(s.now()) {
		return "", models.Errorf(models.CodeNotFound, "This billing link has expired; ask for a new one.")
	}
	c, err := s.store.Identity().GetConglomerate(ctx, cl.ConglomerateID)
	if errors.Is(err, models.ErrNotFound) {
		return "", models.Errorf(models.CodeNotFound, "The account of this billing link no longer exists.")
	}
	if err != nil {
		return "", err
	}
	// The signed link is the credential the account's user was handed: it
	// authorizes this one action on its conglomerate.
	v := service.ConglomerateView{Conglomerate: c, Scope: s.store.SystemConglomerateScope(c.ID)}
	switch cl.Action {
	case linkTopUp:
		cs, err := s.checkout(ctx, v, models.CheckoutTopUp, cl.Credits)
		return cs.URL, err
	case linkUpgrade:
		cs, err := s.checkout(ctx, v, models.CheckoutPlan, 0)
		return cs.URL, err
	case linkPortal:
		return s.portal(ctx, c)
	}
	return "", models.Errorf(models.CodeNotFound, "This billing link is not valid.")
}

// requirePayments answers when payments are not configured.
func (s *Service) requirePayments() error {
	if s.payments == nil {
		return models.Errorf(models.CodeConflict, "Payments are not configured on this server.").With("reason", reasonPaymentsNotConfigured)
	}
	return nil
}

// billingOwner authorizes a payment action: only the account's owner pays.
func (s *Service) billingOwner(ctx context.Context, conglomerateID string) (service.ConglomerateView, error) {
	v, err := s.core.AuthorizeOwner(ctx, conglomerateID)
	if err != nil {
		return v, err
	}
	return v, s.requirePayments()
}
