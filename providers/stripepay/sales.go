package stripepay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/webhook"

	"holdco/models"
)

// A company's own sales happen on the connected account of its
// conglomerate: every call below goes through the Connect platform key
// with the Stripe-Account header, and every object carries company_id
// (and holdco's product id) in its metadata so the connected account's
// events can be attributed.

const metaProduct = "holdco_product_id"

// ErrSalesWebhookNotConfigured: no signing secret for the Connect webhook
// endpoint was configured.
var ErrSalesWebhookNotConfigured = errors.New("stripe: the Connect webhook signing secret is not configured")

// SalesConfigured reports whether connected-account events can be
// verified, without which sales could not be recorded.
func (c *Client) SalesConfigured() bool { return c.cfg.ConnectWebhookSecret != "" }

// onAccount sets the Stripe-Account header and the context of a request.
func onAccount(p *stripe.Params, ctx context.Context, accountID string) {
	p.Context = ctx
	p.SetStripeAccount(accountID)
}

// CreateProduct creates a product and its one price on the connected
// account. Both calls carry idempotency keys derived from holdco's product
// id, so a retried request creates neither twice.
func (c *Client) CreateProduct(ctx context.Context, r models.ProductRequest) (models.ProviderProduct, error) {
	pp := &stripe.ProductParams{Name: stripe.String(r.Name), Description: nonEmpty(r.Description)}
	onAccount(&pp.Params, ctx, r.AccountID)
	pp.AddMetadata(metaCompany, r.CompanyID)
	pp.AddMetadata(metaProduct, r.ProductID)
	pp.SetIdempotencyKey("holdco-product-" + r.ProductID)
	prod, err := c.connect.Products.New(pp)
	if err != nil {
		return models.ProviderProduct{}, fmt.Errorf("stripe: create product: %w", err)
	}
	price := &stripe.PriceParams{Product: stripe.String(prod.ID), UnitAmount: stripe.Int64(r.PriceCents), Currency: stripe.String(r.Currency)}
	if r.Interval.Recurring() {
		price.Recurring = &stripe.PriceRecurringParams{Interval: stripe.String(string(r.Interval))}
	}
	onAccount(&price.Params, ctx, r.AccountID)
	price.AddMetadata(metaCompany, r.CompanyID)
	price.AddMetadata(metaProduct, r.ProductID)
	price.SetIdempotencyKey("holdco-price-" + r.ProductID)
	pr, err := c.connect.Prices.New(price)
	if err != nil {
		return models.ProviderProduct{ProductID: prod.ID}, fmt.Errorf("stripe: create price: %w", err)
	}
	return models.ProviderProduct{ProductID: prod.ID, PriceID: pr.ID}, nil
}

// CreatePaymentLink opens a reusable checkout page for one product on the
// connected account. company_id is on the link (copied by the provider to
// each checkout session), on the payment of a one-time purchase and on
// the subscription of a recurring one (and so on its invoices). The
// request carries r.IdempotencyKey: sent again, Stripe answers the link
// it made the first time.
func (c *Client) CreatePaymentLink(ctx context.Context, r models.PaymentLinkRequest) (models.PaymentLink, error) {
	p := &stripe.PaymentLinkParams{LineItems: []*stripe.PaymentLinkLineItemParams{{Price: stripe.String(r.PriceID), Quantity: stripe.Int64(1)}}}
	onAccount(&p.Params, ctx, r.AccountID)
	p.AddMetadata(metaCompany, r.CompanyID)
	p.AddMetadata(metaProduct, r.ProductID)
	if r.Recurring {
		sd := &stripe.PaymentLinkSubscriptionDataParams{}
		sd.AddMetadata(metaCompany, r.CompanyID)
		sd.AddMetadata(metaProduct, r.ProductID)
		p.SubscriptionData = sd
	} else {
		pi := &stripe.PaymentLinkPaymentIntentDataParams{Metadata: map[string]string{metaCompany: r.CompanyID, metaProduct: r.ProductID}}
		p.PaymentIntentData = pi
	}
	if r.SuccessURL != "" {
		p.AfterCompletion = &stripe.PaymentLinkAfterCompletionParams{Type: stripe.String(string(stripe.PaymentLinkAfterCompletionTypeRedirect)),
			Redirect: &stripe.PaymentLinkAfterCompletionRedirectParams{URL: stripe.String(r.SuccessURL)}}
	}
	if r.IdempotencyKey != "" {
		p.SetIdempotencyKey(r.IdempotencyKey)
	}
	l, err := c.connect.PaymentLinks.New(p)
	if err != nil {
		return models.PaymentLink{}, fmt.Errorf("stripe: create payment link: %w", err)
	}
	return models.PaymentLink{ID: l.ID, URL: l.URL}, nil
}

// CancelCustomerSubscription cancels a subscription on the connected
// account at once and returns its state. One the provider no longer knows
// is reported canceled: there is nothing left to charge.
func (c *Client) CancelCustomerSubscription(ctx context.Context, accountID, subscriptionID string) (models.SalesSubscription, error) {
	p := &stripe.SubscriptionCancelParams{}
	onAccount(&p.Params, ctx, accountID)
	sub, err := c.connect.Subscriptions.Cancel(subscriptionID, p)
	var se *stripe.Error
	if errors.As(err, &se) && se.Code == stripe.ErrorCodeResourceMissing {
		return models.SalesSubscription{ProviderSubscriptionID: subscriptionID, Status: models.SubscriptionCanceled}, nil
	}
	if err != nil {
		return models.SalesSubscription{}, fmt.Errorf("stripe: cancel customer subscription: %w", err)
	}
	out := salesSubscription(sub)
	out.ProviderSubscriptionID = subscriptionID // the one asked for, whatever the peer echoes
	return out, nil
}

