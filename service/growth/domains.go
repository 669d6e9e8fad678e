package growth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// SearchResult is one line of a domain search.
type SearchResult struct {
	models.DomainAvailability
	// Unicode is the display form of Domain (the same for ASCII names).
	Unicode string
	// Exact: the name that was searched (not a suggestion).
	Exact bool
}

// Search checks a domain (a full name: one exact result) or suggests one
// per configured TLD (a bare name; an empty q takes the company's
// handle). A name another purchase holds is taken whatever the registrar
// says.
func (s *Service) Search(ctx context.Context, companyID, q string) ([]SearchResult, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return nil, err
	}
	parsed, perr := parseQuery(q)
	if perr != nil {
		return nil, perr
	}
	if err := s.requireRegistrar(); err != nil {
		return nil, err
	}
	var names []string
	switch {
	case parsed.domain != "":
		names = []string{parsed.domain}
	default:
		label := parsed.label
		if label == "" {
			label = ac.Handle
		}
		for _, tld := range s.tlds {
			names = append(names, label+"."+tld)
		}
	}
	avail, err := s.registrar.Search(ctx, names)
	if err != nil {
		return nil, models.Errorf(models.CodeUpstreamUnavailable, "The domain registrar did not answer; retry shortly.").Wrap(err)
	}
	held, err := s.store.Growth().HeldDomains(ctx, names)
	if err != nil {
		return nil, err
	}
	out := make([]SearchResult, 0, len(avail))
	for _, a := range avail {
		if held[a.Domain] && a.Available {
			a.Available, a.Reason = false, "taken"
		}
		out = append(out, SearchResult{DomainAvailability: a, Unicode: unicodeOf(a.Domain), Exact: a.Domain == parsed.domain})
	}
	return out, nil
}

// CheckoutInput is a domain to buy; ExpectedPriceCents, when given, must
// still be the price (a changed price is a conflict carrying the new one).
type CheckoutInput struct {
	Domain             string
	ExpectedPriceCents *int64
}

// Checkout is an open payment for a domain purchase.
type Checkout struct {
	Purchase models.DomainPurchase
	// URL is the payment page: the payment provider's checkout, or, when
	// payments are not configured, holdco's local confirmation page.
	URL       string
	Provider  string // "stripe" or "local"
	ExpiresAt time.Time
}

// Checkout providers.
const (
	ProviderStripe = "stripe"
	ProviderLocal  = "local"
)

// localCheckoutTTL is how long a local confirmation link works.
const localCheckoutTTL = time.Hour

// LocalCheckoutPath is holdco's local confirmation page (payments not
// configured).
const LocalCheckoutPath = "/domains/checkout/confirm"

const localCheckoutPurpose = "domain-checkout"

type localCheckoutClaims struct {
	PurchaseID     string `json:"p"`
	ConglomerateID string `json:"c"`
	service.Expiring
}

