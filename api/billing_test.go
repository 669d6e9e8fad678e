package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v76"

	"holdco/service/billing"
	"holdco/service/usecases"
	"holdco/testenv"
)

const apiWebhookSecret = "whsec_api_test"

func paymentsWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, usecases.Options{Payments: testenv.StripePayments(t, apiWebhookSecret)})
}

func (w *world) webhook(payload []byte, signature string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", strings.NewReader(string(payload)))
	req.Header.Set("Content-Type", "application/json")
	if signature != "" {
		req.Header.Set("Stripe-Signature", signature)
	}
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, req)
	return rec
}

func TestStripeWebhookEndpoint(t *testing.T) {
	w := paymentsWorld(t)
	payload, header := testenv.SignedStripeEvent(t, apiWebhookSecret, "evt_api", "checkout.session.completed", map[string]any{
		"id": "cs_api", "object": "checkout.session", "mode": "payment", "payment_status": "paid",
		"metadata": map[string]string{"holdco_conglomerate_id": w.adaCong, "holdco_kind": "top_up", "holdco_credits": "40"}})

	rec := w.webhook(payload, "t=1,v1=00")
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	var e map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
	assert.Equal(t, "bad_request", e["error"])
	rec = w.webhook(payload, "")
	require.Equal(t, http.StatusBadRequest, rec.Code, "no signature")

	for i, dup := range []bool{false, true} {
		rec = w.webhook(payload, header)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var ack map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &ack))
		assert.Equal(t, dup, ack["duplicate"], "delivery %d", i)
		assert.Equal(t, "evt_api", ack["event_id"])
	}
	var billing map[string]any
	w.call(http.MethodGet, "/conglomerates/"+w.adaCong+"/billing", userA, "", http.StatusOK, &billing)
	assert.Equal(t, float64(40), billing["balance"], "credited once")
	assert.Equal(t, true, billing["payments_configured"])
	assert.Equal(t, true, billing["can_start_business"])
}

func TestCheckoutAndBillingLinkOverREST(t *testing.T) {
	w := paymentsWorld(t)
	var cs map[string]any
	w.call(http.MethodPost, "/conglomerates/"+w.adaCong+"/billing/checkout-session", userA, `{"kind":"top_up","credits":100}`, http.StatusOK, &cs)
	assert.NotEmpty(t, cs["url"])
	w.call(http.MethodPost, "/conglomerates/"+w.adaCong+"/billing/checkout-session", userA, `{"kind":"founder"}`, http.StatusOK, &cs)
	w.call(http.MethodPost, "/conglomerates/"+w.adaCong+"/billing/checkout-session", userA, `{"kind":"top_up","credits":5}`, http.StatusUnprocessableEntity, nil)
	w.call(http.MethodPost, "/conglomerates/"+w.adaCong+"/billing/checkout-session", userA, `{"kind":"gift"}`, http.StatusUnprocessableEntity, nil)
	var portal map[string]any
	w.call(http.MethodPost, "/conglomerates/"+w.adaCong+"/billing/portal-session", userA, "", http.StatusOK, &portal)
	assert.NotEmpty(t, portal["url"])

	var billing struct {
		Links map[string]*string `json:"links"`
	}
	w.call(http.MethodGet, "/conglomerates/"+w.adaCong+"/billing", userA, "", http.StatusOK, &billing)
	require.NotNil(t, billing.Links["top_up"])
	u, err := url.Parse(*billing.Links["top_up"])
	require.NoError(t, err)
	rec := w.do(http.MethodGet, u.RequestURI(), anon, "")
	require.Equal(t, http.StatusFound, rec.Code, rec.Body.String())
	assert.NotEmpty(t, rec.Header().Get("Location"))
	assert.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	w.call(http.MethodGet, "/billing/go", anon, "", http.StatusUnprocessableEntity, nil)

	w.call(http.MethodPut, "/conglomerates/"+w.adaCong+"/billing/auto-top-up", userA, `{"enabled":true,"threshold":-1,"credits":100}`, http.StatusUnprocessableEntity, nil)
	var st map[string]any
	w.call(http.MethodPut, "/conglomerates/"+w.adaCong+"/billing/auto-top-up", userA, `{"enabled":true,"threshold":20,"credits":100}`, http.StatusOK, &st)
	assert.Equal(t, map[string]any{"enabled": true, "threshold": float64(20), "credits": float64(100)}, st["auto_top_up"])

	var cst map[string]any
	w.call(http.MethodGet, "/conglomerates/me/connect-status", userA, "", http.StatusOK, &cst)
	assert.Equal(t, "not_started", cst["state"])
	var onb map[string]any
	w.call(http.MethodPost, "/conglomerates/me/connect-onboarding", userA, "", http.StatusOK, &onb)
	assert.NotEmpty(t, onb["url"])

	var h map[string]any
	w.call(http.MethodGet, "/health/stripe", admin, "", http.StatusOK, &h)
	assert.Equal(t, stripe.APIVersion, h["api_version"])
	assert.Equal(t, false, h["ok"], "stripe-mock's webhook endpoint is not pinned")
}

// TestCheckoutCreditsMinimumIsDocumented: the schema states the top-up
// rule (10 to 100000), not a minimum of 0.
func TestCheckoutCreditsMinimumIsDocumented(t *testing.T) {
	w := newWorld(t)
	s := w.api.OpenAPI().Components.Schemas.Map()["CheckoutSessionRequest"]
	require.NotNil(t, s)
	credits := s.Properties["credits"]
	require.NotNil(t, credits.Minimum)
	assert.EqualValues(t, billing.MinTopUpCredits, *credits.Minimum)
	require.NotNil(t, credits.Maximum)
	assert.EqualValues(t, billing.MaxTopUpCredits, *credits.Maximum)
}
