package billing_test

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v76"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
)

const testWebhookSecret = "whsec_service_test"

// stripeEnv is a service whose payments go to stripe-mock.
func stripeEnv(t *testing.T) *servicetest.Env {
	t.Helper()
	return servicetest.NewWith(t, usecases.Options{Payments: testenv.StripePayments(t, testWebhookSecret)})
}

func signedEvent(t *testing.T, id, typ string, object map[string]any) ([]byte, string) {
	return testenv.SignedStripeEvent(t, testWebhookSecret, id, typ, object)
}

func balance(t *testing.T, e *servicetest.Env, ctx context.Context, cong string) int64 {
	t.Helper()
	st, err := e.Svc.Credits(ctx, cong)
	require.NoError(t, err)
	return st.Balance
}

func TestPlanDecisions(t *testing.T) {
	e := servicetest.New(t)
	_, cong := e.User(t, "ada@example.com")
	get := func() models.Conglomerate {
		c, err := e.Store.Identity().GetConglomerate(context.Background(), cong)
		require.NoError(t, err)
		return c
	}
	code := func(a billing.PlanAction) models.ErrorCode {
		if err := e.Svc.PlanDecision(get(), a); err != nil {
			return err.Code
		}
		return ""
	}
	ctx := context.Background()
	assert.Equal(t, models.ErrorCode(""), code(billing.ActionStartBusiness), "a live trial")
	assert.Equal(t, models.ErrorCode(""), code(billing.ActionAgentWork))

	e.Clock.Advance(service.TrialLength + time.Minute)
	assert.Equal(t, models.CodePlanExpired, code(billing.ActionStartBusiness), "the trial is over")
	assert.Equal(t, models.CodePlanExpired, code(billing.ActionAgentWork))
	err := e.Svc.PlanDecision(get(), billing.ActionStartBusiness)
	assert.Contains(t, err.Detail, "3-day free trial ended")
	assert.Equal(t, "payments_not_configured", err.Extra["upgrade_unavailable"])

	require.NoError(t, e.Store.Billing().SetSubscription(ctx, cong, "cus_1", "sub_1", models.PlanFounder, models.SubscriptionActive, nil))
	assert.Equal(t, models.ErrorCode(""), code(billing.ActionStartBusiness), "the Founder plan")
	require.NoError(t, e.Store.Billing().SetSubscription(ctx, cong, "", "", models.PlanFounder, models.SubscriptionPastDue, nil))
	assert.Equal(t, models.CodePaymentRequired, code(billing.ActionAgentWork), "a failed renewal")
	require.NoError(t, e.Store.Billing().SetSubscription(ctx, cong, "", "", models.PlanHosting, models.SubscriptionActive, nil))
	assert.Equal(t, models.CodePlanNoAI, code(billing.ActionAgentWork), "the Hosting plan runs no agents")
	assert.Equal(t, models.CodePlanNoAI, code(billing.ActionStartBusiness))
	require.NoError(t, e.Store.Billing().SetSubscription(ctx, cong, "", "", models.PlanFree, models.SubscriptionCanceled, nil))
	assert.Equal(t, models.CodePlanExpired, code(billing.ActionAgentWork), "cancelled after the trial")

	now := e.Clock.Now()
	require.NoError(t, e.Store.Billing().SetSubscription(ctx, cong, "", "", models.PlanFounder, models.SubscriptionActive, nil))
	require.NoError(t, e.Store.Billing().SetBlocked(ctx, cong, "", &now, "payment disputed"))
	assert.Equal(t, models.CodePlanBlocked, code(billing.ActionAgentWork), "a block wins over a good plan")
	require.NoError(t, e.Store.Billing().SetBlocked(ctx, cong, "", nil, ""))
	assert.Equal(t, models.ErrorCode(""), code(billing.ActionAgentWork))
}

func TestCreatingACompanyNeedsALivePlan(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	_, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Early"})
	require.NoError(t, err)
	e.Clock.Advance(service.TrialLength + time.Minute)
	_, err = e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Late"})
	assert.True(t, models.IsCode(err, models.CodePlanExpired), "%v", err)
}

