package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/service/growth"
)

// DomainSearchResultResponse is one line of a domain search.
type DomainSearchResultResponse struct {
	Domain        string  `json:"domain" doc:"The name in DNS (ASCII, punycode) form."`
	UnicodeDomain string  `json:"unicode_domain" doc:"The display form (the same as domain for ASCII names)."`
	Available     bool    `json:"available"`
	PriceCents    int64   `json:"price_cents" doc:"First-year price; 0 when the TLD is not offered."`
	Currency      string  `json:"currency" example:"usd"`
	Premium       bool    `json:"premium" doc:"A short name at a premium price."`
	Reason        *string `json:"reason" enum:"taken,tld_not_offered" doc:"Why an unavailable name cannot be bought; null when available."`
	Exact         bool    `json:"exact" doc:"The name searched for (a full domain), not a suggestion."`
}

// DomainPurchaseResponse is a domain of the conglomerate's pool.
type DomainPurchaseResponse struct {
	DomainPurchaseID    string     `json:"domain_purchase_id" format:"uuid"`
	Domain              string     `json:"domain"`
	UnicodeDomain       string     `json:"unicode_domain"`
	Status              string     `json:"status" enum:"awaiting_payment,order_pending,registered,failed,expired" doc:"awaiting_payment → order_pending (paid; the registrar is registering it) → registered, or failed (what was paid is refunded as credits: refunded_credits; a local confirmation pays nothing, so 0); an unpaid checkout ends expired at expires_at."`
	Parked              bool       `json:"parked" doc:"Registered and attached to no company (it stays in the pool)."`
	AttachedCompanyID   *string    `json:"attached_company_id" format:"uuid"`
	AttachedHere        bool       `json:"attached_here" doc:"Attached to the company of the request."`
	BoughtFromCompanyID string     `json:"bought_from_company_id" format:"uuid"`
	PriceCents          int64      `json:"price_cents"`
	Currency            string     `json:"currency"`
	FailureReason       *string    `json:"failure_reason"`
	RefundedCredits     int64      `json:"refunded_credits" doc:"Credits granted back when the purchase failed: the money received, rounded up to whole credits; 0 when nothing was paid."`
	ExpiresAt           *time.Time `json:"expires_at" doc:"When the checkout expires if it is still unpaid (null for purchases older than checkout expiry)."`
	CreatedAt           time.Time  `json:"created_at"`
	RegisteredAt        *time.Time `json:"registered_at"`
}

// DomainListResponse is the pool as a company sees it.
type DomainListResponse struct {
	Domains  []DomainPurchaseResponse `json:"domains" doc:"The domain attached to the company, the parked domains of the conglomerate and the domains bought from this company, newest first."`
	Attached *DomainPurchaseResponse  `json:"attached" doc:"The company's attached domain; null when none."`
}

// DomainCheckoutRequest buys a domain.
type DomainCheckoutRequest struct {
	Domain             string `json:"domain" maxLength:"253" doc:"A full domain name, e.g. example.com (Unicode names are accepted)."`
	ExpectedPriceCents *int64 `json:"expected_price_cents,omitempty" doc:"The price the buyer saw; a different current price answers 409 with price_cents."`
}

// DomainCheckoutResponse is the payment page of a new purchase.
type DomainCheckoutResponse struct {
	CheckoutURL string                 `json:"checkout_url" doc:"Open in a browser to pay. With payments configured it is the payment provider's checkout; otherwise holdco's local confirmation page."`
	Provider    string                 `json:"provider" enum:"stripe,local"`
	ExpiresAt   time.Time              `json:"expires_at"`
	Purchase    DomainPurchaseResponse `json:"purchase"`
}

func toDomainPurchase(e growth.PoolEntry) DomainPurchaseResponse {
	p := e.DomainPurchase
	r := DomainPurchaseResponse{DomainPurchaseID: p.ID, Domain: p.Domain, UnicodeDomain: e.Unicode, Status: string(p.State), Parked: p.Parked(),
		AttachedCompanyID: p.AttachedCompanyID, AttachedHere: e.AttachedHere, BoughtFromCompanyID: p.CompanyID, PriceCents: p.PriceCents,
		Currency: p.Currency, RefundedCredits: p.RefundedCredits, ExpiresAt: p.ExpiresAt, CreatedAt: p.CreatedAt, RegisteredAt: p.RegisteredAt}
	if p.FailureReason != "" {
		r.FailureReason = &p.FailureReason
	}
	return r
}

type domainHandlers struct{ svc *growth.Service }