// CreateCheckout re-checks that the domain is available at its price,
// stores the purchase (awaiting payment) and opens its payment. Only a
// person may buy (a company key is forbidden: agents do not spend money
// on domains).
func (s *Service) CreateCheckout(ctx context.Context, companyID string, in CheckoutInput) (Checkout, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Checkout{}, err
	}
	if p, ok := service.PrincipalFrom(ctx); !ok || !p.IsUser() {
		return Checkout{}, models.Errorf(models.CodeForbidden, "Only the account's people can buy domains.")
	}
	parsed, perr := parseQuery(in.Domain)
	if perr != nil {
		return Checkout{}, perr.WithField("domain")
	}
	if parsed.domain == "" {
		return Checkout{}, models.Errorf(models.CodeInvalidArgument, "domain must be a full domain name such as example.com.").WithField("domain")
	}
	if err := s.requireRegistrar(); err != nil {
		return Checkout{}, err
	}
	avail, err := s.registrar.Search(ctx, []string{parsed.domain})
	if err != nil || len(avail) != 1 {
		return Checkout{}, models.Errorf(models.CodeUpstreamUnavailable, "The domain registrar did not answer; retry shortly.").Wrap(err)
	}
	a := avail[0]
	held, err := s.store.Growth().HeldDomains(ctx, []string{a.Domain})
	if err != nil {
		return Checkout{}, err
	}
	if !a.Available || held[a.Domain] {
		reason := a.Reason
		if reason == "" {
			reason = "taken"
		}
		return Checkout{}, models.Errorf(models.CodeConflict, "%s is not available (%s).", a.Domain, reason).With("reason", reason).WithField("domain")
	}
	if in.ExpectedPriceCents != nil && *in.ExpectedPriceCents != a.PriceCents {
		return Checkout{}, models.Errorf(models.CodeConflict, "The price of %s is now %d cents, not %d; confirm the new price.", a.Domain, a.PriceCents, *in.ExpectedPriceCents).
			With("reason", "price_changed").With("price_cents", a.PriceCents)
	}
	exp := s.now().Add(localCheckoutTTL)
	p, err := s.store.Growth().CreateDomainPurchase(ctx, ac.Scope, models.DomainPurchase{Domain: a.Domain, PriceCents: a.PriceCents, Currency: a.Currency, ExpiresAt: &exp})
	if err != nil {
		return Checkout{}, err
	}
	out := Checkout{Purchase: p}
	if s.billing.PaymentsConfigured() {
		cfg := s.core.Config()
		back := cfg.FrontendURL + "/dashboard?company_id=" + url.QueryEscape(ac.ID) + "&domain_purchase_id=" + url.QueryEscape(p.ID)
		cs, err := s.billing.CheckoutDomain(ctx, ac.Scope, models.CheckoutRequest{PurchaseID: p.ID, Domain: p.Domain, AmountCents: p.PriceCents}, back)
		if err != nil {
			return Checkout{}, err
		}
		out.URL, out.Provider, out.ExpiresAt = cs.URL, ProviderStripe, cs.ExpiresAt
		// The row outlives the session by a grace, so a payment made just
		// before the session ended finds it still waiting.
		rowExp := s.now().Add(StripeCheckoutTTL)
		if !cs.ExpiresAt.IsZero() {
			rowExp = cs.ExpiresAt
		}
		rowExp = rowExp.Add(CheckoutExpiryGrace)
		if err := s.store.Growth().SetDomainCheckout(ctx, ac.Scope, p.ID, cs.ID, rowExp); err != nil {
			return Checkout{}, err
		}
		out.Purchase.CheckoutID, out.Purchase.ExpiresAt = cs.ID, &rowExp
		return out, nil
	}
	tok, err := s.core.Signer().Seal(localCheckoutPurpose, localCheckoutClaims{PurchaseID: p.ID, ConglomerateID: ac.ConglomerateID, Expiring: service.Expiring{Exp: exp.Unix()}})
	if err != nil {
		return Checkout{}, err
	}
	out.URL, out.Provider, out.ExpiresAt = s.core.Config().PublicURL+LocalCheckoutPath+"?t="+url.QueryEscape(tok), ProviderLocal, exp
	return out, nil
}

// Unpaid checkouts end: a local confirmation link works for
// localCheckoutTTL, and the row expires with it; a provider's checkout
// row expires CheckoutExpiryGrace after its session (StripeCheckoutTTL
// when the provider names no end). The growth sweeper expires them.
const (
	StripeCheckoutTTL   = 24 * time.Hour
	CheckoutExpiryGrace = time.Hour
)

// DomainPayment is a paid domain checkout as the payment provider reports
// it.
type DomainPayment struct {
	PurchaseID string
	CheckoutID string
	// AmountCents is the money received (the session's amount_total):
	// what a failed purchase may give back as credits, never more.
	AmountCents int64
}

// MarkDomainPaid records a paid checkout with the money received and
// starts the registration (the payment webhook's and the local page's
// path; an error makes the provider deliver the event again). A
// domain another paid purchase took meanwhile fails at once, giving back
// as credits what was received and nothing more: a local confirmation
// (payments not configured) received nothing, so it grants nothing.
func (s *Service) MarkDomainPaid(ctx context.Context, scope store.ConglomerateScope, pay DomainPayment) error {
	p, err := s.store.Growth().DomainPurchaseInPool(ctx, scope, pay.PurchaseID)
	if errors.Is(err, models.ErrNotFound) {
		s.logger.WarnContext(ctx, "domain payment for no known purchase: ignored", "purchase", pay.PurchaseID)
		return nil
	}
	if err != nil {
		return err
	}
	local := strings.HasPrefix(pay.CheckoutID, localCheckoutPrefix)
	paid := store.DomainPaid{CheckoutID: strings.TrimPrefix(pay.CheckoutID, "checkout:"), PaidCents: max(pay.AmountCents, 0), At: s.now(), Revive: !local}
	if local {
		paid.PaidCents = 0
	}
	changed, err := s.store.Growth().MarkDomainPaid(ctx, scope, p.ID, paid)
	if errors.Is(err, models.ErrDuplicate) {
		credits := s.refundCredits(paid.PaidCents)
		reason := "Another purchase registered this domain first; nothing was charged."
		if credits > 0 {
			if _, err := s.billing.GrantOnce(ctx, scope, p.CompanyID, models.EntryRefund, credits, "domain "+p.Domain, "domain-refund/"+p.ID); err != nil {
				return err
			}
			reason = fmt.Sprintf("Another purchase registered this domain first; the %d cents paid were refunded as %d credits.", paid.PaidCents, credits)
		}
		return s.store.Growth().FailUnpaidDomain(ctx, scope, p.ID, reason, paid, credits)
	}
	if err != nil {
		return err
	}
	if changed || (p.State == models.DomainOrderPending && !p.WorkflowStarted) {
		if changed {
			p.State, p.PaidCents = models.DomainOrderPending, paid.PaidCents
		}
		s.startDomain(ctx, scope, p)
	}
	return nil
}