func TestBillingWithoutPayments(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	st, err := e.Svc.Billing(ada, cong)
	require.NoError(t, err)
	assert.False(t, st.PaymentsConfigured)
	assert.Equal(t, models.PlanFree, st.Plan.Plan)
	assert.True(t, st.Plan.TrialActive)
	for _, l := range []string{"top_up", "upgrade", "customer_portal"} {
		assert.Nil(t, st.Links[l], l)
		assert.Equal(t, "payments_not_configured", st.LinkReasons[l+"_unavailable"])
	}
	_, err = e.Svc.CheckoutSession(ada, cong, models.CheckoutTopUp, 100)
	assert.True(t, models.IsCode(err, models.CodeConflict), "%v", err)
	_, err = e.Svc.SetAutoTopUp(ada, cong, billing.AutoTopUp{Enabled: true, Threshold: 10, Credits: 100})
	assert.True(t, models.IsCode(err, models.CodeConflict), "%v", err)
	st, err = e.Svc.SetAutoTopUp(ada, cong, billing.AutoTopUp{Threshold: 10})
	require.NoError(t, err, "disabled settings may be stored")
	assert.Equal(t, int64(10), st.AutoTopUp.Threshold)
	_, err = e.Svc.SetAutoTopUp(ada, cong, billing.AutoTopUp{Enabled: true, Threshold: 10, Credits: 5})
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))

	cs, err := e.Svc.MyConnectStatus(ada)
	require.NoError(t, err)
	assert.Equal(t, "not_configured", cs.State)
	_, err = e.Svc.HandlePaymentWebhook(context.Background(), []byte(`{}`), "")
	assert.True(t, models.IsCode(err, models.CodeNotFound))
}

func TestCheckoutPortalAndLinksAgainstStripeMock(t *testing.T) {
	e := stripeEnv(t)
	ada, cong := e.User(t, "ada@example.com")

	st, err := e.Svc.Billing(ada, cong)
	require.NoError(t, err)
	assert.NotNil(t, st.Links["top_up"])
	assert.NotNil(t, st.Links["upgrade"])
	assert.Nil(t, st.Links["customer_portal"], "no billing account before the first purchase")
	assert.Equal(t, "no_billing_account_yet", st.LinkReasons["customer_portal_unavailable"])
	_, err = e.Svc.PortalSession(ada, cong)
	assert.True(t, models.IsCode(err, models.CodeConflict))

	_, err = e.Svc.CheckoutSession(ada, cong, models.CheckoutTopUp, 5)
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "below the minimum top-up")
	cs, err := e.Svc.CheckoutSession(ada, cong, models.CheckoutTopUp, 100)
	require.NoError(t, err)
	assert.NotEmpty(t, cs.URL)
	c, err := e.Store.Identity().GetConglomerate(context.Background(), cong)
	require.NoError(t, err)
	require.NotNil(t, c.Billing.CustomerID, "the first purchase creates the customer")
	_, err = e.Svc.CheckoutSession(ada, cong, models.CheckoutPlan, 0)
	require.NoError(t, err)
	portal, err := e.Svc.PortalSession(ada, cong)
	require.NoError(t, err)
	assert.NotEmpty(t, portal)

	// A billing link opens its checkout when followed, without signing in;
	// a tampered or expired one is refused.
	st, err = e.Svc.Billing(ada, cong)
	require.NoError(t, err)
	link := st.Links["top_up"].(string)
	u, err := url.Parse(link)
	require.NoError(t, err)
	assert.Equal(t, billing.BillingLinkPath, u.Path)
	to, err := e.Svc.FollowBillingLink(context.Background(), u.Query().Get("t"))
	require.NoError(t, err)
	assert.NotEmpty(t, to)
	_, err = e.Svc.FollowBillingLink(context.Background(), u.Query().Get("t")+"x")
	assert.True(t, models.IsCode(err, models.CodeNotFound))
	e.Clock.Advance(25 * time.Hour)
	_, err = e.Svc.FollowBillingLink(context.Background(), u.Query().Get("t"))
	assert.True(t, models.IsCode(err, models.CodeNotFound), "expired")

	// Only the owner pays; another account is refused.
	bob, _ := e.User(t, "bob@example.com")
	_, err = e.Svc.CheckoutSession(bob, cong, models.CheckoutTopUp, 100)
	assert.True(t, models.IsCode(err, models.CodeForbidden))

	// Auto top-up can be enabled once there is a billing account.
	bst, err := e.Svc.SetAutoTopUp(ada, cong, billing.AutoTopUp{Enabled: true, Threshold: 20, Credits: 100})
	require.NoError(t, err)
	assert.Equal(t, billing.AutoTopUp{Enabled: true, Threshold: 20, Credits: 100}, bst.AutoTopUp)
}

