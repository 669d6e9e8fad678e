package growth_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/service/servicetest"
	"holdco/store"
)

func extra(t *testing.T, err error) map[string]any {
	t.Helper()
	var de *models.Error
	require.ErrorAs(t, err, &de)
	return de.Extra
}

type world struct {
	e              *servicetest.Env
	ada, bob       context.Context
	adaCong, bobCo string
	shop, cafe     string // two companies of ada's account
}

func newWorldB(t testing.TB) *world { return newWorldTB(t) }

func newWorld(t *testing.T) *world { return newWorldTB(t) }

func newWorldTB(t testing.TB) *world {
	t.Helper()
	e := servicetest.New(t)
	w := &world{e: e}
	w.ada, w.adaCong = e.User(t, "ada@example.com")
	var bobCong string
	w.bob, bobCong = e.User(t, "bob@example.com")
	for _, c := range []struct {
		ctx  context.Context
		cong string
		name string
		dst  *string
	}{{w.ada, w.adaCong, "Tea Shop", &w.shop}, {w.ada, w.adaCong, "Cafe Ada", &w.cafe}, {w.bob, bobCong, "Bob Bikes", &w.bobCo}} {
		co := e.SeedCompany(t, c.ctx, companies.CompanyInput{Name: c.name, Mission: "Sell good things. More later."})
		*c.dst = co.ID
	}
	return w
}

func (w *world) grant(t *testing.T, n int64) {
	t.Helper()
	_, err := w.e.Svc.GrantCredits(context.Background(), w.e.Store.SystemConglomerateScope(w.adaCong), models.EntryAdminAdjustment, n, "test")
	require.NoError(t, err)
}

// buy checks a free name out and confirms it on the local page.
func (w *world) buy(t *testing.T, ctx context.Context, companyID, domain string) models.DomainPurchase {
	t.Helper()
	c, err := w.e.Svc.Growth.CreateCheckout(ctx, companyID, growth.CheckoutInput{Domain: domain})
	require.NoError(t, err)
	assert.Equal(t, growth.ProviderLocal, c.Provider)
	u, err := url.Parse(c.URL)
	require.NoError(t, err)
	assert.Equal(t, growth.LocalCheckoutPath, u.Path)
	lc, err := w.e.Svc.Growth.ConfirmLocalCheckout(context.Background(), u.Query().Get("t"))
	require.NoError(t, err)
	assert.Equal(t, models.DomainOrderPending, lc.Purchase.State)
	return lc.Purchase
}

// register runs what the domain workflow does, at once.
func (w *world) register(t *testing.T, p models.DomainPurchase) models.DomainPurchase {
	t.Helper()
	scope := w.e.Store.SystemConglomerateScope(p.ConglomerateID)
	order, err := w.e.Svc.Growth.PlaceOrder(context.Background(), scope, p.ID)
	require.NoError(t, err)
	st, err := w.e.Svc.Growth.OrderStatus(context.Background(), order)
	require.NoError(t, err)
	require.Equal(t, models.OrderRegistered, st.State, "the local registrar of the tests registers at once")
	p, err = w.e.Svc.Growth.FinishPurchase(context.Background(), scope, p.ID, true, "")
	require.NoError(t, err)
	return p
}

// freeName is an available name of the local registrar.
func freeName(t testing.TB, w *world, companyID, label string) string {
	t.Helper()
	return servicetest.FreeDomain(t, w.ada, w.e.Svc.Growth, companyID, label)
}

