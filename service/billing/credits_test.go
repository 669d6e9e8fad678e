package billing_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/servicetest"
)

func TestSpendRefusalsCarryExactNumbersAndLinks(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	granted, err := e.Svc.GrantWelcomeCredits(context.Background(), e.Store.SystemConglomerateScope(cong))
	require.NoError(t, err)
	assert.True(t, granted)

	_, err = e.Svc.Spend(context.Background(), e.Store.SystemConglomerateScope(cong), "", "run-1", models.EntryTokenUsagePartial, 20)
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeInsufficientCredits, de.Code)
	assert.Equal(t, "This needs 20 credits but the account has 15; add at least 5 credits or upgrade the plan.", de.Detail)
	assert.Equal(t, int64(15), de.Extra["balance"])
	assert.Equal(t, int64(20), de.Extra["needed"])
	links := de.Extra["links"].(map[string]any)
	assert.Nil(t, links["top_up"])
	assert.NotEmpty(t, links["dashboard"])
	assert.Equal(t, "payments_not_configured", de.Extra["top_up_unavailable"])

	st, err := e.Svc.Spend(context.Background(), e.Store.SystemConglomerateScope(cong), "", "run-1", models.EntryTokenUsagePartial, 5)
	require.NoError(t, err)
	assert.Equal(t, int64(10), st.Balance)
	assert.Equal(t, int64(5), st.SpentToday)

	// The daily cap set through PATCH is enforced by spending.
	capValue := int64(7)
	var u companies.ConglomerateUpdate
	u.DailyCreditCap.Set, u.DailyCreditCap.Value = true, &capValue
	_, err = e.Svc.UpdateConglomerate(ada, cong, u)
	require.NoError(t, err)
	_, err = e.Svc.Spend(context.Background(), e.Store.SystemConglomerateScope(cong), "", "run-2", models.EntryToolUsage, 3)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeRateLimited, de.Code)
	assert.Equal(t, int64(5), de.Extra["spent_today"])
	_, err = e.Svc.Spend(context.Background(), e.Store.SystemConglomerateScope(cong), "", "run-2", models.EntryToolUsage, 2)
	require.NoError(t, err, "up to the cap")

	state, err := e.Svc.Credits(ada, cong)
	require.NoError(t, err)
	assert.Equal(t, int64(8), state.Balance)
	assert.Equal(t, int64(7), state.SpentToday)

	// A new UTC day starts the count again.
	e.Clock.Advance(24 * time.Hour)
	state, err = e.Svc.Credits(ada, cong)
	require.NoError(t, err)
	assert.Equal(t, int64(0), state.SpentToday)
	_, err = e.Svc.Spend(context.Background(), e.Store.SystemConglomerateScope(cong), "", "run-3", models.EntryToolUsage, 3)
	require.NoError(t, err)
}

func TestWelcomeCreditsOnceUnderConcurrentCalls(t *testing.T) {
	e := servicetest.New(t)
	_, cong := e.User(t, "ada@example.com")
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for range 8 {
		wg.Go(func() {
			ok, err := e.Svc.GrantWelcomeCredits(context.Background(), e.Store.SystemConglomerateScope(cong))
			assert.NoError(t, err)
			if ok {
				mu.Lock()
				n++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, n)
}

func TestCreditLedgerOwnershipAndLimits(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	bob, _ := e.User(t, "bob@example.com")
	_, err := e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryTopUp, 50, "checkout cs_1")
	require.NoError(t, err)
	page, err := e.Svc.CreditLedger(ada, cong, 0, 20)
	require.NoError(t, err)
	assert.Equal(t, int64(1), page.Total)
	assert.Equal(t, int64(50), page.Balance)
	_, err = e.Svc.CreditLedger(bob, cong, 0, 20)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.CreditLedger(ada, cong, 0, 101)
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, -60, "correction")
	assert.True(t, models.IsCode(err, models.CodeConflict), "an adjustment cannot go below zero")
}

func TestSpendOnceChargesEachKeyOnce(t *testing.T) {
	e := servicetest.New(t)
	_, cong := e.User(t, "ada@example.com")
	scope := e.Store.SystemConglomerateScope(cong)
	_, err := e.Svc.GrantWelcomeCredits(context.Background(), scope)
	require.NoError(t, err)

	var wg sync.WaitGroup
	var mu sync.Mutex
	charged := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := e.Svc.SpendOnce(context.Background(), scope, billing.Usage{RunID: "run-1", Type: models.EntryTokenUsagePartial, Credits: 2, Key: "run-1/model/1"})
			assert.NoError(t, err)
			if ok {
				mu.Lock()
				charged++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, charged, "one of the racing charges of the key pays")
	st, ok, err := e.Svc.SpendOnce(context.Background(), scope, billing.Usage{RunID: "run-1", Type: models.EntryTokenUsagePartial, Credits: 2, Key: "run-1/model/2"})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, int64(11), st.Balance, "15 - 2 - 2")

	_, _, err = e.Svc.SpendOnce(context.Background(), scope, billing.Usage{Type: models.EntryToolUsage, Credits: 1})
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "key", de.Field)
}
