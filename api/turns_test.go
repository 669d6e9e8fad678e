package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/usecases"
	"holdco/testenv"
)

// POST /companies/{id}/messages takes an optional Idempotency-Key: a
// repeat answers 202 with the turn the first request created, the key
// with another message 409 idempotency_key_reused, a bad key 422.
func TestSendMessageWithAnIdempotencyKeyAnswersTheFirstTurn(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil) // no worker: turns stay queued
	w := newWorldWith(t, usecases.Options{Temporal: tmp.Client, AgentRunEvery: time.Hour})
	ctx := context.Background()
	scope, err := w.store.SystemCompanyScope(ctx, w.adaCo)
	require.NoError(t, err)
	for _, k := range models.ResourceKinds {
		require.NoError(t, w.store.Companies().SaveResource(ctx, scope, models.CompanyResource{CompanyID: w.adaCo, Kind: k, Status: models.ResourceReady, Ref: "ref"}))
	}
	w.grantAda(10)
	path := "/companies/" + w.adaCo + "/messages"
	keyed := func(key string) http.Header { return http.Header{"Idempotency-Key": {key}} }
	send := func(body, key string) (int, map[string]any) {
		rec := w.doWith(http.MethodPost, path, userA, body, keyed(key))
		var out map[string]any
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
		return rec.Code, out
	}

	key := uuid.NewString()
	code, first := send(`{"message":"Plan the launch"}`, key)
	require.Equal(t, http.StatusAccepted, code, first)
	code, again := send(`{"message":"Plan the launch"}`, key)
	require.Equal(t, http.StatusAccepted, code, again)
	assert.Equal(t, first["turn_id"], again["turn_id"])
	assert.Equal(t, first["session_id"], again["session_id"])
	assert.Equal(t, "queued", again["status"])

	code, other := send(`{"message":"Plan the party"}`, key)
	require.Equal(t, http.StatusConflict, code, other)
	assert.Equal(t, "conflict", other["error"])
	assert.Equal(t, "idempotency_key_reused", other["reason"])

	// Another key while the first turn is queued: one turn at a time, as
	// without a key.
	code, busy := send(`{"message":"Plan the party"}`, uuid.NewString())
	require.Equal(t, http.StatusConflict, code, busy)
	assert.Equal(t, first["turn_id"], busy["turn_id"])

	for _, bad := range []string{strings.Repeat("k", 256), "not a key"} {
		code, refused := send(`{"message":"Plan the launch"}`, bad)
		assert.Equal(t, http.StatusUnprocessableEntity, code, refused)
		assert.Contains(t, fmt.Sprint(refused["detail"]), "Idempotency-Key", "the header is named")
	}

	var page map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/turns", userA, "", http.StatusOK, &page)
	assert.Len(t, page["turns"], 1)
}
