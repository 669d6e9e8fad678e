package growth_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
)

const growthWebhookSecret = "whsec_test_growth"

// With payments configured the checkout is a Stripe Checkout Session
// (stripe-mock), and its paid webhook moves the purchase to order_pending
// once, however often it is delivered.
func TestStripeDomainCheckout(t *testing.T) {
	e := servicetest.NewWith(t, usecases.Options{Payments: testenv.StripePayments(t, growthWebhookSecret)})
	ada, cong := e.User(t, "ada@example.com")
	co, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Stripe Tea"})
	require.NoError(t, err)
	domain := servicetest.FreeDomain(t, ada, e.Svc.Growth, co.ID, "stripetea")
	c, err := e.Svc.Growth.CreateCheckout(ada, co.ID, growth.CheckoutInput{Domain: domain})
	require.NoError(t, err)
	assert.Equal(t, growth.ProviderStripe, c.Provider)
	_, err = url.Parse(c.URL)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(c.Purchase.CheckoutID, "cs_"), c.Purchase.CheckoutID)
	_, err = e.Svc.Growth.ConfirmLocalCheckout(context.Background(), "x.y")
	assert.True(t, models.IsCode(err, models.CodeNotFound), "no local confirmation with payments configured")

	session := map[string]any{"id": c.Purchase.CheckoutID, "object": "checkout.session", "mode": "payment", "payment_status": "paid",
		"metadata": map[string]any{"holdco_conglomerate_id": cong, "holdco_kind": "domain", "holdco_domain_purchase_id": c.Purchase.ID}}
	for i, id := range []string{"evt_domain_1", "evt_domain_2"} {
		payload, sig := testenv.SignedStripeEvent(t, growthWebhookSecret, id, "checkout.session.completed", session)
		_, err := e.Svc.HandlePaymentWebhook(context.Background(), payload, sig)
		require.NoError(t, err, "delivery %d", i+1)
	}
	es, err := e.Svc.Growth.ListDomains(ada, co.ID)
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, models.DomainOrderPending, es[0].State)
	assert.NotNil(t, es[0].PaidAt)
}

// With payments configured, money was received: a second paid checkout of
// a name another purchase took is refunded as credits for what it paid
// (the session's amount_total), once however often its event comes, and
// refunded_credits says so; a failed registration of a paid purchase
// likewise. A forged event (bad signature) changes nothing.
func TestStripeDomainRefundsOnlyWhatWasPaid(t *testing.T) {
	e := servicetest.NewWith(t, usecases.Options{Payments: testenv.StripePayments(t, growthWebhookSecret)})
	ada, cong := e.User(t, "ada@example.com")
	co := e.SeedCompany(t, ada, companies.CompanyInput{Name: "Refund Tea"})
	w := &world{e: e, ada: ada, adaCong: cong, shop: co.ID}
	name := freeName(t, w, co.ID, "refundtea")
	open := func() growth.Checkout {
		c, err := e.Svc.Growth.CreateCheckout(ada, co.ID, growth.CheckoutInput{Domain: name})
		require.NoError(t, err)
		return c
	}
	first, second := open(), open()
	deliver := func(c growth.Checkout, evt string, amount int64, secret string) error {
		session := map[string]any{"id": c.Purchase.CheckoutID, "object": "checkout.session", "mode": "payment", "payment_status": "paid",
			"amount_total": amount, "metadata": map[string]any{"holdco_conglomerate_id": cong, "holdco_kind": "domain", "holdco_domain_purchase_id": c.Purchase.ID}}
		payload, sig := testenv.SignedStripeEvent(t, secret, evt, "checkout.session.completed", session)
		_, err := e.Svc.HandlePaymentWebhook(context.Background(), payload, sig)
		return err
	}
	balance := func() int64 {
		st, err := e.Svc.Credits(ada, cong)
		require.NoError(t, err)
		return st.Balance
	}
	require.Error(t, deliver(second, "evt_forged", 99_999_00, "whsec_not_ours"), "a forged event is refused")
	assert.Zero(t, balance())

	require.NoError(t, deliver(first, "evt_first", first.Purchase.PriceCents, growthWebhookSecret))
	for _, id := range []string{"evt_second_1", "evt_second_2"} {
		require.NoError(t, deliver(second, id, 1250, growthWebhookSecret))
	}
	lost, err := e.Store.Growth().DomainPurchaseInPool(context.Background(), e.Store.SystemConglomerateScope(cong), second.Purchase.ID)
	require.NoError(t, err)
	assert.Equal(t, models.DomainFailed, lost.State)
	assert.EqualValues(t, 1250, lost.PaidCents)
	assert.EqualValues(t, 125, lost.RefundedCredits)
	assert.EqualValues(t, 125, balance(), "what was paid, once")

	won, err := e.Svc.Growth.FinishPurchase(context.Background(), e.Store.SystemConglomerateScope(cong), first.Purchase.ID, false, "registry said no")
	require.NoError(t, err)
	assert.Equal(t, (first.Purchase.PriceCents+9)/10, won.RefundedCredits)
	assert.Equal(t, 125+won.RefundedCredits, balance())
}