func TestConnectOnboardingAgainstStripeMock(t *testing.T) {
	e := stripeEnv(t)
	ada, _ := e.User(t, "ada@example.com")
	st, err := e.Svc.MyConnectStatus(ada)
	require.NoError(t, err)
	assert.Equal(t, "not_started", st.State)
	link, st, err := e.Svc.StartConnectOnboarding(ada)
	require.NoError(t, err)
	assert.NotEmpty(t, link)
	require.NotEmpty(t, st.AccountID)
	again, err := e.Svc.MyConnectStatus(ada)
	require.NoError(t, err)
	assert.Equal(t, st.AccountID, again.AccountID, "refreshed from the provider, same account")
	assert.Contains(t, []string{"pending", "restricted", "complete"}, again.State)
	_, st2, err := e.Svc.StartConnectOnboarding(ada)
	require.NoError(t, err)
	assert.Equal(t, st.AccountID, st2.AccountID, "resuming onboarding keeps the account")
}

func TestWebhooksCreditOnceAndTrackThePlan(t *testing.T) {
	e := stripeEnv(t)
	ada, cong := e.User(t, "ada@example.com")
	ctx := context.Background()
	topUp := map[string]any{"id": "cs_1", "object": "checkout.session", "mode": "payment", "payment_status": "paid", "customer": "cus_ada",
		"metadata": map[string]string{"holdco_conglomerate_id": cong, "holdco_kind": "top_up", "holdco_credits": "120"}}

	// A bad signature is refused and nothing is recorded.
	payload, _ := signedEvent(t, "evt_topup", "checkout.session.completed", topUp)
	_, err := e.Svc.HandlePaymentWebhook(ctx, payload, "t=1,v1=deadbeef")
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "%v", err)
	assert.Equal(t, int64(0), balance(t, e, ada, cong))

	payload, sig := signedEvent(t, "evt_topup", "checkout.session.completed", topUp)
	res, err := e.Svc.HandlePaymentWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.False(t, res.Duplicate)
	assert.Equal(t, int64(120), balance(t, e, ada, cong))
	// The same event again, and another event of the same payment: once.
	res, err = e.Svc.HandlePaymentWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.True(t, res.Duplicate)
	payload, sig = signedEvent(t, "evt_topup_async", "checkout.session.async_payment_succeeded", topUp)
	_, err = e.Svc.HandlePaymentWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, int64(120), balance(t, e, ada, cong))

	// Concurrent deliveries of one new payment still credit once.
	topUp2 := map[string]any{"id": "cs_2", "object": "checkout.session", "mode": "payment", "payment_status": "paid",
		"metadata": map[string]string{"holdco_conglomerate_id": cong, "holdco_kind": "top_up", "holdco_credits": "30"}}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, s := signedEvent(t, "evt_race_"+string(rune('a'+i%2)), "checkout.session.completed", topUp2)
			_, err := e.Svc.HandlePaymentWebhook(ctx, p, s)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(150), balance(t, e, ada, cong))

	// An event type holdco does not act on is acknowledged.
	payload, sig = signedEvent(t, "evt_other", "product.created", map[string]any{"id": "prod_1", "object": "product"})
	res, err = e.Svc.HandlePaymentWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.True(t, res.Ignored)

	// The Founder subscription: checkout links the customer, the
	// subscription events carry the state, each paid invoice grants.
	e.Clock.Advance(service.TrialLength + time.Hour)
	c, err := e.Store.Identity().GetConglomerate(ctx, cong)
	require.NoError(t, err)
	assert.True(t, models.IsCode(e.Svc.PlanDecision(c, billing.ActionAgentWork), models.CodePlanExpired))
	sub := map[string]any{"id": "sub_1", "object": "subscription", "status": "active", "customer": "cus_ada", "current_period_end": 1900000000,
		"metadata": map[string]string{"holdco_conglomerate_id": cong, "holdco_plan": "founder"},
		"items":    map[string]any{"object": "list", "data": []any{map[string]any{"id": "si_1", "price": map[string]any{"id": testenv.FounderPriceID}}}}}
	payload, sig = signedEvent(t, "evt_sub", "customer.subscription.created", sub)
	_, err = e.Svc.HandlePaymentWebhook(ctx, payload, sig)
	require.NoError(t, err)
	c, err = e.Store.Identity().GetConglomerate(ctx, cong)
	require.NoError(t, err)
	assert.Equal(t, models.PlanFounder, c.Billing.Plan)
	assert.Nil(t, e.Svc.PlanDecision(c, billing.ActionAgentWork))
	require.NotNil(t, c.Billing.PlanRenewsAt)

	invoice := map[string]any{"id": "in_1", "object": "invoice", "customer": "cus_ada",
		"lines": map[string]any{"object": "list", "data": []any{map[string]any{"id": "il_1", "price": map[string]any{"id": testenv.FounderPriceID}}}}}
	payload, sig = signedEvent(t, "evt_inv", "invoice.paid", invoice)
	_, err = e.Svc.HandlePaymentWebhook(ctx, payload, sig)
	require.NoError(t, err)
	assert.Equal(t, int64(250), balance(t, e, ada, cong), "the plan's monthly credits")

	sub["status"] = "past_due"
	payload, sig = signedEvent(t, "evt_sub_due", "customer.subscription.updated", sub)
	_, err = e.Svc.HandlePaymentWebhook(ctx, payload, sig)
	require.NoError(t, err)
	c, _ = e.Store.Identity().GetConglomerate(ctx, cong)
	assert.True(t, models.IsCode(e.Svc.PlanDecision(c, billing.ActionAgentWork), models.CodePaymentRequired))

	payload, sig = signedEvent(t, "evt_sub_end", "customer.subscription.deleted", sub)
	_, err = e.Svc.HandlePaymentWebhook(ctx, payload, sig)
	require.NoError(t, err)
	c, _ = e.Store.Identity().GetConglomerate(ctx, cong)
	assert.Equal(t, models.PlanFree, c.Billing.Plan)
	assert.True(t, models.IsCode(e.Svc.PlanDecision(c, billing.ActionAgentWork), models.CodePlanExpired))

	// The ledger shows the grants with their references.
	page, err := e.Svc.CreditLedger(ada, cong, 0, 10)
	require.NoError(t, err)
	refs := []string{}
	for _, g := range page.Groups {
		refs = append(refs, string(g.Type)+" "+g.Reference)
	}
	assert.ElementsMatch(t, []string{"TOP_UP checkout:cs_1", "TOP_UP checkout:cs_2", "PLAN_GRANT invoice:in_1"}, refs)
}

