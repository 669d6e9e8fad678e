package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// salesTenant is a conglomerate with a connected account and one company.
type salesTenant struct {
	cong    models.Conglomerate
	account string
	company store.CompanyScope
}

func newSalesTenant(t *testing.T, s *store.Store, name string) salesTenant {
	t.Helper()
	ctx := context.Background()
	u, cong := signUp(t, s, name)
	congScope, _, err := s.AuthorizeConglomerate(ctx, store.Actor{UserID: u.ID}, cong.ID)
	require.NoError(t, err)
	account := "acct_" + uuid.NewString()[:12]
	require.NoError(t, s.Billing().SetConnectAccount(ctx, congScope, account))
	c, err := s.Companies().CreateCompany(ctx, congScope, models.Company{Name: name, Handle: handle(name)})
	require.NoError(t, err)
	sc, _, err := s.AuthorizeCompany(ctx, store.Actor{UserID: u.ID}, c.ID, true)
	require.NoError(t, err)
	return salesTenant{cong: cong, account: account, company: sc}
}

func payment(id string, cents int64) models.CompanyPayment {
	return models.CompanyPayment{ProviderPaymentID: id, AmountCents: cents, Currency: models.SalesCurrency, PaidAt: time.Now().UTC().Truncate(time.Second)}
}

func TestPaymentIsRecordedOnceAndRevenueNetsRefunds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	a := newSalesTenant(t, s, "ann")

	inserted := 0
	for range 10 {
		ok, err := s.Sales().RecordCompanyPayment(ctx, a.company, payment("pi_1", 2500))
		require.NoError(t, err)
		if ok {
			inserted++
		}
	}
	assert.Equal(t, 1, inserted, "a payment replayed 10 times is recorded once")
	_, err := s.Sales().RecordCompanyPayment(ctx, a.company, payment("pi_2", 1000))
	require.NoError(t, err)
	euro := payment("pi_eur", 9999)
	euro.Currency = "eur"
	_, err = s.Sales().RecordCompanyPayment(ctx, a.company, euro)
	require.NoError(t, err)

	rev, err := s.Sales().CompanyRevenue(ctx, a.company)
	require.NoError(t, err)
	assert.Equal(t, models.NewRevenue(3500, 0, 0, 2), rev, "only the sales currency counts")

	// Refund totals only rise, capped at the amount paid.
	for _, tc := range []struct{ total, delta int64 }{{500, 500}, {500, 0}, {300, 0}, {800, 300}, {5000, 1700}, {2600, 0}} {
		delta, p, err := s.Sales().SetPaymentRefunded(ctx, a.company, "pi_1", tc.total)
		require.NoError(t, err)
		assert.Equal(t, tc.delta, delta, "refunded total %d", tc.total)
		assert.LessOrEqual(t, p.RefundedCents, p.AmountCents)
	}
	rev, err = s.Sales().CompanyRevenue(ctx, a.company)
	require.NoError(t, err)
	assert.Equal(t, int64(3500), rev.GrossCents)
	assert.Equal(t, int64(2500), rev.RefundedCents)
	assert.Equal(t, int64(1000), rev.LifetimeEarningsCents)
	assert.Equal(t, int64(1000), rev.BalanceCents, "no withdrawals yet")

	ps, err := s.Sales().ListCompanyPayments(ctx, a.company, 10)
	require.NoError(t, err)
	assert.Len(t, ps, 3)
}

func TestConcurrentRefundsAddUpToTheHigherTotal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	a := newSalesTenant(t, s, "rae")
	_, err := s.Sales().RecordCompanyPayment(ctx, a.company, payment("pi_r", 10_000))
	require.NoError(t, err)
	var wg sync.WaitGroup
	deltas := make([]int64, 20)
	for i := range deltas {
		wg.Go(func() {
			d, _, err := s.Sales().SetPaymentRefunded(ctx, a.company, "pi_r", int64(i+1)*100)
			assert.NoError(t, err)
			deltas[i] = d
		})
	}
	wg.Wait()
	var sum int64
	for _, d := range deltas {
		sum += d
	}
	assert.Equal(t, int64(2000), sum, "the refunded deltas add up to the highest total")
	rev, err := s.Sales().CompanyRevenue(ctx, a.company)
	require.NoError(t, err)
	assert.Equal(t, int64(8000), rev.BalanceCents)
}

