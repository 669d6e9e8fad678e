package stripepay_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v76"

	"holdco/models"
	"holdco/providers/stripepay"
	"holdco/testenv"
)

const whsec = "whsec_test_secret"

func newClient(t *testing.T) *stripepay.Client { return testenv.StripePayments(t, whsec) }

func TestConfigIsChecked(t *testing.T) {
	_, err := stripepay.New(stripepay.Config{SecretKey: "pk_test_x", WebhookSecret: whsec})
	assert.Error(t, err, "a publishable key is not a secret key")
	_, err = stripepay.New(stripepay.Config{SecretKey: "sk_test_x"})
	assert.Error(t, err, "the webhook secret is required")
	c, err := stripepay.New(stripepay.Config{SecretKey: "sk_live_x", WebhookSecret: whsec})
	require.NoError(t, err)
	assert.True(t, c.Livemode())
}

// The calls below go to stripe-mock, which validates every request against
// Stripe's OpenAPI document (a wrong parameter is a 400) and answers
// fixtures.
func TestCallsAgainstStripeMock(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	assert.False(t, c.Livemode())

	cust, err := c.EnsureCustomer(ctx, models.CustomerRequest{ConglomerateID: "cong-1", Email: "ada@example.com", Name: "Ada"})
	require.NoError(t, err)
	assert.NotEmpty(t, cust)

	for _, req := range []models.CheckoutRequest{
		{Kind: models.CheckoutTopUp, ConglomerateID: "cong-1", CustomerID: cust, Credits: 120, UnitAmountCents: 10,
			SuccessURL: "http://app.test/ok", CancelURL: "http://app.test/cancel"},
		{Kind: models.CheckoutPlan, ConglomerateID: "cong-1", CustomerID: cust, Plan: models.PlanFounder, PriceID: testenv.FounderPriceID,
			SuccessURL: "http://app.test/ok", CancelURL: "http://app.test/cancel"},
	} {
		cs, err := c.Checkout(ctx, req)
		require.NoError(t, err, req.Kind)
		assert.NotEmpty(t, cs.ID)
		assert.NotEmpty(t, cs.URL)
	}
	_, err = c.Checkout(ctx, models.CheckoutRequest{Kind: "gift"})
	assert.Error(t, err)

	portal, err := c.Portal(ctx, cust, "http://app.test/billing")
	require.NoError(t, err)
	assert.NotEmpty(t, portal)

	acct, link, err := c.ConnectOnboarding(ctx, models.ConnectOnboardingRequest{ConglomerateID: "cong-1", Email: "ada@example.com",
		RefreshURL: "http://app.test/refresh", ReturnURL: "http://app.test/done"})
	require.NoError(t, err)
	assert.NotEmpty(t, acct)
	assert.NotEmpty(t, link)
	st, err := c.ConnectAccount(ctx, acct)
	require.NoError(t, err)
	assert.Equal(t, acct, st.AccountID)

	res, err := c.ChargeTopUp(ctx, models.ChargeRequest{ConglomerateID: "cong-1", CustomerID: cust, Credits: 50, UnitAmountCents: 10, IdempotencyKey: "auto-1"})
	require.NoError(t, err)
	assert.NotEmpty(t, res.ID)
	assert.NotEmpty(t, res.Status)

	require.NoError(t, c.DeactivateCompany(ctx, "company-1"))
}

func TestHealthReportsSameAccountAndUnpinnedEndpoints(t *testing.T) {
	h, err := newClient(t).Health(context.Background())
	require.NoError(t, err)
	// stripe-mock makes up a new account id per call (so the accounts look
	// distinct) and lists a webhook endpoint without a pinned API version,
	// which is a finding.
	assert.False(t, h.OK)
	assert.NotEmpty(t, h.PlatformAccountID)
	assert.NotEmpty(t, h.ConnectAccountID)
	assert.Equal(t, h.PlatformAccountID != h.ConnectAccountID, h.AccountsDistinct)
	assert.Equal(t, stripe.APIVersion, h.APIVersion)
	require.NotEmpty(t, h.WebhookEndpoints)
	assert.False(t, h.WebhookEndpoints[0].Pinned)
	assert.Contains(t, h.Problems, "webhook endpoint "+h.WebhookEndpoints[0].ID+" uses API version the account default, not "+stripe.APIVersion)
}

func signed(t *testing.T, id, typ string, object any) ([]byte, string) {
	return testenv.SignedStripeEvent(t, whsec, id, typ, object)
}

