package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

func ptr(s string) *string { return &s }

var noCap *int64

func entry(cong string, typ models.LedgerEntryType, amount int64, run *string) models.CreditLedgerEntry {
	return models.CreditLedgerEntry{ConglomerateID: cong, Type: typ, Amount: amount, RunID: run}
}

// TestLedgerNeverGoesNegative: random interleavings of grants and spends
// never drive the balance below zero and never lose an entry.
func TestLedgerNeverGoesNegative(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		_, cong := signUp(t, s, "prop")
		ops := rapid.SliceOfN(rapid.Int64Range(-30, 30), 1, 40).Draw(rt, "ops")
		var wg sync.WaitGroup
		applied := make([]bool, len(ops))
		for i, amount := range ops {
			typ := models.EntryTopUp
			if amount < 0 {
				typ = models.EntryToolUsage
			}
			wg.Go(func() {
				_, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong.ID), entry(cong.ID, typ, amount, nil), noCap, time.Time{})
				if err != nil && !errors.Is(err, store.ErrInsufficientCredits) {
					rt.Errorf("apply %d: %v", amount, err)
				}
				applied[i] = err == nil
			})
		}
		wg.Wait()
		var want, n int64
		for i, ok := range applied {
			if ok {
				want += ops[i]
				n++
			}
		}
		bal, err := s.Billing().CreditBalance(ctx, s.SystemConglomerateScope(cong.ID), time.Time{})
		if err != nil {
			rt.Fatal(err)
		}
		sum, count, err := s.Billing().SumCreditEntries(ctx, cong.ID)
		if err != nil {
			rt.Fatal(err)
		}
		if bal.Balance < 0 || bal.Balance != want || sum != want || count != n {
			rt.Fatalf("balance %d, entries sum %d count %d; applied ops sum %d count %d", bal.Balance, sum, count, want, n)
		}
	})
}

// TestConcurrentSpends: 50 concurrent spends of 1 credit on 30 credits:
// exactly 30 succeed.
func TestConcurrentSpends(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	_, cong := signUp(t, s, "busy")
	_, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong.ID), entry(cong.ID, models.EntryTopUp, 30, nil), noCap, time.Time{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for range 50 {
		wg.Go(func() {
			_, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong.ID), entry(cong.ID, models.EntryTokenUsagePartial, -1, ptr("run-1")), noCap, time.Time{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrInsufficientCredits):
				refused++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 30, ok)
	assert.Equal(t, 20, refused)
	bal, err := s.Billing().CreditBalance(ctx, s.SystemConglomerateScope(cong.ID), time.Time{})
	require.NoError(t, err)
	assert.Equal(t, int64(0), bal.Balance)
}

func TestLedgerGroupingAndPaging(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	_, cong := signUp(t, s, "group")
	_, other := signUp(t, s, "other")
	base := time.Now().UTC().Truncate(time.Second)
	add := func(i int, typ models.LedgerEntryType, amount int64, run *string) {
		e := entry(cong.ID, typ, amount, run)
		e.CreatedAt = base.Add(time.Duration(i) * time.Second)
		_, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(e.ConglomerateID), e, noCap, time.Time{})
		require.NoError(t, err)
	}
	add(0, models.EntryGrantWelcome, 15, nil)
	add(1, models.EntryTokenUsagePartial, -2, ptr("r1"))
	add(2, models.EntryTokenUsagePartial, -3, ptr("r1"))
	add(3, models.EntryToolUsage, -1, ptr("r1"))
	add(4, models.EntryToolUsage, -1, ptr("r1"))
	add(5, models.EntryToolUsage, -1, nil) // legacy: no run, stands alone
	add(6, models.EntryToolUsage, -1, nil)
	add(7, models.EntryTokenUsagePartial, -4, ptr("r2"))
	_, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(other.ID), entry(other.ID, models.EntryTopUp, 99, nil), noCap, time.Time{})
	require.NoError(t, err)

	page, total, err := s.Billing().CreditLedgerPage(ctx, s.SystemConglomerateScope(cong.ID), 0, 10)
	require.NoError(t, err)
	assert.Equal(t, int64(6), total, "welcome, r1 tokens, r1 tools, two legacy tools, r2 tokens")
	require.Len(t, page, 6)
	assert.Equal(t, "TOKEN_USAGE_PARTIAL:r2", page[0].GroupKey, "newest first")
	byKey := map[string]models.CreditLedgerGroup{}
	for _, g := range page {
		byKey[g.GroupKey] = g
		assert.Equal(t, cong.ID, g.ConglomerateID, "only this tenant")
	}
	assert.Equal(t, int64(-5), byKey["TOKEN_USAGE_PARTIAL:r1"].Amount)
	assert.Equal(t, int64(2), byKey["TOKEN_USAGE_PARTIAL:r1"].Entries)
	assert.Equal(t, int64(-2), byKey["TOOL_USAGE:r1"].Amount)

	second, _, err := s.Billing().CreditLedgerPage(ctx, s.SystemConglomerateScope(cong.ID), 4, 4)
	require.NoError(t, err)
	require.Len(t, second, 2)
	assert.Equal(t, page[4].GroupKey, second[0].GroupKey)

	// Welcome credits once: the unique index refuses the second grant.
	_, err = s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong.ID), entry(cong.ID, models.EntryGrantWelcome, 15, nil), noCap, time.Time{})
	assert.ErrorIs(t, err, models.ErrDuplicate)
}

func TestWelcomeOnceUnderConcurrency(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	_, cong := signUp(t, s, "welcome")
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 10 {
		wg.Go(func() {
			_, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong.ID), entry(cong.ID, models.EntryGrantWelcome, 15, nil), noCap, time.Time{})
			if err == nil {
				mu.Lock()
				granted++
				mu.Unlock()
			} else if !errors.Is(err, models.ErrDuplicate) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 1, granted)
	bal, _ := s.Billing().CreditBalance(ctx, s.SystemConglomerateScope(cong.ID), time.Time{})
	assert.Equal(t, int64(15), bal.Balance)
}

func TestDailyCap(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	_, cong := signUp(t, s, "capped")
	day := time.Now().UTC().Truncate(24 * time.Hour)
	capValue := int64(10)
	_, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong.ID), entry(cong.ID, models.EntryTopUp, 100, nil), &capValue, day)
	require.NoError(t, err)
	out, err := s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong.ID), entry(cong.ID, models.EntryToolUsage, -8, nil), &capValue, day)
	require.NoError(t, err)
	assert.Equal(t, int64(8), out.SpentToday)
	out, err = s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong.ID), entry(cong.ID, models.EntryToolUsage, -3, nil), &capValue, day)
	assert.ErrorIs(t, err, store.ErrDailyCapReached)
	assert.Equal(t, int64(8), out.SpentToday)
	assert.Equal(t, int64(92), out.Balance, "nothing written")
	_, err = s.Billing().ApplyCreditEntry(ctx, s.SystemConglomerateScope(cong.ID), entry(cong.ID, models.EntryToolUsage, -2, nil), &capValue, day)
	require.NoError(t, err, "exactly up to the cap")
}
