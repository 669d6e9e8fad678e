// Package sales holds the use cases of a company's own sales: the
// products its customers buy and their checkout links, created on the
// connected (payout) account of the company's conglomerate; the events of
// that account (payments, refunds, subscriptions) recorded once each as
// the company's revenue; revenue, payments and subscriptions read back;
// and cancelling a customer's subscription. REST, the agents' tools and
// the connector's cancel_subscription call these with typed inputs.
package sales

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/store"
)

// Payments is what the company's sales need of the payment provider
// (providers/stripepay). Every call acts on the conglomerate's connected
// account.
type Payments interface {
	CreateProduct(context.Context, models.ProductRequest) (models.ProviderProduct, error)
	CreatePaymentLink(context.Context, models.PaymentLinkRequest) (models.PaymentLink, error)
	// CancelCustomerSubscription cancels at once; one the provider no
	// longer knows is reported canceled.
	CancelCustomerSubscription(ctx context.Context, accountID, subscriptionID string) (models.SalesSubscription, error)
	// ParseSalesWebhook verifies an event of the Connect webhook endpoint
	// (models.ErrBadSignature) and reduces it to what sales record.
	ParseSalesWebhook(ctx context.Context, payload []byte, signature string) (models.SalesEvent, error)
	// DeactivateProduct deactivates a product and its price.
	DeactivateProduct(ctx context.Context, accountID, productID, priceID string) error
	Livemode() bool
}

// Service is the sales use cases.
type Service struct {
	core     *service.Core
	store    *store.Store
	logger   *slog.Logger
	now      func() time.Time
	billing  *billing.Service
	payments Payments
}

// New builds the sales use cases. payments nil: sales are not configured
// (no payment provider, or no signing secret for the Connect webhook
// endpoint, without which no sale could be recorded).
func New(core *service.Core, bill *billing.Service, payments Payments) *Service {
	return &Service{core: core, store: core.Store(), logger: core.Logger(), now: core.Clock(), billing: bill, payments: payments}
}

// Product rules.
const (
	MaxProductName        = 200
	MaxProductDescription = 2000
	// MinPriceCents and MaxPriceCents are the provider's bounds for one
	// charge in US dollars.
	MinPriceCents = 50
	MaxPriceCents = 99_999_999
	// RecentPayments is how many payments the revenue report lists.
	RecentPayments  = 10
	MaxPaymentsPage = 100
)

// Reasons of the sales refusals (409 conflict), beside `reason`.
const (
	ReasonPaymentsNotConfigured = "payments_not_configured"
	ReasonSalesNotConfigured    = "sales_not_configured"
	ReasonOnboardingIncomplete  = "payout_onboarding_incomplete"
	ReasonProductInactive       = "product_inactive"
)

// ProductInput is a product to sell, with its one price.
type ProductInput struct {
	Name        string
	Description string
	PriceCents  int64
	// Currency is ISO 4217 in lower case; "" is the sales currency (usd),
	// the only one for now.
	Currency string
	// Interval is "" (one-time), "month" or "year".
	Interval models.BillingInterval
}

func (in *ProductInput) check() error {
	in.Name, in.Description = strings.TrimSpace(in.Name), strings.TrimSpace(in.Description)
	in.Currency = strings.ToLower(strings.TrimSpace(in.Currency))
	if in.Currency == "" {
		in.Currency = models.SalesCurrency
	}
	switch {
	case in.Name == "" || utf8.RuneCountInString(in.Name) > MaxProductName:
		return models.Errorf(models.CodeInvalidArgument, "A product name is 1 to %d characters.", MaxProductName).WithField("name")
	case utf8.RuneCountInString(in.Description) > MaxProductDescription:
		return models.Errorf(models.CodeInvalidArgument, "A product description is at most %d characters.", MaxProductDescription).WithField("description")
	case in.PriceCents < MinPriceCents || in.PriceCents > MaxPriceCents:
		return models.Errorf(models.CodeInvalidArgument, "price_cents must be from %d to %d.", MinPriceCents, MaxPriceCents).WithField("price_cents")
	case in.Currency != models.SalesCurrency:
		return models.Errorf(models.CodeInvalidArgument, "Companies sell in %s only for now.", models.SalesCurrency).WithField("currency")
	case in.Interval != models.IntervalOnce && !in.Interval.Recurring():
		return models.Errorf(models.CodeInvalidArgument, `interval must be "" (one-time), "month" or "year".`).WithField("interval")
	}
	return nil
}

