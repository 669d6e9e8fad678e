package sales_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/companies"
	"holdco/service/sales"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
)

const whsec = "whsec_sales_platform"

// seller is a signed-in owner with a company whose conglomerate's
// connected account can take payments.
type seller struct {
	ctx       context.Context
	cong      string
	account   string
	companyID string
}

func salesWorld(t *testing.T) *servicetest.Env {
	t.Helper()
	pay := testenv.StripePayments(t, whsec)
	return servicetest.NewWith(t, usecases.Options{Payments: pay, Sales: pay})
}

// newSeller signs email in and creates a company; chargesEnabled decides
// whether payout onboarding got as far as taking payments.
func newSeller(t *testing.T, e *servicetest.Env, email string, chargesEnabled bool) seller {
	t.Helper()
	ctx, cong := e.User(t, email)
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Shop of " + email})
	require.NoError(t, err)
	account := "acct_" + uuid.NewString()[:12]
	bg := context.Background()
	require.NoError(t, e.Store.Billing().SetConnectAccount(bg, e.Store.SystemConglomerateScope(cong), account))
	require.NoError(t, e.Store.Billing().UpdateConnectState(bg, models.ConnectState{AccountID: account, ChargesEnabled: chargesEnabled, DetailsSubmitted: true}))
	return seller{ctx: ctx, cong: cong, account: account, companyID: c.ID}
}

func (s seller) scope(t *testing.T, e *servicetest.Env) store.CompanyScope {
	t.Helper()
	sc, err := e.Store.SystemCompanyScope(context.Background(), s.companyID)
	require.NoError(t, err)
	return sc
}

func deliver(t *testing.T, e *servicetest.Env, id, typ, account string, obj map[string]any) sales.WebhookResult {
	t.Helper()
	payload, sig := testenv.SignedConnectEvent(t, testenv.StripeConnectWebhookSecret, id, typ, account, obj)
	res, err := e.Svc.HandleSalesWebhook(context.Background(), payload, sig)
	require.NoError(t, err, "%s %s", typ, id)
	return res
}

func paidSession(companyID, paymentIntent string, cents int64) map[string]any {
	return map[string]any{"id": "cs_" + paymentIntent, "object": "checkout.session", "mode": "payment", "payment_status": "paid",
		"payment_intent": paymentIntent, "amount_total": cents, "currency": "usd", "metadata": map[string]string{"company_id": companyID}}
}

func activityKinds(t *testing.T, e *servicetest.Env, sc store.CompanyScope) map[models.ActivityKind]int {
	t.Helper()
	evs, err := e.Store.Companies().ListActivity(context.Background(), sc, models.ActivityCursor{}, 100)
	require.NoError(t, err)
	out := map[models.ActivityKind]int{}
	for _, ev := range evs {
		out[ev.Kind]++
	}
	return out
}

func TestRefusalsSayWhyAndWhereToGo(t *testing.T) {
	t.Parallel()
	// No payment provider at all.
	bare := servicetest.New(t)
	s := newSeller(t, bare, "ann@example.com", true)
	_, err := bare.Svc.CreateProduct(s.ctx, s.companyID, sales.ProductInput{Name: "Guide", PriceCents: 900})
	require.True(t, models.IsCode(err, models.CodeConflict), "%v", err)
	assert.Equal(t, sales.ReasonPaymentsNotConfigured, asDomain(t, err).Extra["reason"])

	// Payments, but no Connect webhook secret: no sale could be recorded.
	pay := testenv.StripePayments(t, whsec)
	noHook := servicetest.NewWith(t, usecases.Options{Payments: pay})
	s = newSeller(t, noHook, "bea@example.com", true)
	_, err = noHook.Svc.CreateProduct(s.ctx, s.companyID, sales.ProductInput{Name: "Guide", PriceCents: 900})
	assert.Equal(t, sales.ReasonSalesNotConfigured, asDomain(t, err).Extra["reason"])
	_, err = noHook.Svc.HandleSalesWebhook(context.Background(), []byte("{}"), "")
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	// Onboarding not complete: the reason, the state and the link.
	e := salesWorld(t)
	s = newSeller(t, e, "cy@example.com", false)
	_, err = e.Svc.CreateProduct(s.ctx, s.companyID, sales.ProductInput{Name: "Guide", PriceCents: 900})
	de := asDomain(t, err)
	assert.Equal(t, models.CodeConflict, de.Code)
	assert.Equal(t, sales.ReasonOnboardingIncomplete, de.Extra["reason"])
	assert.Equal(t, "pending", de.Extra["connect_state"])
	assert.Equal(t, map[string]any{"onboarding": "http://app.test/dashboard?conglomerate_id=" + s.cong}, de.Extra["links"])
	_, err = e.Svc.CreateCheckoutLink(s.ctx, s.companyID, uuid.NewString(), sales.CheckoutLinkInput{})
	assert.Equal(t, sales.ReasonOnboardingIncomplete, asDomain(t, err).Extra["reason"])

	ctx, cong := e.User(t, "dee@example.com")
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Fresh"})
	require.NoError(t, err)
	_, err = e.Svc.CreateProduct(ctx, c.ID, sales.ProductInput{Name: "Guide", PriceCents: 900})
	assert.Equal(t, "not_started", asDomain(t, err).Extra["connect_state"])
}