const localCheckoutPrefix = "local:"

// refundCredits is money received in credits, rounded up (0 for none).
func (s *Service) refundCredits(cents int64) int64 {
	if cents <= 0 {
		return 0
	}
	per := s.billing.CreditPriceCents()
	return (cents + per - 1) / per
}

// PoolEntry is a domain of the pool as one company sees it.
type PoolEntry struct {
	models.DomainPurchase
	Unicode string
	// AttachedHere: attached to the company asking.
	AttachedHere bool
}

func (s *Service) entry(companyID string, p models.DomainPurchase) PoolEntry {
	return PoolEntry{DomainPurchase: p, Unicode: unicodeOf(p.Domain), AttachedHere: p.AttachedCompanyID != nil && *p.AttachedCompanyID == companyID}
}

// ListDomains lists the pool as the company sees it: the domain attached
// to it, the parked ones of its conglomerate and the ones bought from it.
func (s *Service) ListDomains(ctx context.Context, companyID string) ([]PoolEntry, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return nil, err
	}
	ps, err := s.store.Growth().DomainPool(ctx, ac.Scope)
	if err != nil {
		return nil, err
	}
	out := make([]PoolEntry, 0, len(ps))
	for _, p := range ps {
		out = append(out, s.entry(ac.ID, p))
	}
	return out, nil
}

// visible is the pool's rule: a company sees a purchase attached to it,
// parked, or bought from it.
func visible(companyID string, p models.DomainPurchase) bool {
	return p.CompanyID == companyID || p.Parked() || (p.AttachedCompanyID != nil && *p.AttachedCompanyID == companyID)
}

// pooled authorizes the company and reads a purchase it may see: another
// account's is forbidden, a missing one or one the company does not see
// not_found.
func (s *Service) pooled(ctx context.Context, companyID, purchaseID string) (service.AuthorizedCompany, models.DomainPurchase, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return ac, models.DomainPurchase{}, err
	}
	p, err := s.store.Growth().DomainPurchaseOf(ctx, ac.Scope, purchaseID)
	switch {
	case errors.Is(err, store.ErrForbidden):
		return ac, p, models.Errorf(models.CodeForbidden, "Domain purchase %s belongs to another account.", purchaseID)
	case errors.Is(err, models.ErrNotFound):
		return ac, p, models.Errorf(models.CodeNotFound, "There is no domain purchase %s.", purchaseID)
	case err != nil:
		return ac, p, err
	}
	if !visible(ac.ID, p) {
		return ac, p, models.Errorf(models.CodeNotFound, "Domain purchase %s is not in this company's view of the pool (it is attached to another company).", purchaseID)
	}
	return ac, p, nil
}

// Attach attaches a registered domain of the pool to the company,
// replacing the one it had (which is parked); the company's site is then
// served under it. A domain not registered yet is a conflict naming its
// state.
func (s *Service) Attach(ctx context.Context, companyID, purchaseID string) (PoolEntry, error) {
	ac, p, err := s.pooled(ctx, companyID, purchaseID)
	if err != nil {
		return PoolEntry{}, err
	}
	p, err = s.store.Growth().AttachDomain(ctx, ac.Scope, p.ID, models.ActivityInput{Kind: models.ActivityDomainAttached, Actor: service.ActorOf(ctx),
		Summary: fmt.Sprintf("Domain %s attached", unicodeOf(p.Domain)), Subject: p.ID, Data: map[string]any{"domain": p.Domain}})
	if errors.Is(err, store.ErrDomainState) {
		if p.State != models.DomainRegistered {
			return PoolEntry{}, models.Errorf(models.CodeConflict, "%s is %s; it can be attached once registered.", p.Domain, p.State).With("state", string(p.State))
		}
		return PoolEntry{}, models.Errorf(models.CodeConflict, "%s is attached to another company; detach it there first.", p.Domain).With("state", "attached")
	}
	if err != nil {
		return PoolEntry{}, err
	}
	return s.entry(ac.ID, p), nil
}

