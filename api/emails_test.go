package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/service/mail"
)

// inbound posts a delivery signed at ts with the test secret.
func (w *world) inbound(body string, ts time.Time) *httptest.ResponseRecorder {
	t, sig := mail.Sign(testMailConfig.InboundSecret, ts, []byte(body))
	return w.doWith(http.MethodPost, "/webhooks/email/inbound", anon, body, http.Header{mail.TimestampHeader: {t}, mail.SignatureHeader: {sig}})
}

func TestInboundWebhookOverHTTP(t *testing.T) {
	w := newWorld(t)
	var co map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo, userA, "", http.StatusOK, &co)
	rcpt := co["handle"].(string) + "@mail.test"
	body := fmt.Sprintf(`{"message_id":"prov-1","recipient":%q,"from":"jane@example.com","subject":"Secret plans","text":"hello"}`, rcpt)

	rec := w.inbound(body, time.Now())
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var first map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &first))
	assert.Equal(t, false, first["duplicate"])
	again := w.inbound(body, time.Now())
	require.Equal(t, http.StatusOK, again.Code)
	var second map[string]any
	require.NoError(t, json.Unmarshal(again.Body.Bytes(), &second))
	assert.Equal(t, true, second["duplicate"])
	assert.Equal(t, first["email_id"], second["email_id"])

	var list map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/emails", userA, "", http.StatusOK, &list)
	assert.Equal(t, rcpt, list["address"])
	require.Len(t, list["emails"], 1, "a redelivery counts once")
	item := list["emails"].([]any)[0].(map[string]any)
	assert.Equal(t, false, item["read"])
	var one map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/emails/"+first["email_id"].(string), userA, "", http.StatusOK, &one)
	assert.Equal(t, "hello", one["text"])
	assert.Equal(t, true, one["read"])

	// Unknown recipient: accepted and dropped.
	rec = w.inbound(`{"message_id":"prov-2","recipient":"nobody@mail.test","from":"jane@example.com","subject":"x"}`, time.Now())
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `"dropped":true`)

	// A stale or forged delivery is 401 with one sentence and no detail.
	for _, rec := range []*httptest.ResponseRecorder{
		w.inbound(body, time.Now().Add(-10*time.Minute)),
		w.doWith(http.MethodPost, "/webhooks/email/inbound", anon, body, http.Header{mail.TimestampHeader: {fmt.Sprint(time.Now().Unix())}, mail.SignatureHeader: {"v1=00"}}),
	} {
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		assert.Contains(t, rec.Body.String(), "does not verify")
		assert.NotContains(t, rec.Body.String(), "timestamp")
		assert.NotContains(t, rec.Body.String(), "expected")
	}

	// Larger than the webhook accepts: 413.
	big := fmt.Sprintf(`{"message_id":"prov-3","recipient":%q,"from":"jane@example.com","subject":"x","text":%q}`, rcpt, strings.Repeat("a", mail.MaxInboundBytes))
	rec = w.inbound(big, time.Now())
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)

	// Nothing a sender typed reaches the logs.
	logs := w.logs.String()
	for _, secret := range []string{"Secret plans", "jane@example.com", "hello", rcpt} {
		assert.NotContains(t, logs, secret)
	}
}

func TestSendEmailEdgeRules(t *testing.T) {
	w := newWorld(t)
	w.grantAda(10) // a sent message costs a credit
	path := "/companies/" + w.adaCo + "/emails"
	for name, body := range map[string]string{
		"CRLF in subject": `{"to":"jane@example.com","subject":"Hi\r\nBcc: x@example.com","text":"t"}`,
		"NUL in text":     `{"to":"jane@example.com","subject":"Hi","text":"a\u0000b"}`,
		"two recipients":  `{"to":"jane@example.com, bob@example.com","subject":"Hi","text":"t"}`,
		"no subject":      `{"to":"jane@example.com","text":"t"}`,
	} {
		rec := w.do(http.MethodPost, path, userA, body)
		assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s: %s", name, rec.Body.String())
	}
	rec := w.do(http.MethodPost, path, userA, fmt.Sprintf(`{"to":"jane@example.com","subject":"Hi","text":%q}`, strings.Repeat("a", mail.MaxTextBytes+1)))
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())

	var sent map[string]any
	w.call(http.MethodPost, path, userA, `{"to":"Jane <jane@example.com>","subject":"Hi","text":"line one\nline two","reply_to":"ada@example.com"}`, http.StatusCreated, &sent)
	assert.Equal(t, "sent", sent["delivery"])
	assert.Equal(t, "jane@example.com", sent["to"])
	assert.NotContains(t, w.logs.String(), "jane@example.com")
}

// REST's send is paid by the same rule as the agents' and the connector's:
// 402 and nothing sent when the account cannot pay; with an
// Idempotency-Key, the same request sent again answers the first message
// (one message, one charge).
func TestSendEmailIsPaidOnceByItsIdempotencyKey(t *testing.T) {
	w := newWorld(t)
	path := "/companies/" + w.adaCo + "/emails"
	body := `{"to":"jane@example.com","subject":"Hi","text":"Fresh bread."}`
	keyed := func(key string) http.Header { return http.Header{"Idempotency-Key": {key}} }
	outbound := func() int {
		var list map[string]any
		w.call(http.MethodGet, path+"?limit=100", userA, "", http.StatusOK, &list)
		return len(list["emails"].([]any))
	}

	rec := w.doWith(http.MethodPost, path, userA, body, keyed("send-1"))
	assert.Equal(t, http.StatusPaymentRequired, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "insufficient_credits")
	assert.Zero(t, outbound(), "nothing stored or sent")

	w.grantAda(1)
	var first, again map[string]any
	rec = w.doWith(http.MethodPost, path, userA, body, keyed("send-1"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &first))
	rec = w.doWith(http.MethodPost, path, userA, body, keyed("send-1"))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &again))
	assert.Equal(t, first["id"], again["id"], "the first message")
	assert.Equal(t, 1, outbound(), "one message")
	st, err := w.store.Billing().CreditBalance(context.Background(), w.store.SystemConglomerateScope(w.adaCong), time.Now().UTC().Truncate(24*time.Hour))
	require.NoError(t, err)
	assert.Zero(t, st.Balance, "one charge")

	rec = w.doWith(http.MethodPost, path, userA, body, keyed("not a key"))
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "Idempotency-Key")
}
