package stripepay_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/stripepay"
	"holdco/testenv"
)

// salesPayments is what service/sales needs of the provider (declared
// again here: providers do not import service/).
type salesPayments interface {
	CreateProduct(context.Context, models.ProductRequest) (models.ProviderProduct, error)
	CreatePaymentLink(context.Context, models.PaymentLinkRequest) (models.PaymentLink, error)
	CancelCustomerSubscription(ctx context.Context, accountID, subscriptionID string) (models.SalesSubscription, error)
	ParseSalesWebhook(ctx context.Context, payload []byte, signature string) (models.SalesEvent, error)
	DeactivateProduct(ctx context.Context, accountID, productID, priceID string) error
	Livemode() bool
}

var _ salesPayments = (*stripepay.Client)(nil)

// stripe-mock checks each request (the Stripe-Account header included)
// against Stripe's OpenAPI document.
func TestSalesCallsOnTheConnectedAccount(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	assert.True(t, c.SalesConfigured())
	for _, interval := range []models.BillingInterval{models.IntervalOnce, models.IntervalMonth} {
		pp, err := c.CreateProduct(ctx, models.ProductRequest{AccountID: "acct_seller", CompanyID: "co-1", ProductID: "prod-" + string(interval),
			Name: "Guide", Description: "A PDF", PriceCents: 1200, Currency: "usd", Interval: interval})
		require.NoError(t, err, interval)
		assert.NotEmpty(t, pp.ProductID)
		assert.NotEmpty(t, pp.PriceID)
		link, err := c.CreatePaymentLink(ctx, models.PaymentLinkRequest{AccountID: "acct_seller", CompanyID: "co-1", ProductID: "prod-1",
			PriceID: pp.PriceID, Recurring: interval.Recurring(), SuccessURL: "https://shop.example/thanks"})
		require.NoError(t, err, interval)
		assert.NotEmpty(t, link.ID)
		assert.NotEmpty(t, link.URL)
		require.NoError(t, c.DeactivateProduct(ctx, "acct_seller", pp.ProductID, pp.PriceID))
	}
	sub, err := c.CancelCustomerSubscription(ctx, "acct_seller", "sub_customer")
	require.NoError(t, err)
	assert.Equal(t, "sub_customer", sub.ProviderSubscriptionID)
	assert.NotEmpty(t, sub.Status)
}

