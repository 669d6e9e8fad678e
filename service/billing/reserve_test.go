package billing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/store"
)

// Holds are seen by every spend and every other hold, and the charge with
// the hold's key takes its place.
func TestHoldsBoundSpendsAndSettleIntoTheirCharge(t *testing.T) {
	e, ada, cong, scope := funded(t, 10)
	ctx := context.Background()
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

// funded is a service environment with ada's account holding credits.
func funded(t *testing.T, credits int64) (*servicetest.Env, context.Context, string, store.ConglomerateScope) {
	t.Helper()
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	scope := e.Store.SystemConglomerateScope(cong)
	_, err := e.Svc.GrantCredits(context.Background(), scope, models.EntryAdminAdjustment, credits, "test credits")
	require.NoError(t, err)
	return e, ada, cong, scope
}

func domainErr(t *testing.T, err error) *models.Error {
	t.Helper()
	var de *models.Error
	require.ErrorAs(t, err, &de)
	return de
}

// Lowering the daily cap while paid work runs does not make the work
// free: the cap was checked for the hold when it was made, so the charge
// that settles the hold is taken (an email sent during the PATCH, a model
// call answered). What a call costs above its hold still meets the cap:
// SettleOnce takes what the cap allows and says it is reached.
func TestLoweringTheCapDuringWorkDoesNotMakeItFree(t *testing.T) {
	e, ada, cong, scope := funded(t, 100)
	ctx := context.Background()
	var err error
	setCap := func(v int64) {
		t.Helper()
		var u companies.ConglomerateUpdate
		u.DailyCreditCap.Set, u.DailyCreditCap.Value = true, &v
		_, err := e.Svc.UpdateConglomerate(ada, cong, u)
		require.NoError(t, err)
	}
	balance := func() int64 {
		t.Helper()
		state, err := e.Svc.Credits(ada, cong)
		require.NoError(t, err)
		return state.Balance
	}

	// A billable act: the owner sets the cap to 0 while the email goes out.
	act := billing.Usage{RunID: "run-1", Type: models.EntryToolUsage, Credits: 1, Key: "run-1/tool/1/0"}
	require.NoError(t, e.Svc.PayFor(ctx, scope, act, func(context.Context) error { setCap(0); return nil }))
	assert.Equal(t, int64(99), balance(), "the act done is paid")
	err = e.Svc.PayFor(ctx, scope, billing.Usage{RunID: "run-1", Type: models.EntryToolUsage, Credits: 1, Key: "run-1/tool/2/0"},
		func(context.Context) error { t.Error("an act past the cap ran"); return nil })
	assert.Equal(t, models.CodeRateLimited, domainErr(t, err).Code, "the next act meets the lowered cap")

	// A model call holds 6 at a cap of 20, then costs 9 with the cap
	// lowered to 3 meanwhile: the 6 held are charged, not the 3 over.
	setCap(20)
	call := billing.Usage{RunID: "run-2", Type: models.EntryTokenUsagePartial, Credits: 6, Key: "run-2/model/1"}
	held, _, err := e.Svc.Reserve(ctx, scope, call, 1)
	require.NoError(t, err)
	require.Equal(t, int64(6), held)
	setCap(3)
	call.Credits = 9
	_, _, err = e.Svc.SpendOnce(ctx, scope, call)
	assert.Equal(t, models.CodeRateLimited, domainErr(t, err).Code, "a whole spend over the cap is refused")
	_, charged, err := e.Svc.SettleOnce(ctx, scope, call)
	de := domainErr(t, err)
	assert.Equal(t, models.CodeRateLimited, de.Code)
	assert.Equal(t, int64(3), de.Extra["needed"], "what was left unpaid")
	assert.Equal(t, int64(6), charged, "at least the hold")
	assert.Equal(t, int64(93), balance())
	_, charged, err = e.Svc.SettleOnce(ctx, scope, call)
	require.NoError(t, err, "a retry of the settled charge")
	assert.Zero(t, charged, "pays nothing more")

	// A call holding hold at capValue that costs cost: what SettleOnce took.
	settle := func(run string, capValue, hold, cost int64) (int64, error) {
		t.Helper()
		setCap(capValue)
		call := billing.Usage{RunID: run, Type: models.EntryTokenUsagePartial, Credits: hold, Key: run + "/model/1"}
		_, _, err := e.Svc.Reserve(ctx, scope, call, 1)
		require.NoError(t, err)
		call.Credits = cost
		_, charged, err := e.Svc.SettleOnce(ctx, scope, call)
		return charged, err
	}
	// With room under the cap, the overrun is charged as far as it goes:
	// 7 spent today, 5 of room.
	charged, err = settle("run-3", 12, 2, 8)
	assert.Equal(t, models.CodeRateLimited, domainErr(t, err).Code)
	assert.Equal(t, int64(5), charged, "up to the cap, more than the hold")
	assert.Equal(t, int64(88), balance())

	// The balance binds a settle as it always did: never overdrawn.
	charged, err = settle("run-4", 1000, 80, 200)
	assert.Equal(t, models.CodeInsufficientCredits, domainErr(t, err).Code)
	assert.Equal(t, int64(88), charged, "all there was")
	assert.Zero(t, balance())
}
