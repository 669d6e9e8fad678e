package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/sales"
)

// CreateProductRequest is a product a company sells, with its one price.
type CreateProductRequest struct {
	Name        string `json:"name" minLength:"1" maxLength:"200"`
	Description string `json:"description,omitempty" maxLength:"2000" multiline:"true"`
	PriceCents  int64  `json:"price_cents" minimum:"50" maximum:"99999999" doc:"Price in cents (of US dollars)."`
	Currency    string `json:"currency,omitempty" enum:"usd" doc:"usd, the only currency companies sell in for now (the default)."`
	Interval    string `json:"interval,omitempty" enum:"month,year" doc:"Omit for a one-time purchase; month or year sells a subscription."`
}

// ProductResponse is a product of the company.
type ProductResponse struct {
	ID          string    `json:"id" format:"uuid"`
	CompanyID   string    `json:"company_id" format:"uuid"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	PriceCents  int64     `json:"price_cents"`
	Currency    string    `json:"currency"`
	Interval    *string   `json:"interval" doc:"null for a one-time purchase, month or year for a subscription."`
	Active      bool      `json:"active"`
	CreatedAt   time.Time `json:"created_at"`
}

// ProductListResponse lists the company's products, newest first.
type ProductListResponse struct {
	Products []ProductResponse `json:"products"`
}

// CheckoutLinkRequest shapes a checkout link.
type CheckoutLinkRequest struct {
	SuccessURL string `json:"success_url,omitempty" format:"uri" maxLength:"2048" doc:"Where the customer lands after paying; the provider's confirmation page when omitted."`
}

// CheckoutLinkResponse is a reusable page where customers buy the product.
type CheckoutLinkResponse struct {
	ProductID string `json:"product_id" format:"uuid"`
	URL       string `json:"url" format:"uri"`
}

// PaymentResponse is one payment of a company's customer.
type PaymentResponse struct {
	ID                string    `json:"id" format:"uuid"`
	ProviderPaymentID string    `json:"provider_payment_id" doc:"The payment provider's payment (a payment intent)."`
	ProductID         *string   `json:"product_id"`
	SubscriptionID    *string   `json:"subscription_id" doc:"The provider's subscription, for a subscription's invoice; null for a one-time purchase."`
	AmountCents       int64     `json:"amount_cents"`
	RefundedCents     int64     `json:"refunded_cents"`
	Currency          string    `json:"currency"`
	PaidAt            time.Time `json:"paid_at"`
}

// RevenueResponse is what the company has earned.
type RevenueResponse struct {
	CompanyID             string            `json:"company_id" format:"uuid"`
	Currency              string            `json:"currency" doc:"Every amount is in cents of this currency (usd)."`
	BalanceCents          int64             `json:"balance_cents" doc:"Lifetime earnings minus withdrawals (there are no withdrawals yet)."`
	LifetimeEarningsCents int64             `json:"lifetime_earnings_cents" doc:"Every payment net of refunds."`
	GrossCents            int64             `json:"gross_cents"`
	RefundedCents         int64             `json:"refunded_cents"`
	WithdrawnCents        int64             `json:"withdrawn_cents" doc:"Always 0 until withdrawals exist."`
	Payments              int64             `json:"payments" doc:"How many payments were received."`
	RecentPayments        []PaymentResponse `json:"recent_payments" doc:"The latest 10, newest first."`
}

// PaymentListResponse lists payments, newest first.
type PaymentListResponse struct {
	Payments []PaymentResponse `json:"payments"`
}

// SubscriptionResponse is a subscription a customer of the company bought.
type SubscriptionResponse struct {
	ID                     string     `json:"id" format:"uuid"`
	ProviderSubscriptionID string     `json:"provider_subscription_id"`
	ProductID              *string    `json:"product_id"`
	Status                 string     `json:"status" doc:"The provider's state: active, trialing, past_due, unpaid, incomplete, canceled, …"`
	CurrentPeriodEnd       *time.Time `json:"current_period_end"`
	CancelAtPeriodEnd      bool       `json:"cancel_at_period_end"`
	StartedAt              *time.Time `json:"started_at"`
	CanceledAt             *time.Time `json:"canceled_at"`
	CreatedAt              time.Time  `json:"created_at"`
}

// SubscriptionListResponse lists subscriptions, newest first.
type SubscriptionListResponse struct {
	Subscriptions []SubscriptionResponse `json:"subscriptions"`
}

type salesHandlers struct{ svc *sales.Service }

func registerSalesRoutes(api huma.API, h *salesHandlers) {
	tags := []string{"sales"}
	refusals := " 409 `conflict` with `reason` when the company cannot sell: `payments_not_configured`, `sales_not_configured`, or " +
		"`payout_onboarding_incomplete` (with `connect_state` and `links.onboarding`, the account's dashboard where its owner finishes onboarding)."
	huma.Register(api, huma.Operation{OperationID: "list-products", Method: http.MethodGet, Path: "/companies/{company_id}/products",
		Tags: tags, Summary: "List the company's products", Security: bearerSecurity}, h.listProducts)
	huma.Register(api, huma.Operation{OperationID: "create-product", Method: http.MethodPost, Path: "/companies/{company_id}/products",
		Tags: tags, Summary: "Create a product and its price", Security: bearerSecurity, DefaultStatus: http.StatusCreated,
		Description: "Created on the payout (connected) account of the company's conglomerate; customers pay the company." + refusals}, h.createProduct)
	huma.Register(api, huma.Operation{OperationID: "create-checkout-link", Method: http.MethodPost, Path: "/companies/{company_id}/products/{product_id}/checkout-link",
		Tags: tags, Summary: "Create a checkout link for a product", Security: bearerSecurity,
		Description: "A reusable payment page for the company's customers. 404 for a product of another company." + refusals}, h.checkoutLink)
	huma.Register(api, huma.Operation{OperationID: "get-revenue", Method: http.MethodGet, Path: "/companies/{company_id}/revenue",
		Tags: tags, Summary: "The company's revenue", Security: bearerSecurity,
		Description: "Balance, lifetime earnings and the latest payments. Archived companies keep theirs."}, h.revenue)
	huma.Register(api, huma.Operation{OperationID: "list-payments", Method: http.MethodGet, Path: "/companies/{company_id}/payments",
		Tags: tags, Summary: "The company's customers' payments, newest first", Security: bearerSecurity}, h.payments)
	huma.Register(api, huma.Operation{OperationID: "list-subscriptions", Method: http.MethodGet, Path: "/companies/{company_id}/subscriptions",
		Tags: tags, Summary: "Subscriptions the company's customers bought", Security: bearerSecurity}, h.subscriptions)
	huma.Register(api, huma.Operation{OperationID: "cancel-subscription", Method: http.MethodPost, Path: "/companies/{company_id}/subscriptions/{subscription_id}/cancel",
		Tags: tags, Summary: "Cancel a customer's subscription at once", Security: bearerSecurity,
		Description: "`subscription_id` is holdco's id or the provider's. Only a subscription of this company: any other is 404. " +
			"Cancelling a canceled subscription answers it unchanged."}, h.cancel)
	huma.Register(api, huma.Operation{OperationID: "stripe-connect-webhook", Method: http.MethodPost, Path: "/webhooks/stripe/connect",
		Tags: tags, Summary: "Events of the connected accounts (the companies' sales)", MaxBodyBytes: webhookBodyLimit,
		Description: "The Connect webhook endpoint, verified with its own signing secret (400 and nothing recorded when it does not verify; " +
			"404 when sales are not configured). Payments, refunds and subscriptions are recorded once each as the company's revenue; " +
			"an event about a company outside the connected account's conglomerate is acknowledged and ignored."}, h.webhook)
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toProductResponse(p models.Product) ProductResponse {
	return ProductResponse{ID: p.ID, CompanyID: p.CompanyID, Name: p.Name, Description: p.Description, PriceCents: p.PriceCents,
		Currency: p.Currency, Interval: optionalString(string(p.Interval)), Active: p.Active, CreatedAt: p.CreatedAt}
}

func toPaymentResponses(ps []models.CompanyPayment) []PaymentResponse {
	out := make([]PaymentResponse, 0, len(ps))
	for _, p := range ps {
		out = append(out, PaymentResponse{ID: p.ID, ProviderPaymentID: p.ProviderPaymentID, ProductID: optionalString(p.ProductID),
			SubscriptionID: optionalString(p.SubscriptionID), AmountCents: p.AmountCents, RefundedCents: p.RefundedCents, Currency: p.Currency, PaidAt: p.PaidAt})
	}
	return out
}

func toSubscriptionResponse(s models.CustomerSubscription) SubscriptionResponse {
	return SubscriptionResponse{ID: s.ID, ProviderSubscriptionID: s.ProviderSubscriptionID, ProductID: optionalString(s.ProductID), Status: s.Status,
		CurrentPeriodEnd: s.CurrentPeriodEnd, CancelAtPeriodEnd: s.CancelAtPeriodEnd, StartedAt: s.StartedAt, CanceledAt: s.CanceledAt, CreatedAt: s.CreatedAt}
}

type productListOutput struct{ Body ProductListResponse }

func (h *salesHandlers) listProducts(ctx context.Context, in *companyIDInput) (*productListOutput, error) {
	ps, err := h.svc.ListProducts(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	out := &productListOutput{Body: ProductListResponse{Products: make([]ProductResponse, 0, len(ps))}}
	for _, p := range ps {
		out.Body.Products = append(out.Body.Products, toProductResponse(p))
	}
	return out, nil
}

type createProductInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Body      CreateProductRequest
}

type productOutput struct{ Body ProductResponse }

func (h *salesHandlers) createProduct(ctx context.Context, in *createProductInput) (*productOutput, error) {
	b := in.Body
	p, err := h.svc.CreateProduct(ctx, in.CompanyID, sales.ProductInput{Name: b.Name, Description: b.Description, PriceCents: b.PriceCents,
		Currency: b.Currency, Interval: models.BillingInterval(b.Interval)})
	if err != nil {
		return nil, err
	}
	return &productOutput{Body: toProductResponse(p)}, nil
}

type checkoutLinkInput struct {
	CompanyID string               `path:"company_id" format:"uuid"`
	ProductID string               `path:"product_id" format:"uuid"`
	Body      *CheckoutLinkRequest `required:"false"`
}

type checkoutLinkOutput struct{ Body CheckoutLinkResponse }

func (h *salesHandlers) checkoutLink(ctx context.Context, in *checkoutLinkInput) (*checkoutLinkOutput, error) {
	var opts sales.CheckoutLinkInput
	if in.Body != nil {
		opts.SuccessURL = in.Body.SuccessURL
	}
	l, err := h.svc.CreateCheckoutLink(ctx, in.CompanyID, in.ProductID, opts)
	if err != nil {
		return nil, err
	}
	return &checkoutLinkOutput{Body: CheckoutLinkResponse{ProductID: in.ProductID, URL: l.URL}}, nil
}

type revenueOutput struct{ Body RevenueResponse }

func (h *salesHandlers) revenue(ctx context.Context, in *companyIDInput) (*revenueOutput, error) {
	r, err := h.svc.Revenue(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	return &revenueOutput{Body: RevenueResponse{CompanyID: in.CompanyID, Currency: r.Currency, BalanceCents: r.BalanceCents,
		LifetimeEarningsCents: r.LifetimeEarningsCents, GrossCents: r.GrossCents, RefundedCents: r.RefundedCents, WithdrawnCents: r.WithdrawnCents,
		Payments: r.Payments, RecentPayments: toPaymentResponses(r.RecentPayments)}}, nil
}

type paymentsInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Limit     int    `query:"limit" minimum:"1" maximum:"100" default:"10"`
}

type paymentListOutput struct{ Body PaymentListResponse }

func (h *salesHandlers) payments(ctx context.Context, in *paymentsInput) (*paymentListOutput, error) {
	ps, err := h.svc.ListPayments(ctx, in.CompanyID, in.Limit)
	if err != nil {
		return nil, err
	}
	return &paymentListOutput{Body: PaymentListResponse{Payments: toPaymentResponses(ps)}}, nil
}

type subscriptionListOutput struct{ Body SubscriptionListResponse }

func (h *salesHandlers) subscriptions(ctx context.Context, in *companyIDInput) (*subscriptionListOutput, error) {
	subs, err := h.svc.ListSubscriptions(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	out := &subscriptionListOutput{Body: SubscriptionListResponse{Subscriptions: make([]SubscriptionResponse, 0, len(subs))}}
	for _, s := range subs {
		out.Body.Subscriptions = append(out.Body.Subscriptions, toSubscriptionResponse(s))
	}
	return out, nil
}

type cancelSubscriptionInput struct {
	CompanyID      string `path:"company_id" format:"uuid"`
	SubscriptionID string `path:"subscription_id" maxLength:"255"`
}

type subscriptionOutput struct{ Body SubscriptionResponse }

func (h *salesHandlers) cancel(ctx context.Context, in *cancelSubscriptionInput) (*subscriptionOutput, error) {
	s, err := h.svc.CancelSubscription(ctx, in.CompanyID, in.SubscriptionID)
	if err != nil {
		return nil, err
	}
	return &subscriptionOutput{Body: toSubscriptionResponse(s)}, nil
}

func (h *salesHandlers) webhook(ctx context.Context, in *webhookInput) (*webhookOutput, error) {
	res, err := h.svc.HandleSalesWebhook(ctx, in.RawBody, in.Signature)
	if err != nil {
		return nil, err
	}
	return &webhookOutput{Body: WebhookResponse{Received: true, EventID: res.EventID, Duplicate: res.Duplicate, Ignored: res.Ignored}}, nil
}