func TestSearchGridExactAndInvalidNames(t *testing.T) {
	w := newWorld(t)
	grid, err := w.e.Svc.Growth.Search(w.ada, w.shop, "teatime")
	require.NoError(t, err)
	require.Len(t, grid, len(growth.DefaultTLDs))
	for i, r := range grid {
		assert.Equal(t, "teatime."+growth.DefaultTLDs[i], r.Domain)
		assert.False(t, r.Exact)
		assert.Positive(t, r.PriceCents)
	}
	empty, err := w.e.Svc.Growth.Search(w.ada, w.shop, "")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(empty[0].Domain, "tea-shop."), "an empty q suggests from the handle: %s", empty[0].Domain)

	exact, err := w.e.Svc.Growth.Search(w.ada, w.shop, "Bücher.example.COM")
	require.NoError(t, err)
	require.Len(t, exact, 1)
	assert.Equal(t, "xn--bcher-kva.example.com", exact[0].Domain)
	assert.Equal(t, "bücher.example.com", exact[0].Unicode)
	assert.True(t, exact[0].Exact)
	taken, err := w.e.Svc.Growth.Search(w.ada, w.shop, "google.com")
	require.NoError(t, err)
	assert.False(t, taken[0].Available)
	assert.Equal(t, "taken", taken[0].Reason)

	for q, want := range map[string]string{
		strings.Repeat("a", 64) + ".com":  "at most 63",
		strings.Repeat("a.", 127) + "com": "at most 253",
		"-shop.com":                       "hyphen",
		"a..com":                          "empty label",
		"shop_now.com":                    "IDNA",
		"my shop":                         "not a domain name",
		"shop.c0m":                        "letters only",
		strings.Repeat("ü", 60) + ".com":  "at most 63",
		"xn--zz.com":                      "IDNA",
		strings.Repeat("b", 254):          "at most 253",
	} {
		_, err := w.e.Svc.Growth.Search(w.ada, w.shop, q)
		require.Error(t, err, q)
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), q)
		assert.Contains(t, err.Error(), want, q)
	}
}

// The pool: a company sees the domain attached to it, the parked ones of
// its conglomerate and the ones bought from it; another account sees none
// and is refused.
func TestDomainPoolVisibility(t *testing.T) {
	w := newWorld(t)
	name := freeName(t, w, w.shop, "greenleaf")
	p := w.buy(t, w.ada, w.shop, name)

	pending, err := w.e.Svc.Growth.Attach(w.ada, w.shop, p.ID)
	require.Error(t, err, "not registered yet")
	assert.True(t, models.IsCode(err, models.CodeConflict))
	assert.Contains(t, err.Error(), "order_pending")
	assert.Empty(t, pending.ID)

	p = w.register(t, p)
	require.NotNil(t, p.AttachedCompanyID, "a company without a domain gets the one it bought")
	assert.Equal(t, w.shop, *p.AttachedCompanyID)

	list := func(ctx context.Context, company string) []string {
		es, err := w.e.Svc.Growth.ListDomains(ctx, company)
		require.NoError(t, err)
		var out []string
		for _, e := range es {
			out = append(out, e.Domain)
		}
		return out
	}
	assert.Equal(t, []string{name}, list(w.ada, w.shop), "attached to and bought from the shop")
	assert.Empty(t, list(w.ada, w.cafe), "attached to a sibling: not visible")
	_, err = w.e.Svc.Growth.Attach(w.ada, w.cafe, p.ID)
	assert.True(t, models.IsCode(err, models.CodeNotFound), "a sibling's attached domain is not in the cafe's view: %v", err)
	_, err = w.e.Svc.Growth.Attach(w.bob, w.bobCo, p.ID)
	assert.True(t, models.IsCode(err, models.CodeForbidden), "another account's purchase: %v", err)
	_, err = w.e.Svc.Growth.ListDomains(w.bob, w.shop)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = w.e.Svc.Growth.Attach(w.ada, w.shop, uuid.NewString())
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	// Detached, it is parked: every company of the account sees it, and
	// the cafe may take it.
	d, err := w.e.Svc.Growth.Detach(w.ada, w.shop, p.ID)
	require.NoError(t, err)
	assert.True(t, d.Parked())
	assert.Equal(t, []string{name}, list(w.ada, w.cafe))
	_, err = w.e.Svc.Growth.Detach(w.ada, w.shop, p.ID)
	assert.True(t, models.IsCode(err, models.CodeConflict), "parked: nothing to detach")
	a, err := w.e.Svc.Growth.Attach(w.ada, w.cafe, p.ID)
	require.NoError(t, err)
	assert.True(t, a.AttachedHere)
	assert.Equal(t, []string{name}, list(w.ada, w.shop), "still bought from the shop")
	_, err = w.e.Svc.Growth.Attach(w.ada, w.shop, p.ID)
	assert.True(t, models.IsCode(err, models.CodeConflict), "attached to the cafe: detach there first: %v", err)

	// Attaching another domain replaces the current one, which is parked.
	second := w.register(t, w.buy(t, w.ada, w.cafe, freeName(t, w, w.cafe, "cafeada")))
	assert.Nil(t, second.AttachedCompanyID, "the cafe already had a domain: the new one is parked")
	_, err = w.e.Svc.Growth.Attach(w.ada, w.cafe, second.ID)
	require.NoError(t, err)
	got, err := w.e.Store.Growth().CompanyOfDomain(context.Background(), name)
	require.NoError(t, err)
	assert.Empty(t, got, "the first domain was parked")
	got, err = w.e.Store.Growth().CompanyOfDomain(context.Background(), second.Domain)
	require.NoError(t, err)
	assert.Equal(t, w.cafe, got, "the sites listener routes the attached domain to the cafe")
}