// seller is an authorized company whose conglomerate can take payments.
type seller struct {
	service.AuthorizedCompany
	account string
}

// authorizeSeller authorizes the company (not archived: an archived
// company sells nothing) and checks that its conglomerate can take
// payments: sales configured and payout onboarding far enough for charges.
func (s *Service) authorizeSeller(ctx context.Context, companyID string) (seller, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return seller{}, err
	}
	if err := s.requireSales(); err != nil {
		return seller{}, err
	}
	cong, err := s.store.Identity().GetConglomerate(ctx, c.Scope.ConglomerateID())
	if err != nil {
		return seller{}, err
	}
	b := cong.Billing
	if b.ConnectAccountID == nil || *b.ConnectAccountID == "" || !b.ConnectChargesEnabled {
		state := "not_started"
		if b.ConnectAccountID != nil && *b.ConnectAccountID != "" {
			state = "pending"
		}
		return seller{}, models.Errorf(models.CodeConflict, "The account's payout onboarding is not complete, so its companies cannot take payments yet; its owner finishes it from the dashboard.").
			With("reason", ReasonOnboardingIncomplete).With("connect_state", state).
			With("links", map[string]any{"onboarding": s.billing.DashboardURL(cong.ID)})
	}
	return seller{AuthorizedCompany: c, account: *b.ConnectAccountID}, nil
}

func (s *Service) requireSales() error {
	if s.payments == nil {
		if !s.billing.PaymentsConfigured() {
			return models.Errorf(models.CodeConflict, "Payments are not configured on this server.").With("reason", ReasonPaymentsNotConfigured)
		}
		return models.Errorf(models.CodeConflict, "Sales are not configured on this server: the Connect webhook endpoint has no signing secret, so no payment could be recorded.").
			With("reason", ReasonSalesNotConfigured)
	}
	return nil
}

func upstream(detail string, err error) *models.Error {
	return models.Errorf(models.CodeUpstreamUnavailable, "%s", detail).Wrap(err)
}

// CreateProduct creates a product and its price on the connected account
// and records it for the company.
func (s *Service) CreateProduct(ctx context.Context, companyID string, in ProductInput) (models.Product, error) {
	if err := in.check(); err != nil {
		return models.Product{}, err
	}
	c, err := s.authorizeSeller(ctx, companyID)
	if err != nil {
		return models.Product{}, err
	}
	// The row first (pending), then the provider's product and price keyed
	// by its id (idempotency keys), then the row completed: a create whose
	// provider call or completion failed leaves a pending row, and the
	// retry of the same product resumes it with the same keys, so the
	// provider returns the objects it made instead of making more.
	//
	// A call (service.Call in ctx) names its product: the same call made
	// again answers the product it created (or resumes it while pending).
	id := service.EffectID(ctx, "product")
	var p models.Product
	if service.Keyed(ctx) {
		p, err = s.store.Sales().ProductByID(ctx, c.Scope, id)
		if err == nil && !p.Pending {
			return p, nil
		}
	} else {
		p, err = s.store.Sales().PendingProduct(ctx, c.Scope, models.Product{ProviderAccountID: c.account, Name: in.Name, Description: in.Description,
			PriceCents: in.PriceCents, Currency: in.Currency, Interval: in.Interval})
	}
	if errors.Is(err, models.ErrNotFound) {
		p, err = s.store.Sales().CreateProduct(ctx, c.Scope, models.Product{ID: id, ProviderAccountID: c.account, ProviderProductID: "pending:" + id,
			Name: in.Name, Description: in.Description, PriceCents: in.PriceCents, Currency: in.Currency, Interval: in.Interval,
			Pending: true, CreatedAt: s.now()})
	}
	if err != nil {
		return models.Product{}, err
	}
	pp, err := s.payments.CreateProduct(ctx, models.ProductRequest{AccountID: c.account, CompanyID: c.ID, ProductID: p.ID, Name: in.Name,
		Description: in.Description, PriceCents: in.PriceCents, Currency: in.Currency, Interval: in.Interval})
	if err != nil {
		return models.Product{}, upstream("The payment provider could not create the product; retry shortly.", err)
	}
	return s.store.Sales().ActivateProduct(ctx, c.Scope, p.ID, pp.ProductID, pp.PriceID)
}