func TestConnectWebhookUpdatesTheStatus(t *testing.T) {
	e := stripeEnv(t)
	_, cong := e.User(t, "ada@example.com")
	require.NoError(t, e.Store.Billing().SetConnectAccount(context.Background(), e.Store.SystemConglomerateScope(cong), "acct_ada"))
	payload, sig := signedEvent(t, "evt_acct", "account.updated", map[string]any{"id": "acct_ada", "object": "account",
		"charges_enabled": true, "payouts_enabled": true, "details_submitted": true})
	_, err := e.Svc.HandlePaymentWebhook(context.Background(), payload, sig)
	require.NoError(t, err)
	c, err := e.Store.Identity().GetConglomerate(context.Background(), cong)
	require.NoError(t, err)
	assert.True(t, c.Billing.ConnectPayoutsEnabled)
	// An account no conglomerate holds is acknowledged.
	payload, sig = signedEvent(t, "evt_acct_other", "account.updated", map[string]any{"id": "acct_nobody", "object": "account"})
	_, err = e.Svc.HandlePaymentWebhook(context.Background(), payload, sig)
	require.NoError(t, err)
}

// scriptedPayments answers ParseWebhook with a given event (the provider's
// parsing is tested in providers/stripepay); the rest is stripe-mock.
type scriptedPayments struct {
	billing.Payments
	ev models.PaymentEvent
}

func (s scriptedPayments) ParseWebhook(context.Context, []byte, string) (models.PaymentEvent, error) {
	return s.ev, nil
}

