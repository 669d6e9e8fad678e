package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
)

func salesAPIWorld(t *testing.T) *world {
	t.Helper()
	pay := testenv.StripePayments(t, apiWebhookSecret)
	return newWorldWith(t, usecases.Options{Payments: pay, Sales: pay})
}

// onboard gives a conglomerate a connected account that takes payments.
func (w *world) onboard(cong, account string) {
	w.t.Helper()
	ctx := context.Background()
	require.NoError(w.t, w.store.Billing().SetConnectAccount(ctx, w.store.SystemConglomerateScope(cong), account))
	require.NoError(w.t, w.store.Billing().UpdateConnectState(ctx, models.ConnectState{AccountID: account, ChargesEnabled: true, PayoutsEnabled: true, DetailsSubmitted: true}))
}

func (w *world) connectWebhook(payload []byte, signature string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/stripe/connect", strings.NewReader(string(payload)))
	req.Header.Set("Content-Type", "application/json")
	if signature != "" {
		req.Header.Set("Stripe-Signature", signature)
	}
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	return rec
}

func TestSalesOverREST(t *testing.T) {
	w := salesAPIWorld(t)
	base := "/companies/" + w.adaCo

	// Before onboarding: 409 with the reason and where to finish it.
	var refusal map[string]any
	w.call(http.MethodPost, base+"/products", userA, `{"name":"Guide","price_cents":900}`, http.StatusConflict, &refusal)
	assert.Equal(t, "payout_onboarding_incomplete", refusal["reason"])
	assert.Equal(t, "not_started", refusal["connect_state"])
	assert.Contains(t, refusal["links"].(map[string]any)["onboarding"], "/dashboard?conglomerate_id="+w.adaCong)

	w.onboard(w.adaCong, "acct_ada_rest")
	w.onboard(w.bobCong, "acct_bob_rest")
	w.call(http.MethodPost, base+"/products", userA, `{"name":"Guide","price_cents":10}`, http.StatusUnprocessableEntity, nil)
	w.call(http.MethodPost, base+"/products", userA, `{"name":"Guide","price_cents":900,"interval":"week"}`, http.StatusUnprocessableEntity, nil)
	w.call(http.MethodPost, base+"/products", userA, "{\"name\":\"Gu\\u0000ide\",\"price_cents\":900}", http.StatusUnprocessableEntity, nil)
	var product map[string]any
	w.call(http.MethodPost, base+"/products", company, `{"name":"Guide","description":"A PDF\nin two lines","price_cents":900}`, http.StatusCreated, &product)
	assert.Nil(t, product["interval"])
	assert.Equal(t, "usd", product["currency"])
	var club map[string]any
	w.call(http.MethodPost, base+"/products", userA, `{"name":"Club","price_cents":500,"interval":"month"}`, http.StatusCreated, &club)
	assert.Equal(t, "month", club["interval"])
	var products map[string][]map[string]any
	w.call(http.MethodGet, base+"/products", pat, "", http.StatusOK, &products)
	assert.Len(t, products["products"], 2)

	var link map[string]any
	w.call(http.MethodPost, base+"/products/"+product["id"].(string)+"/checkout-link", company, `{"success_url":"https://shop.example/thanks"}`, http.StatusOK, &link)
	assert.NotEmpty(t, link["url"])
	w.call(http.MethodPost, base+"/products/"+club["id"].(string)+"/checkout-link", userA, "", http.StatusOK, &link)
	w.call(http.MethodPost, "/companies/"+w.bobCo+"/products/"+product["id"].(string)+"/checkout-link", userB, "", http.StatusNotFound, nil)

	// A customer pays; the Connect endpoint records it once.
	payload, sig := testenv.SignedConnectEvent(t, testenv.StripeConnectWebhookSecret, "evt_rest_pay", "checkout.session.completed", "acct_ada_rest",
		map[string]any{"id": "cs_rest", "object": "checkout.session", "mode": "payment", "payment_status": "paid", "payment_intent": "pi_rest",
			"amount_total": 900, "currency": "usd", "metadata": map[string]string{"company_id": w.adaCo, "holdco_product_id": product["id"].(string)}})
	require.Equal(t, http.StatusBadRequest, w.connectWebhook(payload, "t=1,v1=00").Code)
	for range 3 {
		require.Equal(t, http.StatusOK, w.connectWebhook(payload, sig).Code)
	}
	// The platform endpoint does not take the Connect endpoint's events.
	require.Equal(t, http.StatusBadRequest, w.webhook(payload, sig).Code)

	var rev map[string]any
	w.call(http.MethodGet, base+"/revenue", userA, "", http.StatusOK, &rev)
	assert.Equal(t, float64(900), rev["balance_cents"])
	assert.Equal(t, float64(900), rev["lifetime_earnings_cents"])
	assert.Equal(t, float64(0), rev["withdrawn_cents"])
	assert.Len(t, rev["recent_payments"], 1)
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/revenue", userB, "", http.StatusForbidden, nil)
	var pays map[string][]map[string]any
	w.call(http.MethodGet, base+"/payments?limit=1", userA, "", http.StatusOK, &pays)
	assert.Len(t, pays["payments"], 1)
	w.call(http.MethodGet, base+"/payments?limit=0", userA, "", http.StatusUnprocessableEntity, nil)

	var ms map[string]any
	w.call(http.MethodGet, base+"/milestones", userA, "", http.StatusOK, &ms)
	assert.Len(t, ms["achieved"], 1, "first_dollar")

	// A customer's subscription, cancelled by the company's agents.
	payload, sig = testenv.SignedConnectEvent(t, testenv.StripeConnectWebhookSecret, "evt_rest_sub", "customer.subscription.created", "acct_ada_rest",
		map[string]any{"id": "sub_rest", "object": "subscription", "status": "active", "metadata": map[string]string{"company_id": w.adaCo}})
	require.Equal(t, http.StatusOK, w.connectWebhook(payload, sig).Code)
	var subs map[string][]map[string]any
	w.call(http.MethodGet, base+"/subscriptions", userA, "", http.StatusOK, &subs)
	require.Len(t, subs["subscriptions"], 1)
	w.call(http.MethodPost, "/companies/"+w.bobCo+"/subscriptions/sub_rest/cancel", companyB, "", http.StatusNotFound, nil)
	var canceled map[string]any
	w.call(http.MethodPost, base+"/subscriptions/sub_rest/cancel", company, "", http.StatusOK, &canceled)
	assert.Equal(t, "canceled", canceled["status"])

	// Archived, the company keeps what it earned.
	w.call(http.MethodDelete, base, userA, "", http.StatusNoContent, nil)
	var archived map[string][]map[string]any
	w.call(http.MethodGet, "/conglomerates/"+w.adaCong+"/companies/archived", userA, "", http.StatusOK, &archived)
	require.Len(t, archived["companies"], 1)
	assert.Equal(t, float64(900), archived["companies"][0]["lifetime_earnings_cents"])
	assert.Equal(t, float64(900), archived["companies"][0]["current_balance_cents"])
	w.call(http.MethodGet, base+"/revenue", userA, "", http.StatusOK, &rev)
	w.call(http.MethodPost, base+"/products", userA, `{"name":"Late","price_cents":900}`, http.StatusNotFound, nil)
}

