package agenttools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/agenttools"
	"holdco/service/usecases"
	"holdco/testenv"
)

// The sales tools against stripe-mock: products, checkout links, and the
// payments and revenue a delivered Connect event records.
func TestSalesTools(t *testing.T) {
	pay := testenv.StripePayments(t, "whsec_agenttools")
	w := newWorld(t, usecases.Options{Payments: pay, Sales: pay})
	cong := mustCong(t, w)
	account := "acct_" + uuid.NewString()[:12]
	bg := context.Background()
	require.NoError(t, w.e.Store.Billing().SetConnectAccount(bg, w.e.Store.SystemConglomerateScope(cong), account))
	require.NoError(t, w.e.Store.Billing().UpdateConnectState(bg, models.ConnectState{AccountID: account, ChargesEnabled: true, DetailsSubmitted: true}))

	var p agenttools.Product
	w.call(t, "create_product", map[string]any{"name": "Sourdough box", "description": "Six loaves", "price_cents": 2500, "interval": "month"}, &p)
	assert.Equal(t, "month", p.Interval)
	assert.Equal(t, "usd", p.Currency)
	ps, err := w.e.Svc.ListProducts(w.owner, w.company)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	assert.Equal(t, p.ID, ps[0].ID)
	var pl agenttools.ProductList
	w.call(t, "list_products", nil, &pl)
	require.Len(t, pl.Products, 1)

	var link agenttools.PaymentLink
	w.call(t, "create_payment_link", map[string]any{"product_id": p.ID, "success_url": "https://bakery.example/thanks"}, &link)
	assert.NotEmpty(t, link.URL)
	_, err = w.cat.Call(w.agent, w.company, "create_payment_link", json.RawMessage(`{"product_id":"`+uuid.NewString()+`"}`))
	assert.Equal(t, models.CodeNotFound, domainErr(t, err).Code)
	_, err = w.cat.Call(w.agent, w.company, "create_product", json.RawMessage(`{"name":"Cheap","price_cents":10}`))
	assert.Equal(t, "price_cents", domainErr(t, err).Field, "the schema's minimum")

	payload, sig := testenv.SignedConnectEvent(t, testenv.StripeConnectWebhookSecret, "evt_tools_1", "checkout.session.completed", account,
		map[string]any{"id": "cs_tools", "object": "checkout.session", "mode": "payment", "payment_status": "paid",
			"payment_intent": "pi_tools", "amount_total": 2500, "currency": "usd", "metadata": map[string]string{"company_id": w.company}})
	_, err = w.e.Svc.HandleSalesWebhook(bg, payload, sig)
	require.NoError(t, err)

	var pays agenttools.PaymentList
	w.call(t, "list_payments", map[string]any{"limit": 5}, &pays)
	require.Len(t, pays.Payments, 1)
	assert.EqualValues(t, 2500, pays.Payments[0].AmountCents)
	var rev agenttools.Revenue
	w.call(t, "get_revenue", nil, &rev)
	assert.EqualValues(t, 2500, rev.BalanceCents)
	assert.EqualValues(t, 1, rev.Payments)
	require.Len(t, rev.RecentPayments, 1)
	var subs agenttools.SubscriptionList
	w.call(t, "list_subscriptions", nil, &subs)
	assert.Empty(t, subs.Subscriptions)
}