// ParseSalesWebhook verifies an event of the Connect webhook endpoint
// (signed with its own secret) and reduces it to what holdco records of a
// company's sales. Payments are recorded from the object that carries
// holdco's company_id, keyed by the payment intent: a paid checkout
// session of a one-time purchase (checkout.session.completed and
// checkout.session.async_payment_succeeded) and a paid invoice of a
// subscription (invoice.paid). Refunds come from charge.refunded (the
// refunded total of the charge's payment intent), subscription states from
// customer.subscription.created/updated/deleted. Anything else, and any
// event without a connected account, is ignored.
func (c *Client) ParseSalesWebhook(_ context.Context, payload []byte, signature string) (models.SalesEvent, error) {
	if c.cfg.ConnectWebhookSecret == "" {
		return models.SalesEvent{}, ErrSalesWebhookNotConfigured
	}
	ev, err := webhook.ConstructEventWithOptions(payload, signature, c.cfg.ConnectWebhookSecret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return models.SalesEvent{}, fmt.Errorf("stripe: %w: %v", models.ErrBadSignature, err)
	}
	out := models.SalesEvent{ID: ev.ID, Type: string(ev.Type), Livemode: ev.Livemode, Account: ev.Account, Kind: models.SalesEventIgnored,
		CreatedAt: time.Unix(ev.Created, 0).UTC()}
	if ev.Data == nil || ev.Account == "" {
		return out, nil
	}
	raw := ev.Data.Raw
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		var s stripe.CheckoutSession
		if err := json.Unmarshal(raw, &s); err != nil {
			return out, fmt.Errorf("stripe: decode checkout session: %w", err)
		}
		// A subscription's payments are its invoices; a delayed payment
		// method completes unpaid and succeeds later.
		if s.Mode != stripe.CheckoutSessionModePayment || s.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid || s.PaymentIntent == nil {
			return out, nil
		}
		return salesPayment(out, s.Metadata, models.SalesPayment{ProviderPaymentID: s.PaymentIntent.ID, AmountCents: s.AmountTotal,
			Currency: string(s.Currency)}), nil
	case "invoice.paid":
		var inv stripe.Invoice
		if err := json.Unmarshal(raw, &inv); err != nil {
			return out, fmt.Errorf("stripe: decode invoice: %w", err)
		}
		if inv.AmountPaid <= 0 || inv.SubscriptionDetails == nil {
			return out, nil // a free trial's invoice, or not a subscription of holdco's
		}
		p := models.SalesPayment{ProviderPaymentID: "invoice:" + inv.ID, AmountCents: inv.AmountPaid, Currency: string(inv.Currency)}
		if inv.PaymentIntent != nil && inv.PaymentIntent.ID != "" {
			p.ProviderPaymentID = inv.PaymentIntent.ID
		}
		if inv.Subscription != nil {
			p.SubscriptionID = inv.Subscription.ID
		}
		return salesPayment(out, inv.SubscriptionDetails.Metadata, p), nil
	case "charge.refunded":
		var ch stripe.Charge
		if err := json.Unmarshal(raw, &ch); err != nil {
			return out, fmt.Errorf("stripe: decode charge: %w", err)
		}
		if ch.PaymentIntent == nil || ch.PaymentIntent.ID == "" {
			return out, nil
		}
		out.Kind, out.Refund = models.SalesEventRefund, models.SalesRefund{ProviderPaymentID: ch.PaymentIntent.ID, RefundedCents: ch.AmountRefunded}
		return out, nil
	case "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted":
		var sub stripe.Subscription
		if err := json.Unmarshal(raw, &sub); err != nil {
			return out, fmt.Errorf("stripe: decode subscription: %w", err)
		}
		if sub.Metadata[metaCompany] == "" {
			return out, nil
		}
		out.Kind, out.CompanyID, out.Subscription = models.SalesEventSubscription, sub.Metadata[metaCompany], salesSubscription(&sub)
		if out.Type == "customer.subscription.deleted" {
			out.Subscription.Status = models.SubscriptionCanceled
		}
		return out, nil
	}
	return out, nil
}

func salesPayment(out models.SalesEvent, meta map[string]string, p models.SalesPayment) models.SalesEvent {
	if meta[metaCompany] == "" {
		return out // not sold through holdco
	}
	p.ProductID = meta[metaProduct]
	out.Kind, out.CompanyID, out.Payment = models.SalesEventPayment, meta[metaCompany], p
	return out
}

func salesSubscription(sub *stripe.Subscription) models.SalesSubscription {
	out := models.SalesSubscription{ProviderSubscriptionID: sub.ID, ProductID: sub.Metadata[metaProduct], Status: string(sub.Status),
		CancelAtPeriodEnd: sub.CancelAtPeriodEnd}
	if sub.CurrentPeriodEnd > 0 {
		t := time.Unix(sub.CurrentPeriodEnd, 0).UTC()
		out.CurrentPeriodEnd = &t
	}
	return out
}

// DeactivateProduct deactivates a product's price and the product on the
// connected account, so its checkout links sell nothing more.
func (c *Client) DeactivateProduct(ctx context.Context, accountID, productID, priceID string) error {
	if priceID != "" {
		pp := &stripe.PriceParams{Active: stripe.Bool(false)}
		onAccount(&pp.Params, ctx, accountID)
		if _, err := c.connect.Prices.Update(priceID, pp); err != nil {
			return fmt.Errorf("stripe: deactivate price: %w", err)
		}
	}
	p := &stripe.ProductParams{Active: stripe.Bool(false)}
	onAccount(&p.Params, ctx, accountID)
	if _, err := c.connect.Products.Update(productID, p); err != nil {
		return fmt.Errorf("stripe: deactivate product: %w", err)
	}
	return nil
}