// statementCounter counts the statements a store runs: with a threshold of
// a nanosecond, the store logs every statement as slow.
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *statementCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "slow SQL statement" {
		c.n.Add(1)
	}
	return nil
}
func (c *statementCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *statementCounter) WithGroup(string) slog.Handler      { return c }

func TestArchivedListQueriesDoNotGrowWithCompanies(t *testing.T) {
	counts := map[int]int64{}
	for _, n := range []int{1, 8} {
		counter := &statementCounter{}
		st := testenv.NewStoreWith(t, slog.New(counter), store.WithSlowQueryThreshold(time.Nanosecond))
		w := newWorldOn(t, st, usecases.Options{})
		ctx := context.Background()
		cong := st.SystemConglomerateScope(w.adaCong)
		for i := range n {
			c, err := st.Companies().CreateCompany(ctx, cong, models.Company{Name: "Old", Handle: fmt.Sprintf("old-%d-%s", i, uuid.NewString()[:8])})
			require.NoError(t, err)
			sc, err := st.SystemCompanyScope(ctx, c.ID)
			require.NoError(t, err)
			_, err = st.Sales().RecordCompanyPayment(ctx, sc, models.CompanyPayment{ProviderPaymentID: "pi_" + c.ID, AmountCents: 100, Currency: "usd", PaidAt: time.Now()})
			require.NoError(t, err)
			_, err = st.Companies().ArchiveCompany(ctx, sc, time.Now())
			require.NoError(t, err)
		}
		before := counter.n.Load()
		var archived map[string][]map[string]any
		w.call(http.MethodGet, "/conglomerates/"+w.adaCong+"/companies/archived", userA, "", http.StatusOK, &archived)
		counts[n] = counter.n.Load() - before
		require.Len(t, archived["companies"], n)
		for _, c := range archived["companies"] {
			assert.Equal(t, float64(100), c["lifetime_earnings_cents"])
			assert.Equal(t, float64(100), c["current_balance_cents"])
		}
	}
	assert.Positive(t, counts[1])
	assert.Equal(t, counts[1], counts[8], "statements for 1 and for 8 archived companies")
}