// Detach parks the domain attached to the company: it stays in the pool.
func (s *Service) Detach(ctx context.Context, companyID, purchaseID string) (PoolEntry, error) {
	ac, p, err := s.pooled(ctx, companyID, purchaseID)
	if err != nil {
		return PoolEntry{}, err
	}
	p, err = s.store.Growth().DetachDomain(ctx, ac.Scope, p.ID, models.ActivityInput{Kind: models.ActivityDomainDetached, Actor: service.ActorOf(ctx),
		Summary: fmt.Sprintf("Domain %s detached (parked)", unicodeOf(p.Domain)), Subject: p.ID, Data: map[string]any{"domain": p.Domain}})
	if errors.Is(err, store.ErrDomainState) {
		state := string(p.State)
		if p.Parked() {
			state = "parked"
		}
		return PoolEntry{}, models.Errorf(models.CodeConflict, "%s is not attached to this company (it is %s).", p.Domain, state).With("state", state)
	}
	if err != nil {
		return PoolEntry{}, err
	}
	return s.entry(ac.ID, p), nil
}

// Worker side: the domain workflow's activities.

// PlaceOrder places (once) the registrar order of a paid purchase and
// returns its id.
func (s *Service) PlaceOrder(ctx context.Context, scope store.ConglomerateScope, purchaseID string) (string, error) {
	if err := s.requireRegistrar(); err != nil {
		return "", err
	}
	p, err := s.store.Growth().DomainPurchaseInPool(ctx, scope, purchaseID)
	if err != nil {
		return "", err
	}
	if p.OrderID != "" {
		return p.OrderID, nil
	}
	id, err := s.registrar.Register(ctx, p.Domain, p.ID)
	if err != nil {
		return "", err
	}
	return id, s.store.Growth().SetDomainOrder(ctx, scope, p.ID, id)
}

// OrderStatus asks the registrar about an order.
func (s *Service) OrderStatus(ctx context.Context, orderID string) (models.RegistrarOrder, error) {
	if err := s.requireRegistrar(); err != nil {
		return models.RegistrarOrder{}, err
	}
	return s.registrar.Status(ctx, orderID)
}

// FinishPurchase records the order's end once: registered (attached to
// the buying company when it has no domain yet) or failed with the price
// refunded as credits.
func (s *Service) FinishPurchase(ctx context.Context, scope store.ConglomerateScope, purchaseID string, registered bool, reason string) (models.DomainPurchase, error) {
	p, err := s.store.Growth().DomainPurchaseInPool(ctx, scope, purchaseID)
	if err != nil {
		return p, err
	}
	o := store.DomainOutcome{Registered: registered, At: s.now()}
	ev := models.ActivityInput{Kind: models.ActivityDomainRegistered, Actor: models.ActorSystem, Subject: p.ID,
		Summary: fmt.Sprintf("Domain %s registered", unicodeOf(p.Domain)), Data: map[string]any{"domain": p.Domain}}
	if registered {
		o.AttachTo = p.CompanyID
	} else {
		if reason == "" {
			reason = "The registrar refused the order."
		}
		// Only the money received is given back: a local confirmation
		// received none.
		o.FailureReason, o.RefundedCredits = truncate(reason, 500), s.refundCredits(p.PaidCents)
		if p.State == models.DomainOrderPending && o.RefundedCredits > 0 {
			if _, err := s.billing.GrantOnce(ctx, scope, p.CompanyID, models.EntryRefund, o.RefundedCredits, "domain "+p.Domain, "domain-refund/"+p.ID); err != nil {
				return p, err
			}
		}
		ev.Kind = models.ActivityDomainFailed
		ev.Summary = fmt.Sprintf("Domain %s could not be registered; %d credits refunded", unicodeOf(p.Domain), o.RefundedCredits)
		if o.RefundedCredits == 0 {
			ev.Summary = fmt.Sprintf("Domain %s could not be registered; nothing was paid, nothing refunded", unicodeOf(p.Domain))
		}
	}
	p, _, err = s.store.Growth().FinishDomainPurchase(ctx, scope, p.ID, o, ev)
	return p, err
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}