func registerDomainRoutes(api huma.API, h *domainHandlers) {
	tags := []string{"domains"}
	huma.Register(api, huma.Operation{OperationID: "search-domains", Method: http.MethodGet, Path: "/companies/{company_id}/domains/search",
		Tags: tags, Summary: "Search domain names", Security: bearerSecurity,
		Description: "A bare name (one label) gives a suggestion grid over the configured TLDs; a full domain gives one exact check; an empty `q` suggests from the company's handle. " +
			"Names are checked by the IDNA rules (UTS #46, letters, digits and inner hyphens, labels of 1 to 63 and names of at most 253 characters in DNS form); an invalid name answers 422 with the reason."}, h.search)
	huma.Register(api, huma.Operation{OperationID: "create-domain-checkout", Method: http.MethodPost, Path: "/companies/{company_id}/domains/checkout-session",
		Tags: tags, Summary: "Buy a domain", Security: bearerSecurity,
		Description: "Re-verifies availability and price, stores the purchase (awaiting_payment) and opens its payment. After payment the purchase is order_pending until the registrar registers it " +
			"(then registered; attached to this company if it has no domain yet) or refuses (failed, the price refunded as credits). A name that is no longer available, or a changed price, answers 409. " +
			"People only: a company key is refused with 403."}, h.checkout)
	huma.Register(api, huma.Operation{OperationID: "list-domains", Method: http.MethodGet, Path: "/companies/{company_id}/domains",
		Tags: tags, Summary: "The conglomerate's domain pool as the company sees it", Security: bearerSecurity}, h.list)
	huma.Register(api, huma.Operation{OperationID: "attach-domain", Method: http.MethodPost, Path: "/companies/{company_id}/domains/{domain_purchase_id}/attach",
		Tags: tags, Summary: "Attach a registered pool domain", Security: bearerSecurity,
		Description: "Replaces the company's current domain (which is parked); the company's site is then served under it. A domain that is not registered yet answers 409 with its `state`; " +
			"another account's purchase 403; a purchase the company does not see (missing, or attached to another company of the pool) 404."}, h.attach)
	huma.Register(api, huma.Operation{OperationID: "detach-domain", Method: http.MethodPost, Path: "/companies/{company_id}/domains/{domain_purchase_id}/detach",
		Tags: tags, Summary: "Detach the company's domain", Security: bearerSecurity,
		Description: "The domain stays in the pool as parked; a domain not attached to this company answers 409 with its `state`."}, h.detach)
}

type domainSearchInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Q         string `query:"q" maxLength:"253" doc:"A bare name or a full domain; empty suggests from the company's handle."`
}

type domainSearchOutput struct{ Body []DomainSearchResultResponse }

func (h *domainHandlers) search(ctx context.Context, in *domainSearchInput) (*domainSearchOutput, error) {
	rs, err := h.svc.Search(ctx, in.CompanyID, in.Q)
	if err != nil {
		return nil, err
	}
	out := make([]DomainSearchResultResponse, 0, len(rs))
	for _, r := range rs {
		line := DomainSearchResultResponse{Domain: r.Domain, UnicodeDomain: r.Unicode, Available: r.Available, PriceCents: r.PriceCents,
			Currency: r.Currency, Premium: r.Premium, Exact: r.Exact}
		if r.Reason != "" {
			line.Reason = &r.Reason
		}
		out = append(out, line)
	}
	return &domainSearchOutput{Body: out}, nil
}

type domainCheckoutInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Body      DomainCheckoutRequest
}

type domainCheckoutOutput struct{ Body DomainCheckoutResponse }

func (h *domainHandlers) checkout(ctx context.Context, in *domainCheckoutInput) (*domainCheckoutOutput, error) {
	c, err := h.svc.CreateCheckout(ctx, in.CompanyID, growth.CheckoutInput{Domain: in.Body.Domain, ExpectedPriceCents: in.Body.ExpectedPriceCents})
	if err != nil {
		return nil, err
	}
	return &domainCheckoutOutput{Body: DomainCheckoutResponse{CheckoutURL: c.URL, Provider: c.Provider, ExpiresAt: c.ExpiresAt,
		Purchase: toDomainPurchase(growth.PoolEntry{DomainPurchase: c.Purchase, Unicode: c.Purchase.Domain})}}, nil
}

type domainListOutput struct{ Body DomainListResponse }

func (h *domainHandlers) list(ctx context.Context, in *companyIDInput) (*domainListOutput, error) {
	es, err := h.svc.ListDomains(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	out := DomainListResponse{Domains: make([]DomainPurchaseResponse, 0, len(es))}
	for _, e := range es {
		r := toDomainPurchase(e)
		out.Domains = append(out.Domains, r)
		if e.AttachedHere {
			out.Attached = &r
		}
	}
	return &domainListOutput{Body: out}, nil
}

type domainPurchaseInput struct {
	CompanyID        string `path:"company_id" format:"uuid"`
	DomainPurchaseID string `path:"domain_purchase_id" format:"uuid"`
}

type domainPurchaseOutput struct{ Body DomainPurchaseResponse }

func (h *domainHandlers) attach(ctx context.Context, in *domainPurchaseInput) (*domainPurchaseOutput, error) {
	e, err := h.svc.Attach(ctx, in.CompanyID, in.DomainPurchaseID)
	if err != nil {
		return nil, err
	}
	return &domainPurchaseOutput{Body: toDomainPurchase(e)}, nil
}

func (h *domainHandlers) detach(ctx context.Context, in *domainPurchaseInput) (*domainPurchaseOutput, error) {
	e, err := h.svc.Detach(ctx, in.CompanyID, in.DomainPurchaseID)
	if err != nil {
		return nil, err
	}
	return &domainPurchaseOutput{Body: toDomainPurchase(e)}, nil
}