// ListProducts lists the company's products, newest first.
func (s *Service) ListProducts(ctx context.Context, companyID string) ([]models.Product, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, true)
	if err != nil {
		return nil, err
	}
	return s.store.Sales().ListProducts(ctx, c.Scope)
}

// CheckoutLinkInput shapes a checkout link.
type CheckoutLinkInput struct {
	// SuccessURL is where the customer lands after paying (absolute http
	// or https); "" keeps the provider's confirmation page.
	SuccessURL string
}

// CreateCheckoutLink returns a reusable page where the company's customers
// buy one of its products.
func (s *Service) CreateCheckoutLink(ctx context.Context, companyID, productID string, in CheckoutLinkInput) (models.PaymentLink, error) {
	if in.SuccessURL != "" {
		u, err := url.Parse(in.SuccessURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(in.SuccessURL) > 2048 {
			return models.PaymentLink{}, models.Errorf(models.CodeInvalidArgument, "success_url must be an absolute http(s) URL of at most 2048 characters.").WithField("success_url")
		}
	}
	c, err := s.authorizeSeller(ctx, companyID)
	if err != nil {
		return models.PaymentLink{}, err
	}
	p, err := s.store.Sales().GetProduct(ctx, c.Scope, productID)
	if errors.Is(err, models.ErrNotFound) {
		return models.PaymentLink{}, models.Errorf(models.CodeNotFound, "Product %s does not exist in this company.", productID)
	}
	if err != nil {
		return models.PaymentLink{}, err
	}
	if !p.Active {
		return models.PaymentLink{}, models.Errorf(models.CodeConflict, "Product %s is no longer sold.", productID).With("reason", ReasonProductInactive)
	}
	// Keyed at the provider by the call (a new key without one): the same
	// call made again gets the link the provider made the first time.
	link, err := s.payments.CreatePaymentLink(ctx, models.PaymentLinkRequest{AccountID: p.ProviderAccountID, CompanyID: c.ID, ProductID: p.ID,
		PriceID: p.ProviderPriceID, Recurring: p.Interval.Recurring(), SuccessURL: in.SuccessURL,
		IdempotencyKey: "holdco-link-" + service.EffectID(ctx, "payment_link")})
	if err != nil {
		return models.PaymentLink{}, upstream("The payment provider could not create the checkout link; retry shortly.", err)
	}
	return link, nil
}

// RevenueReport is the company's revenue with its latest payments.
type RevenueReport struct {
	models.Revenue
	RecentPayments []models.CompanyPayment
}

// Revenue reports the company's balance, lifetime earnings and latest
// payments. Archived companies keep theirs.
func (s *Service) Revenue(ctx context.Context, companyID string) (RevenueReport, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, true)
	if err != nil {
		return RevenueReport{}, err
	}
	rev, err := s.store.Sales().CompanyRevenue(ctx, c.Scope)
	if err != nil {
		return RevenueReport{}, err
	}
	ps, err := s.store.Sales().ListCompanyPayments(ctx, c.Scope, RecentPayments)
	if err != nil {
		return RevenueReport{}, err
	}
	return RevenueReport{Revenue: rev, RecentPayments: ps}, nil
}

// ListPayments lists the company's latest payments, newest first (limit
// 1 to MaxPaymentsPage; 0 is RecentPayments).
func (s *Service) ListPayments(ctx context.Context, companyID string, limit int) ([]models.CompanyPayment, error) {
	if limit == 0 {
		limit = RecentPayments
	}
	if limit < 1 || limit > MaxPaymentsPage {
		return nil, models.Errorf(models.CodeInvalidArgument, "limit must be from 1 to %d.", MaxPaymentsPage).WithField("limit")
	}
	c, err := s.core.AuthorizeCompany(ctx, companyID, true)
	if err != nil {
		return nil, err
	}
	return s.store.Sales().ListCompanyPayments(ctx, c.Scope, limit)
}

// ListSubscriptions lists the subscriptions the company's customers
// bought, newest first.
func (s *Service) ListSubscriptions(ctx context.Context, companyID string) ([]models.CustomerSubscription, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, true)
	if err != nil {
		return nil, err
	}
	return s.store.Sales().ListCustomerSubscriptions(ctx, c.Scope)
}