func TestSalesRowsAreIsolatedBetweenTenants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	a, b := newSalesTenant(t, s, "amy"), newSalesTenant(t, s, "bo")

	p, err := s.Sales().CreateProduct(ctx, a.company, models.Product{ProviderAccountID: a.account, ProviderProductID: "prod_a", ProviderPriceID: "price_a",
		Name: "Guide", PriceCents: 900, Currency: "usd", Active: true})
	require.NoError(t, err)
	_, err = s.Sales().GetProduct(ctx, b.company, p.ID)
	assert.ErrorIs(t, err, models.ErrNotFound)
	require.NoError(t, s.Sales().DeactivateProduct(ctx, b.company, p.ID))
	got, err := s.Sales().GetProduct(ctx, a.company, p.ID)
	require.NoError(t, err)
	assert.True(t, got.Active, "another tenant cannot deactivate it")
	list, err := s.Sales().ListProducts(ctx, b.company)
	require.NoError(t, err)
	assert.Empty(t, list)

	_, err = s.Sales().RecordCompanyPayment(ctx, a.company, payment("pi_a", 900))
	require.NoError(t, err)
	ok, err := s.Sales().RecordCompanyPayment(ctx, b.company, payment("pi_a", 900))
	require.NoError(t, err)
	assert.False(t, ok, "another tenant cannot claim a recorded payment")
	_, _, err = s.Sales().SetPaymentRefunded(ctx, b.company, "pi_a", 900)
	assert.ErrorIs(t, err, models.ErrNotFound)

	// The connected account names its conglomerate; a payment is found only
	// in the conglomerate that recorded it.
	congA, err := s.AuthorizeConnectedAccount(ctx, a.account)
	require.NoError(t, err)
	assert.Equal(t, a.cong.ID, congA.ID())
	congB, err := s.AuthorizeConnectedAccount(ctx, b.account)
	require.NoError(t, err)
	_, err = s.AuthorizeConnectedAccount(ctx, "acct_unknown")
	assert.ErrorIs(t, err, models.ErrNotFound)
	_, err = s.AuthorizeConnectedAccount(ctx, "")
	assert.ErrorIs(t, err, models.ErrNotFound)
	sc, err := s.CompanyOfPayment(ctx, congA, "pi_a")
	require.NoError(t, err)
	assert.Equal(t, a.company, sc)
	_, err = s.CompanyOfPayment(ctx, congB, "pi_a")
	assert.ErrorIs(t, err, models.ErrNotFound)
	_, _, err = s.CompanyInConglomerate(ctx, congB, a.company.ID())
	assert.ErrorIs(t, err, models.ErrNotFound)

	revs, err := s.Sales().CompaniesRevenue(ctx, congB, []string{a.company.ID(), b.company.ID()})
	require.NoError(t, err)
	assert.Zero(t, revs[a.company.ID()].GrossCents, "another conglomerate's revenue is not reported")
	revs, err = s.Sales().CompaniesRevenue(ctx, congA, []string{a.company.ID()})
	require.NoError(t, err)
	assert.Equal(t, int64(900), revs[a.company.ID()].BalanceCents)

	_, _, err = s.Sales().UpsertCustomerSubscription(ctx, a.company, models.CustomerSubscription{ProviderSubscriptionID: "sub_a", Status: "active", ProviderUpdatedAt: time.Now()})
	require.NoError(t, err)
	_, _, err = s.Sales().UpsertCustomerSubscription(ctx, b.company, models.CustomerSubscription{ProviderSubscriptionID: "sub_a", Status: "canceled", ProviderUpdatedAt: time.Now()})
	assert.ErrorIs(t, err, models.ErrNotFound)
	_, err = s.Sales().GetCustomerSubscription(ctx, b.company, "sub_a")
	assert.ErrorIs(t, err, models.ErrNotFound)
	got2, err := s.Sales().GetCustomerSubscription(ctx, a.company, "sub_a")
	require.NoError(t, err)
	assert.Equal(t, "active", got2.Status)
}

