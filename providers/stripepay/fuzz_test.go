package stripepay_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76/webhook"

	"holdco/models"
	"holdco/providers/stripepay"
)

// FuzzStripeWebhook: arbitrary bodies with arbitrary Stripe-Signature
// headers never verify (nor panic); a body signed with the endpoint's
// secret verifies (when it is an event) and is reduced without panicking
// whatever its object holds; the same body with one byte changed, or
// signed with another secret, fails as a bad signature.
func FuzzStripeWebhook(f *testing.F) {
	for _, s := range []string{
		`{"id":"evt_1","object":"event","type":"checkout.session.completed","data":{"object":{"id":"cs_1","mode":"payment","metadata":{"holdco_kind":"top_up","holdco_credits":"10"}}}}`,
		`{"id":"evt_2","object":"event","type":"invoice.paid","data":{"object":{"id":"in_1","lines":{"data":[{"price":{"id":"price_f"}}]}}}}`,
		`{"id":"evt_3","object":"event","type":"charge.dispute.created","data":{"object":{"id":"dp_1","charge":"ch_1","amount":-5}}}`,
		`{"id":"evt_4","object":"event","type":"customer.subscription.updated","data":{"object":{"items":null}}}`,
		`{"id":"evt_5","object":"event","type":"account.updated","data":{"object":"not an object"}}`,
		`{"id":"evt_6","type":"payment_intent.succeeded","data":{"object":{"metadata":{"holdco_kind":"auto_top_up","holdco_credits":"x"}}}}`,
		`{"data":null}`, `[]`, ``,
	} {
		f.Add([]byte(s), "t=1700000000,v1=00", 5)
	}
	// Stripe's API is a local server that has nothing: a reduction that
	// looks something up gets an error, never the network.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","message":"No such object"}}`))
	}))
	f.Cleanup(api.Close)
	const secret = "whsec_fuzz_0123456789"
	c, err := stripepay.New(stripepay.Config{SecretKey: "sk_test_fuzz", WebhookSecret: secret, APIBase: api.URL,
		PlanPrices:  map[models.Plan]string{models.PlanFounder: "price_f"},
		PlanCredits: map[models.Plan]int64{models.PlanFounder: 100}, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, payload []byte, header string, at int) {
		if _, err := c.ParseWebhook(ctx, payload, header); err == nil || !errors.Is(err, models.ErrBadSignature) {
			t.Fatalf("an unsigned body with header %q: %v", header, err)
		}
		signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret})
		if _, err := c.ParseWebhook(ctx, payload, signed.Header); err == nil && !json.Valid(payload) {
			t.Fatalf("%q is not JSON and was taken as an event", payload)
		}
		if len(payload) > 0 {
			changed := append([]byte(nil), payload...)
			changed[int(uint(at)%uint(len(changed)))] ^= 0x20
			if _, err := c.ParseWebhook(ctx, changed, signed.Header); !errors.Is(err, models.ErrBadSignature) {
				t.Fatalf("a changed body verifies: %v", err)
			}
		}
		other := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret + "x"})
		if _, err := c.ParseWebhook(ctx, payload, other.Header); !errors.Is(err, models.ErrBadSignature) {
			t.Fatalf("another secret's signature verifies: %v", err)
		}
	})
}