func TestSalesWebhookEvents(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	secret := testenv.StripeConnectWebhookSecret
	meta := map[string]string{"company_id": "co-1", "holdco_product_id": "prod-1"}
	parse := func(typ, account string, obj map[string]any) models.SalesEvent {
		t.Helper()
		payload, sig := testenv.SignedConnectEvent(t, secret, "evt_"+typ, typ, account, obj)
		ev, err := c.ParseSalesWebhook(ctx, payload, sig)
		require.NoError(t, err, typ)
		assert.Equal(t, account, ev.Account)
		return ev
	}

	ev := parse("checkout.session.completed", "acct_seller", map[string]any{"id": "cs_1", "object": "checkout.session", "mode": "payment",
		"payment_status": "paid", "payment_intent": "pi_1", "amount_total": 1200, "currency": "usd", "metadata": meta})
	assert.Equal(t, models.SalesEventPayment, ev.Kind)
	assert.Equal(t, "co-1", ev.CompanyID)
	assert.Equal(t, models.SalesPayment{ProviderPaymentID: "pi_1", AmountCents: 1200, Currency: "usd", ProductID: "prod-1"}, ev.Payment)

	ev = parse("checkout.session.completed", "acct_seller", map[string]any{"id": "cs_2", "object": "checkout.session", "mode": "payment",
		"payment_status": "unpaid", "payment_intent": "pi_2", "amount_total": 1200, "currency": "usd", "metadata": meta})
	assert.Equal(t, models.SalesEventIgnored, ev.Kind, "a delayed payment is recorded when it succeeds")
	ev = parse("checkout.session.completed", "acct_seller", map[string]any{"id": "cs_3", "object": "checkout.session", "mode": "subscription",
		"payment_status": "paid", "subscription": "sub_1", "amount_total": 1200, "currency": "usd", "metadata": meta})
	assert.Equal(t, models.SalesEventIgnored, ev.Kind, "a subscription's payments are its invoices")

	ev = parse("invoice.paid", "acct_seller", map[string]any{"id": "in_1", "object": "invoice", "amount_paid": 1200, "currency": "usd",
		"payment_intent": "pi_3", "subscription": "sub_1", "subscription_details": map[string]any{"metadata": meta}})
	assert.Equal(t, models.SalesEventPayment, ev.Kind)
	assert.Equal(t, models.SalesPayment{ProviderPaymentID: "pi_3", AmountCents: 1200, Currency: "usd", ProductID: "prod-1", SubscriptionID: "sub_1"}, ev.Payment)
	ev = parse("invoice.paid", "acct_seller", map[string]any{"id": "in_2", "object": "invoice", "amount_paid": 0, "currency": "usd",
		"subscription": "sub_1", "subscription_details": map[string]any{"metadata": meta}})
	assert.Equal(t, models.SalesEventIgnored, ev.Kind, "a trial's free invoice is no revenue")

	ev = parse("charge.refunded", "acct_seller", map[string]any{"id": "ch_1", "object": "charge", "payment_intent": "pi_1", "amount": 1200, "amount_refunded": 700})
	assert.Equal(t, models.SalesEventRefund, ev.Kind)
	assert.Equal(t, models.SalesRefund{ProviderPaymentID: "pi_1", RefundedCents: 700}, ev.Refund)

	ev = parse("customer.subscription.updated", "acct_seller", map[string]any{"id": "sub_1", "object": "subscription", "status": "active",
		"current_period_end": 1900000000, "cancel_at_period_end": true, "metadata": meta})
	assert.Equal(t, models.SalesEventSubscription, ev.Kind)
	assert.Equal(t, "sub_1", ev.Subscription.ProviderSubscriptionID)
	assert.Equal(t, "active", ev.Subscription.Status)
	assert.True(t, ev.Subscription.CancelAtPeriodEnd)
	require.NotNil(t, ev.Subscription.CurrentPeriodEnd)
	ev = parse("customer.subscription.deleted", "acct_seller", map[string]any{"id": "sub_1", "object": "subscription", "status": "active", "metadata": meta})
	assert.Equal(t, models.SubscriptionCanceled, ev.Subscription.Status)

	ev = parse("checkout.session.completed", "", map[string]any{"id": "cs_4", "object": "checkout.session", "mode": "payment",
		"payment_status": "paid", "payment_intent": "pi_4", "amount_total": 1200, "currency": "usd", "metadata": meta})
	assert.Equal(t, models.SalesEventIgnored, ev.Kind, "an event of the platform account itself")
	ev = parse("checkout.session.completed", "acct_seller", map[string]any{"id": "cs_5", "object": "checkout.session", "mode": "payment",
		"payment_status": "paid", "payment_intent": "pi_5", "amount_total": 1200, "currency": "usd"})
	assert.Equal(t, models.SalesEventIgnored, ev.Kind, "not sold through holdco")

	// Signed with the platform endpoint's secret: refused.
	payload, sig := testenv.SignedConnectEvent(t, whsec, "evt_x", "invoice.paid", "acct_seller", map[string]any{"id": "in_x", "object": "invoice"})
	_, err := c.ParseSalesWebhook(ctx, payload, sig)
	assert.ErrorIs(t, err, models.ErrBadSignature)
}

func TestSalesWebhookNeedsItsSecret(t *testing.T) {
	c, err := stripepay.New(stripepay.Config{SecretKey: "sk_test_x", WebhookSecret: whsec})
	require.NoError(t, err)
	assert.False(t, c.SalesConfigured())
	_, err = c.ParseSalesWebhook(context.Background(), []byte("{}"), "t=1,v1=00")
	assert.ErrorIs(t, err, stripepay.ErrSalesWebhookNotConfigured)
}

// A payment link request carries its idempotency key to Stripe (seen here
// by a proxy in front of stripe-mock): Stripe answers a key it has seen
// with the link it made, so a call made again makes no second link.
func TestPaymentLinkCarriesItsIdempotencyKey(t *testing.T) {
	target, err := url.Parse(testenv.StripeMock(t))
	require.NoError(t, err)
	var mu sync.Mutex
	keys := map[string]string{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys[r.URL.Path] = r.Header.Get("Idempotency-Key")
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := stripepay.New(stripepay.Config{SecretKey: "sk_test_platform", ConnectSecretKey: "sk_test_connect", WebhookSecret: "whsec_x",
		ConnectWebhookSecret: testenv.StripeConnectWebhookSecret, APIBase: srv.URL})
	require.NoError(t, err)
	_, err = c.CreatePaymentLink(context.Background(), models.PaymentLinkRequest{AccountID: "acct_seller", CompanyID: "co-1", ProductID: "prod-1",
		PriceID: "price_1", IdempotencyKey: "holdco-link-call-1"})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "holdco-link-call-1", keys["/v1/payment_links"])
}