func TestSubscriptionTransitionsHappenOnceAndInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	a := newSalesTenant(t, s, "sid")
	t0 := time.Now().UTC().Truncate(time.Second)
	up := func(status string, at time.Time) store.SubscriptionChange {
		ch, _, err := s.Sales().UpsertCustomerSubscription(ctx, a.company, models.CustomerSubscription{ProviderSubscriptionID: "sub_1", Status: status, ProviderUpdatedAt: at})
		require.NoError(t, err)
		return ch
	}
	assert.Equal(t, store.SubscriptionChange{}, up("incomplete", t0))
	assert.Equal(t, store.SubscriptionChange{Started: true}, up("active", t0.Add(time.Second)))
	assert.Equal(t, store.SubscriptionChange{}, up("active", t0.Add(time.Second)), "a replay changes nothing")
	assert.Equal(t, store.SubscriptionChange{}, up("past_due", t0.Add(2*time.Second)))
	assert.Equal(t, store.SubscriptionChange{Canceled: true}, up("canceled", t0.Add(4*time.Second)))
	assert.Equal(t, store.SubscriptionChange{}, up("active", t0.Add(3*time.Second)), "an older event delivered late")
	assert.Equal(t, store.SubscriptionChange{}, up("active", t0.Add(5*time.Second)), "canceled stays canceled")
	got, err := s.Sales().GetCustomerSubscription(ctx, a.company, "sub_1")
	require.NoError(t, err)
	assert.Equal(t, models.SubscriptionCanceled, got.Status)
	require.NotNil(t, got.StartedAt)
	require.NotNil(t, got.CanceledAt)
	byID, err := s.Sales().GetCustomerSubscription(ctx, a.company, got.ID)
	require.NoError(t, err)
	assert.Equal(t, got.ID, byID.ID)
	subs, err := s.Sales().ListCustomerSubscriptions(ctx, a.company)
	require.NoError(t, err)
	assert.Len(t, subs, 1)
}

func TestSalesMethodsRefuseAZeroScope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	var co store.CompanyScope
	var cong store.ConglomerateScope
	for name, call := range map[string]func() error{
		"CreateProduct":     func() error { _, err := s.Sales().CreateProduct(ctx, co, models.Product{}); return err },
		"ListProducts":      func() error { _, err := s.Sales().ListProducts(ctx, co); return err },
		"DeactivateProduct": func() error { return s.Sales().DeactivateProduct(ctx, co, "x") },
		"GetProduct":        func() error { _, err := s.Sales().GetProduct(ctx, co, "x"); return err },
		"RecordCompanyPayment": func() error {
			_, err := s.Sales().RecordCompanyPayment(ctx, co, payment("pi_z", 1))
			return err
		},
		"SetPaymentRefunded":  func() error { _, _, err := s.Sales().SetPaymentRefunded(ctx, co, "pi_z", 1); return err },
		"ListCompanyPayments": func() error { _, err := s.Sales().ListCompanyPayments(ctx, co, 1); return err },
		"CompanyRevenue":      func() error { _, err := s.Sales().CompanyRevenue(ctx, co); return err },
		"CompaniesRevenue":    func() error { _, err := s.Sales().CompaniesRevenue(ctx, cong, []string{"x"}); return err },
		"CompanyOfPayment":    func() error { _, err := s.CompanyOfPayment(ctx, cong, "pi_z"); return err },
		"UpsertCustomerSubscription": func() error {
			_, _, err := s.Sales().UpsertCustomerSubscription(ctx, co, models.CustomerSubscription{})
			return err
		},
		"ListCustomerSubscriptions": func() error { _, err := s.Sales().ListCustomerSubscriptions(ctx, co); return err },
		"GetCustomerSubscription":   func() error { _, err := s.Sales().GetCustomerSubscription(ctx, co, "x"); return err },
	} {
		assert.ErrorIs(t, call(), store.ErrNoScope, name)
	}
}
