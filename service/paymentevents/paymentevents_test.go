package paymentevents_test

import (
	"context"
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

const secret = "whsec_test_payment_events"

// The router sends a domain checkout's payment to growth and every other
// event to billing. Billing alone refuses a domain payment without
// recording it, so the provider delivers it again; through the router the
// same event marks the purchase paid.
func TestPaymentEventsGoToTheirDomain(t *testing.T) {
	e := servicetest.NewWith(t, usecases.Options{Payments: testenv.StripePayments(t, secret)})
	ctx := context.Background()
	ada, cong := e.User(t, "ada@example.com")
	co := e.SeedCompany(t, ada, companies.CompanyInput{Name: "Routed Tea"})
	domain := servicetest.FreeDomain(t, ada, e.Svc.Growth, co.ID, "routedtea")
	c, err := e.Svc.Growth.CreateCheckout(ada, co.ID, growth.CheckoutInput{Domain: domain})
	require.NoError(t, err)
	state := func() models.DomainState {
		es, err := e.Svc.Growth.ListDomains(ada, co.ID)
		require.NoError(t, err)
		require.Len(t, es, 1)
		return es[0].State
	}
	before := state()

	paid, sig := testenv.SignedStripeEvent(t, secret, "evt_domain_paid", "checkout.session.completed", map[string]any{
		"id": c.Purchase.CheckoutID, "object": "checkout.session", "mode": "payment", "payment_status": "paid", "amount_total": c.Purchase.PriceCents,
		"metadata": map[string]any{"holdco_conglomerate_id": cong, "holdco_kind": "domain", "holdco_domain_purchase_id": c.Purchase.ID}})
	bill := e.Svc.BillingUseCases
	_, err = bill.ApplyPaymentWebhook(ctx, paid, sig, bill.ApplyPaymentEvent)
	require.Error(t, err, "billing alone does not apply a domain payment")
	assert.Equal(t, before, state())

	res, err := e.Svc.HandlePaymentWebhook(ctx, paid, sig)
	require.NoError(t, err)
	assert.False(t, res.Duplicate, "the refused delivery was not recorded")
	assert.Equal(t, models.DomainOrderPending, state(), "paid: the registration starts")

	topUp, sig := testenv.SignedStripeEvent(t, secret, "evt_top_up", "checkout.session.completed", map[string]any{
		"id": "cs_routed", "object": "checkout.session", "mode": "payment", "payment_status": "paid",
		"metadata": map[string]string{"holdco_conglomerate_id": cong, "holdco_kind": "top_up", "holdco_credits": "120"}})
	_, err = e.Svc.HandlePaymentWebhook(ctx, topUp, sig)
	require.NoError(t, err)
	st, err := e.Svc.Credits(ada, cong)
	require.NoError(t, err)
	assert.Equal(t, int64(120), st.Balance, "credits go to billing")
}