func TestCheckoutRefusals(t *testing.T) {
	w := newWorld(t)
	name := freeName(t, w, w.shop, "teaparty")
	_, err := w.e.Svc.Growth.CreateCheckout(w.ada, w.shop, growth.CheckoutInput{Domain: "teaparty"})
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "a bare name is not a domain")
	wrong := int64(1)
	_, err = w.e.Svc.Growth.CreateCheckout(w.ada, w.shop, growth.CheckoutInput{Domain: name, ExpectedPriceCents: &wrong})
	assert.True(t, models.IsCode(err, models.CodeConflict))
	assert.Contains(t, err.Error(), "price")
	_, err = w.e.Svc.Growth.CreateCheckout(w.bob, w.shop, growth.CheckoutInput{Domain: name})
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	key, err := w.e.Svc.CompanyAPIKey(w.ada, w.shop)
	require.NoError(t, err)
	_, err = w.e.Svc.Growth.CreateCheckout(w.e.As(t, key.Key), w.shop, growth.CheckoutInput{Domain: name})
	assert.True(t, models.IsCode(err, models.CodeForbidden), "agents do not buy domains")

	// Two checkouts of one name: the second confirmation fails, and as a
	// local confirmation took no money, nothing is granted back.
	first, err := w.e.Svc.Growth.CreateCheckout(w.ada, w.shop, growth.CheckoutInput{Domain: name})
	require.NoError(t, err)
	second, err := w.e.Svc.Growth.CreateCheckout(w.ada, w.cafe, growth.CheckoutInput{Domain: name})
	require.NoError(t, err)
	confirm := func(c growth.Checkout) growth.LocalCheckout {
		u, _ := url.Parse(c.URL)
		lc, err := w.e.Svc.Growth.ConfirmLocalCheckout(context.Background(), u.Query().Get("t"))
		require.NoError(t, err)
		return lc
	}
	assert.Equal(t, models.DomainOrderPending, confirm(first).Purchase.State)
	assert.Equal(t, models.DomainOrderPending, confirm(first).Purchase.State, "confirming twice changes nothing")
	lost := confirm(second)
	assert.Equal(t, models.DomainFailed, lost.Purchase.State)
	assert.Zero(t, lost.Purchase.RefundedCredits)
	assert.Contains(t, lost.Purchase.FailureReason, "nothing was charged")
	st, err := w.e.Svc.Credits(w.ada, w.adaCong)
	require.NoError(t, err)
	assert.Zero(t, st.Balance, "no money was received, so no credits come back")
	_, err = w.e.Svc.Growth.CreateCheckout(w.ada, w.shop, growth.CheckoutInput{Domain: name})
	assert.True(t, models.IsCode(err, models.CodeConflict), "held by a paid purchase")
	_, err = w.e.Svc.Growth.ConfirmLocalCheckout(context.Background(), "forged.token")
	assert.True(t, models.IsCode(err, models.CodeNotFound))
}