func asDomain(t *testing.T, err error) *models.Error {
	t.Helper()
	var de *models.Error
	require.ErrorAs(t, err, &de)
	return de
}

func TestProductsAndCheckoutLinks(t *testing.T) {
	t.Parallel()
	e := salesWorld(t)
	a, b := newSeller(t, e, "ada@example.com", true), newSeller(t, e, "bob@example.com", true)

	for field, in := range map[string]sales.ProductInput{
		"name":        {Name: " ", PriceCents: 900},
		"price_cents": {Name: "Guide", PriceCents: 10},
		"currency":    {Name: "Guide", PriceCents: 900, Currency: "eur"},
		"interval":    {Name: "Guide", PriceCents: 900, Interval: "week"},
	} {
		_, err := e.Svc.CreateProduct(a.ctx, a.companyID, in)
		de := asDomain(t, err)
		assert.Equal(t, models.CodeInvalidArgument, de.Code, field)
		assert.Equal(t, field, de.Field)
	}
	once, err := e.Svc.CreateProduct(a.ctx, a.companyID, sales.ProductInput{Name: "Guide", Description: "A PDF", PriceCents: 1200, Currency: "USD"})
	require.NoError(t, err)
	assert.Equal(t, "usd", once.Currency)
	assert.Equal(t, a.account, once.ProviderAccountID)
	assert.NotEmpty(t, once.ProviderPriceID)
	monthly, err := e.Svc.CreateProduct(a.ctx, a.companyID, sales.ProductInput{Name: "Club", PriceCents: 500, Interval: models.IntervalMonth})
	require.NoError(t, err)

	list, err := e.Svc.ListProducts(a.ctx, a.companyID)
	require.NoError(t, err)
	require.Len(t, list, 2)
	for _, p := range []models.Product{once, monthly} {
		link, err := e.Svc.CreateCheckoutLink(a.ctx, a.companyID, p.ID, sales.CheckoutLinkInput{SuccessURL: "https://shop.example/thanks"})
		require.NoError(t, err)
		assert.NotEmpty(t, link.URL)
	}
	_, err = e.Svc.CreateCheckoutLink(a.ctx, a.companyID, once.ID, sales.CheckoutLinkInput{SuccessURL: "javascript:alert(1)"})
	assert.Equal(t, "success_url", asDomain(t, err).Field)

	// Another tenant: 403 on the company, and its own company does not
	// reach this one's product.
	_, err = e.Svc.ListProducts(b.ctx, a.companyID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.CreateCheckoutLink(b.ctx, b.companyID, once.ID, sales.CheckoutLinkInput{})
	assert.True(t, models.IsCode(err, models.CodeNotFound))
	_, err = e.Svc.CreateProduct(b.ctx, a.companyID, sales.ProductInput{Name: "Guide", PriceCents: 900})
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.ListProducts(a.ctx, uuid.NewString())
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	// Archiving stops the sales: every product is deactivated.
	require.NoError(t, e.Svc.ArchiveCompany(a.ctx, a.companyID))
	list, err = e.Svc.ListProducts(a.ctx, a.companyID)
	require.NoError(t, err)
	for _, p := range list {
		assert.False(t, p.Active, p.Name)
	}
	_, err = e.Svc.CreateCheckoutLink(a.ctx, a.companyID, once.ID, sales.CheckoutLinkInput{})
	assert.True(t, models.IsCode(err, models.CodeNotFound), "an archived company sells nothing")
}

func TestPaymentReplayedTenTimesCountsOnce(t *testing.T) {
	t.Parallel()
	e := salesWorld(t)
	a := newSeller(t, e, "ada@example.com", true)
	obj := paidSession(a.companyID, "pi_once", 2500)
	for i := range 10 {
		res := deliver(t, e, "evt_once", "checkout.session.completed", a.account, obj)
		assert.Equal(t, i > 0, res.Duplicate, "delivery %d", i)
	}
	// The same payment reported by ten distinct events (the idempotency is
	// the payment's, not only the event's).
	for i := range 10 {
		res := deliver(t, e, fmt.Sprintf("evt_again_%d", i), "checkout.session.async_payment_succeeded", a.account, obj)
		assert.False(t, res.Duplicate)
	}
	rep, err := e.Svc.Revenue(a.ctx, a.companyID)
	require.NoError(t, err)
	assert.Equal(t, int64(2500), rep.BalanceCents)
	assert.Equal(t, int64(2500), rep.LifetimeEarningsCents)
	assert.Equal(t, int64(1), rep.Payments)
	require.Len(t, rep.RecentPayments, 1)
	assert.Equal(t, "pi_once", rep.RecentPayments[0].ProviderPaymentID)

	sc := a.scope(t, e)
	kinds := activityKinds(t, e, sc)
	assert.Equal(t, 1, kinds[models.ActivityPaymentReceived])
	assert.Equal(t, 1, kinds[models.ActivityMilestoneReached])
	ms, err := e.Store.Companies().ListMilestones(context.Background(), sc)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Equal(t, models.MilestoneFirstDollar, ms[0].Kind)

	// A refund lowers the balance; a replayed or older refund total does
	// not lower it twice.
	refund := func(id string, total int64) {
		deliver(t, e, id, "charge.refunded", a.account, map[string]any{"id": "ch_once", "object": "charge", "payment_intent": "pi_once",
			"amount": 2500, "amount_refunded": total})
	}
	refund("evt_ref_1", 1000)
	refund("evt_ref_1b", 1000)
	refund("evt_ref_2", 1500)
	refund("evt_ref_late", 1000)
	rep, err = e.Svc.Revenue(a.ctx, a.companyID)
	require.NoError(t, err)
	assert.Equal(t, int64(1500), rep.RefundedCents)
	assert.Equal(t, int64(1000), rep.BalanceCents)
	assert.Equal(t, 2, activityKinds(t, e, sc)[models.ActivityRefundIssued])
}

// One tenant's connected account cannot credit another tenant's company,
// whatever its events' metadata say.
func TestAnAccountCannotCreditAnotherTenant(t *testing.T) {
	t.Parallel()
	e := salesWorld(t)
	a, mallory := newSeller(t, e, "ada@example.com", true), newSeller(t, e, "mallory@example.com", true)

	res := deliver(t, e, "evt_smuggle", "checkout.session.completed", mallory.account, paidSession(a.companyID, "pi_smuggle", 100_000))
	assert.True(t, res.Ignored)
	res = deliver(t, e, "evt_sub_smuggle", "customer.subscription.created", mallory.account, map[string]any{"id": "sub_smuggle",
		"object": "subscription", "status": "active", "metadata": map[string]string{"company_id": a.companyID}})
	assert.True(t, res.Ignored)
	res = deliver(t, e, "evt_unknown_acct", "checkout.session.completed", "acct_nobody", paidSession(a.companyID, "pi_nobody", 100))
	assert.True(t, res.Ignored)

	// Ada's real payment, then Mallory's account reports a refund of it.
	deliver(t, e, "evt_real", "checkout.session.completed", a.account, paidSession(a.companyID, "pi_real", 700))
	res = deliver(t, e, "evt_refund_smuggle", "charge.refunded", mallory.account, map[string]any{"id": "ch_real", "object": "charge",
		"payment_intent": "pi_real", "amount": 700, "amount_refunded": 700})
	assert.True(t, res.Ignored)

	rep, err := e.Svc.Revenue(a.ctx, a.companyID)
	require.NoError(t, err)
	assert.Equal(t, int64(700), rep.BalanceCents)
	subs, err := e.Svc.ListSubscriptions(a.ctx, a.companyID)
	require.NoError(t, err)
	assert.Empty(t, subs)
	rep, err = e.Svc.Revenue(mallory.ctx, mallory.companyID)
	require.NoError(t, err)
	assert.Zero(t, rep.BalanceCents)
	_, err = e.Svc.Revenue(mallory.ctx, a.companyID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
}

func TestSubscriptionsAndCancel(t *testing.T) {
	t.Parallel()
	e := salesWorld(t)
	a, b := newSeller(t, e, "ada@example.com", true), newSeller(t, e, "bob@example.com", true)
	meta := map[string]string{"company_id": a.companyID, "holdco_product_id": "prod-club"}
	t0 := time.Now().Add(-time.Hour)
	at := func(id, typ, status string, created time.Time) {
		payload, sig := testenv.SignedConnectEventAt(t, testenv.StripeConnectWebhookSecret, id, typ, a.account, created,
			map[string]any{"id": "sub_club", "object": "subscription", "status": status, "metadata": meta})
		_, err := e.Svc.HandleSalesWebhook(context.Background(), payload, sig)
		require.NoError(t, err)
	}
	at("evt_s1", "customer.subscription.created", "incomplete", t0)
	at("evt_s3", "customer.subscription.updated", "active", t0.Add(2*time.Second))
	at("evt_s2", "customer.subscription.updated", "incomplete", t0.Add(time.Second)) // late
	deliver(t, e, "evt_inv", "invoice.paid", a.account, map[string]any{"id": "in_1", "object": "invoice", "amount_paid": 500, "currency": "usd",
		"payment_intent": "pi_inv_1", "subscription": "sub_club", "subscription_details": map[string]any{"metadata": meta}})

	subs, err := e.Svc.ListSubscriptions(a.ctx, a.companyID)
	require.NoError(t, err)
	require.Len(t, subs, 1)
	assert.Equal(t, "active", subs[0].Status)
	assert.Equal(t, "prod-club", subs[0].ProductID)
	rep, err := e.Svc.Revenue(a.ctx, a.companyID)
	require.NoError(t, err)
	assert.Equal(t, int64(500), rep.BalanceCents)
	require.Len(t, rep.RecentPayments, 1)
	assert.Equal(t, "sub_club", rep.RecentPayments[0].SubscriptionID)

	// Only a subscription of that company.
	for _, id := range []string{subs[0].ID, "sub_club"} {
		_, err = e.Svc.CancelSubscription(b.ctx, b.companyID, id)
		assert.True(t, models.IsCode(err, models.CodeNotFound), id)
	}
	_, err = e.Svc.CancelSubscription(b.ctx, a.companyID, subs[0].ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.CancelSubscription(a.ctx, a.companyID, "sub_other")
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	got, err := e.Svc.CancelSubscription(a.ctx, a.companyID, subs[0].ID)
	require.NoError(t, err)
	assert.Equal(t, models.SubscriptionCanceled, got.Status, "stripe-mock answers its fixture; a cancel is recorded canceled")
	again, err := e.Svc.CancelSubscription(a.ctx, a.companyID, "sub_club")
	require.NoError(t, err)
	assert.Equal(t, models.SubscriptionCanceled, again.Status)
	at("evt_s4", "customer.subscription.deleted", "canceled", time.Now())

	kinds := activityKinds(t, e, a.scope(t, e))
	assert.Equal(t, 1, kinds[models.ActivitySubscriptionStart])
	assert.Equal(t, 1, kinds[models.ActivitySubscriptionCancel])
	assert.Equal(t, 1, kinds[models.ActivityPaymentReceived])
}

// first_dollar is reached exactly once when a company's first payments
// arrive at the same time (on Postgres too, with TEST_DATABASE_URL).
func TestFirstDollarOnceUnderConcurrentPayments(t *testing.T) {
	t.Parallel()
	e := salesWorld(t)
	a := newSeller(t, e, "ada@example.com", true)
	const n = 12
	var wg sync.WaitGroup
	for i := range n {
		payload, sig := testenv.SignedConnectEvent(t, testenv.StripeConnectWebhookSecret, fmt.Sprintf("evt_c%d", i), "checkout.session.completed",
			a.account, paidSession(a.companyID, fmt.Sprintf("pi_c%d", i), 100))
		wg.Go(func() {
			_, err := e.Svc.HandleSalesWebhook(context.Background(), payload, sig)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	sc := a.scope(t, e)
	ms, err := e.Store.Companies().ListMilestones(context.Background(), sc)
	require.NoError(t, err)
	assert.Len(t, ms, 1)
	kinds := activityKinds(t, e, sc)
	assert.Equal(t, 1, kinds[models.ActivityMilestoneReached])
	assert.Equal(t, n, kinds[models.ActivityPaymentReceived])
	rev, err := e.Store.Sales().CompanyRevenue(context.Background(), sc)
	require.NoError(t, err)
	assert.Equal(t, int64(n*100), rev.BalanceCents)
}

func TestListPaymentsLimit(t *testing.T) {
	t.Parallel()
	e := salesWorld(t)
	a := newSeller(t, e, "ada@example.com", true)
	for i := range 3 {
		deliver(t, e, fmt.Sprintf("evt_l%d", i), "checkout.session.completed", a.account, paidSession(a.companyID, fmt.Sprintf("pi_l%d", i), 100))
	}
	ps, err := e.Svc.ListPayments(a.ctx, a.companyID, 2)
	require.NoError(t, err)
	assert.Len(t, ps, 2)
	_, err = e.Svc.ListPayments(a.ctx, a.companyID, 101)
	assert.Equal(t, "limit", asDomain(t, err).Field)
}

// lostProduct is the connected account's provider, except that the first
// product create is made at the provider and then lost on the way back
// (as when the row insert after it failed): it records each create's
// holdco product id, which keys the provider's idempotency keys.
type lostProduct struct {
	sales.Payments
	mu   sync.Mutex
	ids  []string
	lost bool
}

func (l *lostProduct) CreateProduct(ctx context.Context, r models.ProductRequest) (models.ProviderProduct, error) {
	pp, err := l.Payments.CreateProduct(ctx, r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ids = append(l.ids, r.ProductID)
	if err == nil && !l.lost {
		l.lost = true
		return models.ProviderProduct{}, fmt.Errorf("connection reset after the product was created")
	}
	return pp, err
}

// A product created at the provider whose answer was lost is not made
// again by the retry: the row is written first, the provider's create is
// keyed by it, and the retry of the same product resumes that row with
// the same keys; the company lists one product.
func TestProductCreateIsKeyedByItsRow(t *testing.T) {
	t.Parallel()
	pay := testenv.StripePayments(t, whsec)
	lp := &lostProduct{Payments: pay}
	e := servicetest.NewWith(t, usecases.Options{Payments: pay, Sales: lp})
	a := newSeller(t, e, "ada@example.com", true)
	in := sales.ProductInput{Name: "Guide", Description: "A PDF", PriceCents: 1200}
	_, err := e.Svc.CreateProduct(a.ctx, a.companyID, in)
	assert.True(t, models.IsCode(err, models.CodeUpstreamUnavailable), "%v", err)
	list, err := e.Svc.ListProducts(a.ctx, a.companyID)
	require.NoError(t, err)
	assert.Empty(t, list, "an unfinished product is not listed")

	p, err := e.Svc.CreateProduct(a.ctx, a.companyID, in)
	require.NoError(t, err)
	require.Len(t, lp.ids, 2)
	assert.Equal(t, lp.ids[0], lp.ids[1], "the retry uses the same idempotency keys")
	assert.Equal(t, lp.ids[0], p.ID)
	assert.True(t, p.Active)
	assert.NotEmpty(t, p.ProviderPriceID)
	list, err = e.Svc.ListProducts(a.ctx, a.companyID)
	require.NoError(t, err)
	assert.Len(t, list, 1)

	// Another product is another row with its own keys.
	other, err := e.Svc.CreateProduct(a.ctx, a.companyID, sales.ProductInput{Name: "Guide", Description: "A PDF", PriceCents: 1200})
	require.NoError(t, err)
	assert.NotEqual(t, p.ID, other.ID, "a finished product is not resumed")
}

// Archiving a company cancels its customers' running subscriptions at the
// payment provider (the spec's archive rule) besides deactivating its
// products: no customer keeps paying a company that is gone. Canceled
// ones are left as they are.
func TestArchivingCancelsCustomersSubscriptions(t *testing.T) {
	t.Parallel()
	e := salesWorld(t)
	a := newSeller(t, e, "ada@example.com", true)
	sub := func(id, status string) {
		deliver(t, e, "evt_"+id, "customer.subscription.updated", a.account,
			map[string]any{"id": id, "object": "subscription", "status": status, "metadata": map[string]string{"company_id": a.companyID}})
	}
	sub("sub_running", "active")
	sub("sub_trial", "trialing")
	sub("sub_gone", "canceled")
	require.NoError(t, e.Svc.ArchiveCompany(a.ctx, a.companyID))
	subs, err := e.Svc.ListSubscriptions(a.ctx, a.companyID)
	require.NoError(t, err)
	require.Len(t, subs, 3)
	for _, s := range subs {
		assert.Equal(t, models.SubscriptionCanceled, s.Status, s.ProviderSubscriptionID)
	}
	evs, err := e.Store.Companies().ListActivity(context.Background(), a.scope(t, e), models.ActivityCursor{}, 100)
	require.NoError(t, err)
	bySystem := 0
	for _, ev := range evs {
		if ev.Kind == models.ActivitySubscriptionCancel && ev.Actor == models.ActorSystem {
			bySystem++
		}
	}
	assert.Equal(t, 2, bySystem, "the archive cancelled the two running ones")
}
