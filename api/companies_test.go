package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/founding"
	"holdco/service/usecases"
)

// TestCreateCompanyIsTheBusinessStart: POST /conglomerates/{id}/companies
// is the one business start with its documented answers: the first start
// grants the welcome credits; 402 insufficient_credits under 12 credits
// (counting the welcome credits); 403 business_limit_reached at the
// account's limit, before the credits, with the limit and the count; a
// refused start creates nothing.
func TestCreateCompanyIsTheBusinessStart(t *testing.T) {
	w := newWorldWith(t, usecases.Options{FoundingLimits: founding.Limits{BusinessLimit: 3}})
	ctx := context.Background()
	cong := w.store.SystemConglomerateScope(w.adaCong)
	path := "/conglomerates/" + w.adaCong + "/companies"
	count := func() int {
		var list map[string]any
		w.call(http.MethodGet, path, userA, "", http.StatusOK, &list)
		return len(list["companies"].([]any))
	}
	balance := func() float64 {
		var page map[string]any
		w.call(http.MethodGet, "/conglomerates/"+w.adaCong+"/credit-ledger", userA, "", http.StatusOK, &page)
		return page["balance"].(float64)
	}

	// Ada has one company and no credits: the welcome credits count, and
	// this start grants them.
	require.Equal(t, 0.0, balance())
	w.call(http.MethodPost, path, userA, `{"name":"Second Shop"}`, http.StatusCreated, nil)
	assert.Equal(t, 15.0, balance(), "the welcome credits came with the start")

	// 11 credits: short.
	_, err := w.svc.Billing.Spend(ctx, cong, "", "run-1", models.EntryTokenUsagePartial, 4)
	require.NoError(t, err)
	var refused map[string]any
	w.call(http.MethodPost, path, userA, `{"name":"Third Shop"}`, http.StatusPaymentRequired, &refused)
	assert.Equal(t, "insufficient_credits", refused["error"])
	assert.Equal(t, 12.0, refused["needed"])
	assert.Equal(t, 11.0, refused["balance"])
	assert.Contains(t, refused, "links")

	// Enough again: the third goes through, no second welcome.
	_, err = w.svc.Billing.GrantCredits(ctx, cong, models.EntryAdminAdjustment, 1, "test")
	require.NoError(t, err)
	w.call(http.MethodPost, path, userA, `{"name":"Third Shop"}`, http.StatusCreated, nil)
	assert.Equal(t, 12.0, balance())

	// At the limit, with the credits short too: the limit answers.
	_, err = w.svc.Billing.Spend(ctx, cong, "", "run-2", models.EntryTokenUsagePartial, 5)
	require.NoError(t, err)
	w.call(http.MethodPost, path, userA, `{"name":"Fourth Shop"}`, http.StatusForbidden, &refused)
	assert.Equal(t, "business_limit_reached", refused["error"])
	assert.Equal(t, "This account has 3 businesses and may have at most 3; archive one to start another.", refused["detail"])
	assert.Equal(t, 3.0, refused["limit"])
	assert.Equal(t, 3.0, refused["count"])
	assert.Equal(t, 3, count(), "refused starts create nothing")
}