// A local confirmation takes no money: a failed registration of it
// grants nothing back and says so.
func TestFailedLocalRegistrationRefundsNothing(t *testing.T) {
	w := newWorld(t)
	p := w.buy(t, w.ada, w.shop, freeName(t, w, w.shop, "oolong"))
	assert.Zero(t, p.PaidCents)
	scope := w.e.Store.SystemConglomerateScope(w.adaCong)
	for range 2 { // a retried activity changes nothing more
		f, err := w.e.Svc.Growth.FinishPurchase(context.Background(), scope, p.ID, false, "registry said no")
		require.NoError(t, err)
		assert.Equal(t, models.DomainFailed, f.State)
		assert.Equal(t, "registry said no", f.FailureReason)
		assert.Zero(t, f.RefundedCredits)
	}
	st, err := w.e.Svc.Credits(w.ada, w.adaCong)
	require.NoError(t, err)
	assert.Zero(t, st.Balance)
	ev, err := w.e.Svc.Activity(w.ada, w.shop, companies.ActivityInput{Limit: 5})
	require.NoError(t, err)
	assert.Equal(t, models.ActivityDomainFailed, ev.Events[0].Kind)
	assert.Contains(t, ev.Events[0].Summary, "nothing refunded")
}

// The sequence: five checkouts of one name confirmed on the local
// page (payments off) register one and fail four, and the balance does
// not move: each failure reports refunded_credits 0.
func TestLocalCheckoutsOfOneNameMintNoCredits(t *testing.T) {
	w := newWorld(t)
	w.grant(t, 202)
	name := freeName(t, w, w.shop, "mintless")
	var links []string
	for range 5 {
		c, err := w.e.Svc.Growth.CreateCheckout(w.ada, w.shop, growth.CheckoutInput{Domain: name})
		require.NoError(t, err)
		u, err := url.Parse(c.URL)
		require.NoError(t, err)
		links = append(links, u.Query().Get("t"))
	}
	states := map[models.DomainState]int{}
	for _, tok := range links {
		lc, err := w.e.Svc.Growth.ConfirmLocalCheckout(context.Background(), tok)
		require.NoError(t, err)
		states[lc.Purchase.State]++
		assert.Zero(t, lc.Purchase.RefundedCredits)
	}
	assert.Equal(t, map[models.DomainState]int{models.DomainOrderPending: 1, models.DomainFailed: 4}, states)
	st, err := w.e.Svc.Credits(w.ada, w.adaCong)
	require.NoError(t, err)
	assert.EqualValues(t, 202, st.Balance)
	_, err = w.e.Svc.Growth.CreateCheckout(w.ada, w.shop, growth.CheckoutInput{Domain: name})
	assert.True(t, models.IsCode(err, models.CodeConflict), "a name a purchase holds is refused at checkout")
}

// An unpaid checkout expires with its link: the sweeper ends it (state
// expired, nothing granted), its page refuses to confirm it, and the name
// stays free for anyone.
func TestUnpaidCheckoutExpires(t *testing.T) {
	w := newWorld(t)
	name := freeName(t, w, w.shop, "lapsing")
	c, err := w.e.Svc.Growth.CreateCheckout(w.ada, w.shop, growth.CheckoutInput{Domain: name})
	require.NoError(t, err)
	require.NotNil(t, c.Purchase.ExpiresAt)
	assert.Equal(t, c.ExpiresAt, *c.Purchase.ExpiresAt, "the row expires with its local link")
	sw := &growth.Sweeper{Store: w.e.Store, Now: w.e.Clock.Now}
	n, err := sw.ExpireCheckouts(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n, "not before its time")

	w.e.Clock.Advance(time.Hour + time.Second)
	n, err = sw.ExpireCheckouts(context.Background())
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	es, err := w.e.Svc.Growth.ListDomains(w.ada, w.shop)
	require.NoError(t, err)
	require.Len(t, es, 1)
	assert.Equal(t, models.DomainExpired, es[0].State)
	assert.Zero(t, es[0].RefundedCredits)
	st, err := w.e.Svc.Credits(w.ada, w.adaCong)
	require.NoError(t, err)
	assert.Zero(t, st.Balance)

	// A fresh checkout of the same name still works.
	w.buy(t, w.ada, w.cafe, name)
}