// CancelSubscription cancels, at once, a subscription one of the
// company's customers bought (named by holdco's id or the provider's).
// Only a subscription recorded for this company: any other is not_found.
// Cancelling a canceled subscription answers it as it is.
func (s *Service) CancelSubscription(ctx context.Context, companyID, subscriptionID string) (models.CustomerSubscription, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, true)
	if err != nil {
		return models.CustomerSubscription{}, err
	}
	sub, err := s.store.Sales().GetCustomerSubscription(ctx, c.Scope, subscriptionID)
	if errors.Is(err, models.ErrNotFound) {
		return sub, models.Errorf(models.CodeNotFound, "Subscription %s does not exist in this company.", subscriptionID)
	}
	if err != nil || sub.Status == models.SubscriptionCanceled {
		return sub, err
	}
	if err := s.requireSales(); err != nil {
		return sub, err
	}
	st, err := s.payments.CancelCustomerSubscription(ctx, sub.ProviderAccountID, sub.ProviderSubscriptionID)
	if err != nil {
		return sub, upstream("The payment provider could not cancel the subscription; retry shortly.", err)
	}
	// Cancelled at once: whatever else the answer says, it is over.
	st.ProviderSubscriptionID, st.Status = sub.ProviderSubscriptionID, models.SubscriptionCanceled
	return s.applySubscription(ctx, s.store, c.Scope, sub.ProviderAccountID, st, s.cancelledAt(sub), service.ActorOf(ctx))
}

// cancelledAt is the time of a cancellation made through holdco: now, and
// never before the state it ends (a state is applied only over older
// ones, and the cancel came after whatever was recorded).
func (s *Service) cancelledAt(sub models.CustomerSubscription) time.Time {
	at := s.now()
	if !sub.ProviderUpdatedAt.Before(at) {
		at = sub.ProviderUpdatedAt.Add(time.Microsecond)
	}
	return at
}

// StopCompanySales ends a company's sales before it is archived
// (companies.ArchiveCompany calls it with the scope its authorization
// made): every active product and its price is deactivated on the
// connected account, so its checkout links sell nothing more, and every
// customer subscription that is not canceled yet is cancelled at once, so
// no customer keeps paying a company that no longer exists (the spec's
// archive rule: the payment provider's objects are deactivated). A
// live-mode failure stops the archive (502, retry: what was stopped stays
// stopped, the rest is retried); test-mode objects take no real money, so
// their failure is logged and passed over.
func (s *Service) StopCompanySales(ctx context.Context, sc store.CompanyScope) error {
	if err := s.deactivateCompanyProducts(ctx, sc); err != nil {
		return err
	}
	subs, err := s.store.Sales().ListCustomerSubscriptions(ctx, sc)
	if err != nil || s.payments == nil {
		return err
	}
	for _, sub := range subs {
		if sub.Status == models.SubscriptionCanceled || sub.Status == "incomplete_expired" {
			continue
		}
		st, err := s.payments.CancelCustomerSubscription(ctx, sub.ProviderAccountID, sub.ProviderSubscriptionID)
		if err != nil {
			if s.payments.Livemode() {
				return models.Errorf(models.CodeUpstreamUnavailable, "The payment provider could not cancel this company's customers' subscriptions; nothing was archived. Retry shortly.").Wrap(err)
			}
			s.logger.WarnContext(ctx, "archive: test-mode subscription not cancelled", "company", sc.ID(), "subscription", sub.ID, "error", err)
			continue
		}
		st.ProviderSubscriptionID, st.Status = sub.ProviderSubscriptionID, models.SubscriptionCanceled
		if _, err := s.applySubscription(ctx, s.store, sc, sub.ProviderAccountID, st, s.cancelledAt(sub), models.ActorSystem); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) deactivateCompanyProducts(ctx context.Context, sc store.CompanyScope) error {
	ps, err := s.store.Sales().ListProducts(ctx, sc)
	if err != nil || s.payments == nil {
		return err
	}
	for _, p := range ps {
		if !p.Active {
			continue
		}
		if err := s.payments.DeactivateProduct(ctx, p.ProviderAccountID, p.ProviderProductID, p.ProviderPriceID); err != nil {
			if s.payments.Livemode() {
				return models.Errorf(models.CodeUpstreamUnavailable, "The payment provider could not deactivate this company's live products; nothing was archived. Retry shortly.").Wrap(err)
			}
			s.logger.WarnContext(ctx, "archive: test-mode product not deactivated", "company", sc.ID(), "product", p.ID, "error", err)
			continue
		}
		if err := s.store.Sales().DeactivateProduct(ctx, sc, p.ID); err != nil {
			return err
		}
	}
	return nil
}