func TestDisputeBlocksAndAWonDisputeUnblocks(t *testing.T) {
	base := stripeEnv(t)
	_, cong := base.User(t, "ada@example.com")
	require.NoError(t, base.Store.Billing().SetCustomerID(context.Background(), base.Store.SystemConglomerateScope(cong), "cus_ada"))
	apply := func(ev models.PaymentEvent) {
		svc := base.NewServices(t, usecases.Options{Payments: scriptedPayments{ev: ev}})
		_, err := svc.HandlePaymentWebhook(context.Background(), nil, "")
		require.NoError(t, err)
	}
	apply(models.PaymentEvent{ID: "evt_dp1", Type: "charge.dispute.created", Kind: models.EventDispute, CustomerID: "cus_ada", Blocked: true, Reason: "payment disputed (fraudulent)"})
	c, err := base.Store.Identity().GetConglomerate(context.Background(), cong)
	require.NoError(t, err)
	de := base.Svc.PlanDecision(c, billing.ActionAgentWork)
	require.NotNil(t, de)
	assert.Equal(t, models.CodePlanBlocked, de.Code)
	assert.True(t, strings.Contains(de.Detail, "payment disputed"))
	apply(models.PaymentEvent{ID: "evt_dp2", Type: "charge.dispute.closed", Kind: models.EventDispute, CustomerID: "cus_ada"})
	c, _ = base.Store.Identity().GetConglomerate(context.Background(), cong)
	assert.Nil(t, base.Svc.PlanDecision(c, billing.ActionAgentWork))
}

func TestPaymentHealthIsForOperators(t *testing.T) {
	e := stripeEnv(t)
	ada, _ := e.User(t, "ada@example.com")
	_, err := e.Svc.PaymentHealth(ada)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	tok, err := e.Svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	h, err := e.Svc.PaymentHealth(e.As(t, tok))
	require.NoError(t, err)
	assert.NotEmpty(t, h.PlatformAccountID)
	assert.Equal(t, stripe.APIVersion, h.APIVersion)
}

func TestPaidGrantsAreUniqueByReference(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	_, err := e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryTopUp, 50, "checkout:cs_9")
	require.NoError(t, err)
	_, err = e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryTopUp, 50, "checkout:cs_9")
	assert.True(t, models.IsCode(err, models.CodeConflict), "%v", err)
	// Adjustments may repeat a reference (an operator's note).
	for range 2 {
		_, err = e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 5, "goodwill")
		require.NoError(t, err)
	}
	assert.Equal(t, int64(60), balance(t, e, ada, cong))
}

// TestCanStartBusinessAgreesWithCreateCompany: the billing page's
// can_start_business is what POST /companies decides, on a live trial
// (even with no credits), an expired trial and the Founder plan; the
// credit side is reported apart.
func TestCanStartBusinessAgreesWithCreateCompany(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	check := func(name string) {
		t.Helper()
		st, err := e.Svc.Billing(ada, cong)
		require.NoError(t, err)
		_, createErr := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: name})
		assert.Equal(t, createErr == nil, st.StartBusiness == nil, "%s: billing says %v, create says %v", name, st.StartBusiness, createErr)
		if st.StartBusiness != nil {
			assert.True(t, models.IsCode(createErr, st.StartBusiness.Code), "%s: the same reason", name)
		}
	}
	st, err := e.Svc.Billing(ada, cong)
	require.NoError(t, err)
	assert.Nil(t, st.StartBusiness, "a live trial")
	assert.False(t, st.EnoughCreditsToStart, "no credits yet")
	check("Trial")

	e.Clock.Advance(service.TrialLength + time.Minute)
	check("Expired")

	require.NoError(t, e.Store.Billing().SetSubscription(context.Background(), cong, "cus_f", "sub_f", models.PlanFounder, models.SubscriptionActive, nil))
	check("Founder")
	st, err = e.Svc.Billing(ada, cong)
	require.NoError(t, err)
	assert.Nil(t, st.StartBusiness, "the Founder plan")
}

// TestDashboardLinkIsAFrontendPage: links.dashboard opens the web app's
// dashboard page, never a REST route.
func TestDashboardLinkIsAFrontendPage(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	st, err := e.Svc.Billing(ada, cong)
	require.NoError(t, err)
	assert.Equal(t, "http://app.test/dashboard?conglomerate_id="+cong, st.Links["dashboard"])
}