func TestDailyCapRules(t *testing.T) {
	w := newWorld(t)
	for _, c := range []int64{1, 2, 151, -1} {
		_, err := w.e.Svc.Growth.SetDailyCap(w.ada, w.shop, c)
		require.Error(t, err)
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%d", c)
		assert.Contains(t, err.Error(), "0 (pauses the ads) or from 3 to 150")
	}
	w.grant(t, 7)
	_, err := w.e.Svc.Growth.SetDailyCap(w.ada, w.shop, 10)
	require.Error(t, err)
	assert.True(t, models.IsCode(err, models.CodeInsufficientCredits))
	body := extra(t, err)
	assert.EqualValues(t, 7, body["balance"])
	assert.EqualValues(t, 10, body["needed"])
	p, err := w.e.Svc.Growth.Panel(w.ada, w.shop)
	require.NoError(t, err)
	assert.False(t, p.Exists, "a refused cap stores nothing")

	p, err = w.e.Svc.Growth.SetDailyCap(w.ada, w.shop, 5)
	require.NoError(t, err)
	assert.Equal(t, models.AdPending, p.Campaign.State)
	assert.True(t, p.Campaign.ReconcilePending, "no Temporal here: left to the sweeper")
	assert.Equal(t, int64(1), p.Campaign.CreativeVersion)
	p, err = w.e.Svc.Growth.SetDailyCap(w.ada, w.shop, 0)
	require.NoError(t, err)
	assert.Equal(t, models.AdPaused, p.Campaign.State)
	_, err = w.e.Svc.Growth.SetDailyCap(w.bob, w.shop, 0)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
}

func TestRegenerateLimitAndPreview(t *testing.T) {
	w := newWorld(t)
	_, err := w.e.Svc.Growth.Preview(w.ada, w.shop, "")
	assert.True(t, models.IsCode(err, models.CodeNotFound), "no creative yet")
	for i := int64(2); i <= 3; i++ {
		p, err := w.e.Svc.Growth.Regenerate(w.ada, w.shop)
		require.NoError(t, err)
		assert.Equal(t, i-1, p.Campaign.CreativeVersion)
		assert.Equal(t, 3-i, p.RegenerationsLeft)
	}
	_, err = w.e.Svc.Growth.Regenerate(w.ada, w.shop)
	require.Error(t, err)
	assert.True(t, models.IsCode(err, models.CodeRateLimited))
	tomorrow := w.e.Clock.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	assert.Equal(t, tomorrow.Format(time.RFC3339), extra(t, err)["resets_at"])
	w.e.Clock.Advance(tomorrow.Sub(w.e.Clock.Now()))
	p, err := w.e.Svc.Growth.Regenerate(w.ada, w.shop)
	require.NoError(t, err, "a new day")
	assert.Equal(t, int64(3), p.Campaign.CreativeVersion)

	pv, err := w.e.Svc.Growth.Preview(w.ada, w.shop, "")
	require.NoError(t, err)
	assert.Equal(t, growth.DefaultPlacement, pv.Placement)
	assert.Contains(t, pv.HTML, "Tea Shop")
	assert.Contains(t, pv.HTML, "Content-Security-Policy")
	assert.NotContains(t, pv.HTML, "<script")
	_, err = w.e.Svc.Growth.Preview(w.ada, w.shop, "BILLBOARD")
	require.Error(t, err)
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	assert.Contains(t, err.Error(), "MOBILE_FEED_STANDARD, DESKTOP_FEED_STANDARD")
	for _, pl := range growth.PlacementNames() {
		_, err := w.e.Svc.Growth.Preview(w.ada, w.shop, pl)
		require.NoError(t, err, pl)
	}
}

