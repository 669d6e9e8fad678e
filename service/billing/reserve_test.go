package billing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/billing"
	"holdco/service/servicetest"
)

// Holds are seen by every spend and every other hold, and the charge with
// the hold's key takes its place.
func TestHoldsBoundSpendsAndSettleIntoTheirCharge(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	ctx, scope := context.Background(), e.Store.SystemConglomerateScope(cong)
	_, err := e.Svc.GrantCredits(ctx, scope, models.EntryAdminAdjustment, 10, "test credits")
	require.NoError(t, err)
	usage := func(key string, credits int64) billing.Usage {
		return billing.Usage{RunID: "run-1", Type: models.EntryTokenUsagePartial, Credits: credits, Key: key}
	}

	held, paid, err := e.Svc.Reserve(ctx, scope, usage("a", 6), 1)
	require.NoError(t, err)
	assert.Equal(t, int64(6), held)
	assert.False(t, paid)
	held, _, err = e.Svc.Reserve(ctx, scope, usage("a", 6), 1)
	require.NoError(t, err)
	assert.Equal(t, int64(6), held, "a retry holds nothing more")
	held, _, err = e.Svc.Reserve(ctx, scope, usage("b", 6), 1)
	require.NoError(t, err)
	assert.Equal(t, int64(4), held, "what is left, at least one")
	_, _, err = e.Svc.Reserve(ctx, scope, usage("c", 6), 1)
	de := domainErr(t, err)
	assert.Equal(t, models.CodeInsufficientCredits, de.Code)
	assert.Equal(t, int64(0), de.Extra["balance"], "what is free")
	_, err = e.Svc.Spend(ctx, scope, "", "run-2", models.EntryToolUsage, 1)
	assert.Equal(t, models.CodeInsufficientCredits, domainErr(t, err).Code, "held credits are not there to spend")

	// The charge settles the hold: 3 of the 6 held are charged.
	st, charged, err := e.Svc.SpendOnce(ctx, scope, usage("a", 3))
	require.NoError(t, err)
	assert.True(t, charged)
	assert.Equal(t, int64(7), st.Balance)
	_, paid, err = e.Svc.Reserve(ctx, scope, usage("a", 6), 1)
	require.NoError(t, err)
	assert.True(t, paid, "a charged key holds nothing again")
	_, err = e.Svc.Spend(ctx, scope, "", "run-2", models.EntryToolUsage, 3)
	require.NoError(t, err, "7 minus the 4 b holds")
	require.NoError(t, e.Svc.Release(ctx, scope, "b"))
	_, err = e.Svc.Spend(ctx, scope, "", "run-2", models.EntryToolUsage, 4)
	require.NoError(t, err, "a released hold frees its credits")
	state, err := e.Svc.Credits(ada, cong)
	require.NoError(t, err)
	assert.Equal(t, int64(0), state.Balance)
}

// PayFor holds the price before the effect: no credits, no effect; a
// failed effect is not charged; a key charged once is not charged again.
func TestPayForHoldsThePriceBeforeTheEffect(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	ctx, scope := context.Background(), e.Store.SystemConglomerateScope(cong)
	u := billing.Usage{RunID: "run-1", Type: models.EntryToolUsage, Credits: 1, Key: "run-1/tool/1/0"}
	ran := 0
	effect := func(context.Context) error { ran++; return nil }

	err := e.Svc.PayFor(ctx, scope, u, effect)
	assert.Equal(t, models.CodeInsufficientCredits, domainErr(t, err).Code)
	assert.Zero(t, ran, "no credits, no effect")

	_, err = e.Svc.GrantCredits(ctx, scope, models.EntryAdminAdjustment, 2, "test credits")
	require.NoError(t, err)
	boom := errors.New("provider down")
	require.ErrorIs(t, e.Svc.PayFor(ctx, scope, billing.Usage{RunID: "run-1", Type: models.EntryToolUsage, Credits: 1, Key: "other"},
		func(context.Context) error { return boom }), boom)
	require.NoError(t, e.Svc.PayFor(ctx, scope, u, effect))
	require.NoError(t, e.Svc.PayFor(ctx, scope, u, effect), "the same call again")
	assert.Equal(t, 2, ran)
	state, err := e.Svc.Credits(ada, cong)
	require.NoError(t, err)
	assert.Equal(t, int64(1), state.Balance, "one charge: the failed call and the repeated key paid nothing")
}

func domainErr(t *testing.T, err error) *models.Error {
	t.Helper()
	var de *models.Error
	require.ErrorAs(t, err, &de)
	return de
}