func TestParseWebhook(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	meta := map[string]string{"holdco_conglomerate_id": "cong-1", "holdco_kind": "top_up", "holdco_credits": "120"}

	payload, sig := signed(t, "evt_1", "checkout.session.completed", map[string]any{"id": "cs_1", "object": "checkout.session",
		"mode": "payment", "payment_status": "paid", "customer": "cus_1", "metadata": meta})
	ev, err := c.ParseWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, models.EventCredits, ev.Kind)
	assert.Equal(t, "cong-1", ev.ConglomerateID)
	assert.Equal(t, int64(120), ev.Credits)
	assert.Equal(t, models.EntryTopUp, ev.EntryType)
	assert.Equal(t, "checkout:cs_1", ev.Reference)
	assert.Equal(t, "cus_1", ev.CustomerID)

	// An unpaid (delayed) checkout credits nothing yet.
	payload, sig = signed(t, "evt_2", "checkout.session.completed", map[string]any{"id": "cs_2", "object": "checkout.session",
		"mode": "payment", "payment_status": "unpaid", "metadata": meta})
	ev, err = c.ParseWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, models.EventIgnored, ev.Kind)

	// Tampered payload, wrong secret, no header: ErrBadSignature.
	payload, sig = signed(t, "evt_3", "checkout.session.completed", map[string]any{"id": "cs_3", "metadata": meta})
	tampered := append([]byte{}, payload...)
	tampered[len(tampered)-2] = ' '
	for _, tc := range []struct {
		payload []byte
		sig     string
	}{{tampered, sig}, {payload, ""}, {payload, "t=1,v1=00"}} {
		_, err := c.ParseWebhook(ctx, tc.payload, tc.sig)
		assert.True(t, errors.Is(err, models.ErrBadSignature), "%v", err)
	}

	payload, sig = signed(t, "evt_4", "customer.subscription.updated", map[string]any{"id": "sub_1", "object": "subscription",
		"status": "past_due", "customer": "cus_1", "current_period_end": 1900000000,
		"items": map[string]any{"object": "list", "data": []any{map[string]any{"id": "si_1", "price": map[string]any{"id": testenv.FounderPriceID}}}}})
	ev, err = c.ParseWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, models.EventSubscription, ev.Kind)
	assert.Equal(t, models.PlanFounder, ev.Plan)
	assert.Equal(t, "past_due", ev.PlanStatus)
	assert.Equal(t, "cus_1", ev.CustomerID)
	require.NotNil(t, ev.PlanRenewsAt)

	payload, sig = signed(t, "evt_5", "customer.subscription.deleted", map[string]any{"id": "sub_1", "object": "subscription",
		"status": "active", "customer": "cus_1", "metadata": map[string]string{"holdco_plan": "founder"}})
	ev, err = c.ParseWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, models.SubscriptionCanceled, ev.PlanStatus)

	payload, sig = signed(t, "evt_6", "invoice.paid", map[string]any{"id": "in_1", "object": "invoice", "customer": "cus_1",
		"lines": map[string]any{"object": "list", "data": []any{map[string]any{"id": "il_1", "price": map[string]any{"id": testenv.FounderPriceID}}}}})
	ev, err = c.ParseWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, models.EventCredits, ev.Kind)
	assert.Equal(t, models.EntryPlanGrant, ev.EntryType)
	assert.Equal(t, int64(100), ev.Credits)
	assert.Equal(t, "invoice:in_1", ev.Reference)

	payload, sig = signed(t, "evt_7", "account.updated", map[string]any{"id": "acct_1", "object": "account", "charges_enabled": true,
		"payouts_enabled": false, "details_submitted": true, "requirements": map[string]any{"currently_due": []string{"external_account"}}})
	ev, err = c.ParseWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, models.EventConnectAccount, ev.Kind)
	assert.Equal(t, models.ConnectState{AccountID: "acct_1", ChargesEnabled: true, DetailsSubmitted: true, Requirements: []string{"external_account"}}, ev.Connect)

	payload, sig = signed(t, "evt_8", "payment_intent.succeeded", map[string]any{"id": "pi_1", "object": "payment_intent", "customer": "cus_1",
		"metadata": map[string]string{"holdco_conglomerate_id": "cong-1", "holdco_kind": "auto_top_up", "holdco_credits": "50"}})
	ev, err = c.ParseWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, models.EventCredits, ev.Kind)
	assert.Equal(t, "payment_intent:pi_1", ev.Reference)

	payload, sig = signed(t, "evt_9", "charge.dispute.created", map[string]any{"id": "dp_1", "object": "dispute", "charge": "ch_1", "reason": "fraudulent"})
	ev, err = c.ParseWebhook(ctx, payload, sig)
	require.NoError(t, err)
	// The disputed charge is fetched for its customer; stripe-mock's charge
	// has none, so there is no account to block.
	assert.Equal(t, models.EventIgnored, ev.Kind)

	payload, sig = signed(t, "evt_10", "product.created", map[string]any{"id": "prod_1", "object": "product"})
	ev, err = c.ParseWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, models.EventIgnored, ev.Kind)
	assert.Equal(t, "evt_10", ev.ID)
}