// A tenant's name cannot break out of the preview's markup.
func TestPreviewEscapesTenantText(t *testing.T) {
	w := newWorld(t)
	c, err := w.e.Svc.CreateCompany(w.ada, w.adaCong, companies.CompanyInput{Name: `Evil</h1><script>alert(1)</script>`, Mission: `"><img src=x onerror=alert(1)>.`})
	require.NoError(t, err)
	_, err = w.e.Svc.Growth.Regenerate(w.ada, c.ID)
	require.NoError(t, err)
	pv, err := w.e.Svc.Growth.Preview(w.ada, c.ID, "")
	require.NoError(t, err)
	assert.NotContains(t, pv.HTML, "<script>")
	assert.NotContains(t, pv.HTML, "<img")
	assert.Contains(t, pv.HTML, "&lt;script&gt;")
}

func TestSweeperSignalsWhatACrashLeft(t *testing.T) {
	w := newWorld(t)
	w.grant(t, 10)
	_, err := w.e.Svc.Growth.SetDailyCap(w.ada, w.shop, 3)
	require.NoError(t, err)
	pending, err := w.e.Store.Growth().PendingAdReconciles(context.Background(), time.Now().Add(time.Minute), 10)
	require.NoError(t, err)
	require.Len(t, pending, 1, "no Temporal: the campaign waits in its outbox")
	p := w.buy(t, w.ada, w.shop, freeName(t, w, w.shop, "matcha"))
	unstarted, err := w.e.Store.Growth().UnstartedDomainPurchases(context.Background(), time.Now().Add(time.Minute), 10)
	require.NoError(t, err)
	require.Len(t, unstarted, 1)
	assert.Equal(t, p.ID, unstarted[0].Purchase.ID)
	var _ store.UnstartedDomain = unstarted[0]
}

// A day charged by a reconcile that crashed before recording it, with the
// cap raised meanwhile, reserves what was charged, not the new cap: the
// day's close refunds at most what was taken.
func TestReservationIsWhatWasCharged(t *testing.T) {
	w := newWorld(t)
	w.grant(t, 200)
	ctx := context.Background()
	cong := w.e.Store.SystemConglomerateScope(w.adaCong)
	day := w.e.Clock.Now().UTC().Truncate(24 * time.Hour)
	_, charged, err := w.e.Svc.SpendOnce(ctx, cong, billing.Usage{CompanyID: w.shop, Type: models.EntryAdSpend, Credits: 3,
		Key: "ads/" + w.shop + "/" + day.Format(time.DateOnly)})
	require.NoError(t, err)
	require.True(t, charged)
	_, err = w.e.Svc.Growth.SetDailyCap(w.ada, w.shop, 150)
	require.NoError(t, err)
	scope, err := w.e.Store.SystemCompanyScope(ctx, w.shop)
	require.NoError(t, err)
	_, err = w.e.Svc.Growth.Reconcile(ctx, scope, cong, w.e.Clock.Now())
	require.NoError(t, err)
	a, err := w.e.Store.Growth().AdCampaign(ctx, scope)
	require.NoError(t, err)
	assert.EqualValues(t, 3, a.ReservedToday, "what was charged")

	w.e.Clock.Advance(24 * time.Hour)
	_, err = w.e.Svc.Growth.Reconcile(ctx, scope, cong, w.e.Clock.Now())
	require.NoError(t, err)
	var refunded int64
	page, err := w.e.Svc.CreditLedger(w.ada, w.adaCong, 0, 100)
	require.NoError(t, err)
	for _, g := range page.Groups {
		if g.Type == models.EntryRefund {
			refunded += g.Amount
		}
	}
	assert.LessOrEqual(t, refunded, int64(3), "the day's refund is at most what it took")
}
