package identity_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/sales"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
)

const testWebhookSecret = "whsec_service_test"

// recordingPayments is the stripe-mock adapter, recording what account
// deletion asks of it.
type recordingPayments struct {
	billing.Payments
	mu          sync.Mutex
	cancelled   []string
	deactivated []string
}

func (r *recordingPayments) CancelSubscription(ctx context.Context, id string) error {
	r.mu.Lock()
	r.cancelled = append(r.cancelled, id)
	r.mu.Unlock()
	return r.Payments.CancelSubscription(ctx, id)
}

func (r *recordingPayments) DeactivateCompany(ctx context.Context, id string) error {
	r.mu.Lock()
	r.deactivated = append(r.deactivated, id)
	r.mu.Unlock()
	return r.Payments.DeactivateCompany(ctx, id)
}

// recordingSales is the stripe-mock adapter of the companies' sales,
// recording what it is asked to stop.
type recordingSales struct {
	sales.Payments
	mu            sync.Mutex
	deactivated   []string // provider product ids
	cancelledSubs []string // provider subscription ids
}

func (r *recordingSales) DeactivateProduct(ctx context.Context, accountID, productID, priceID string) error {
	r.mu.Lock()
	r.deactivated = append(r.deactivated, productID)
	r.mu.Unlock()
	return r.Payments.DeactivateProduct(ctx, accountID, productID, priceID)
}

func (r *recordingSales) CancelCustomerSubscription(ctx context.Context, accountID, subscriptionID string) (models.SalesSubscription, error) {
	r.mu.Lock()
	r.cancelledSubs = append(r.cancelledSubs, subscriptionID)
	r.mu.Unlock()
	return r.Payments.CancelCustomerSubscription(ctx, accountID, subscriptionID)
}

func (r *recordingSales) reset() {
	r.mu.Lock()
	r.deactivated, r.cancelledSubs = nil, nil
	r.mu.Unlock()
}

// TestDeleteAccountStopsEveryCompanysSales: deleting an account stops what
// each of its companies sells on the connected account, as archiving each
// would (sales.StopCompanySales): every active product is deactivated and
// every running customer subscription cancelled at the provider, once per
// company; a company archived before had its sales stopped then and is
// not asked again.
func TestDeleteAccountStopsEveryCompanysSales(t *testing.T) {
	pay := testenv.StripePayments(t, testWebhookSecret)
	rec := &recordingSales{Payments: pay}
	e := servicetest.NewWith(t, usecases.Options{Payments: pay, Sales: rec})
	ada, cong := e.User(t, "ada@example.com")
	bg := context.Background()
	account := "acct_delete_test"
	require.NoError(t, e.Store.Billing().SetConnectAccount(bg, e.Store.SystemConglomerateScope(cong), account))
	require.NoError(t, e.Store.Billing().UpdateConnectState(bg, models.ConnectState{AccountID: account, ChargesEnabled: true, DetailsSubmitted: true}))

	var products, subs []string
	var archived models.Company
	for i, name := range []string{"Shop", "Club", "Gone"} {
		co, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: name})
		require.NoError(t, err)
		p, err := e.Svc.CreateProduct(ada, co.ID, sales.ProductInput{Name: name + " guide", PriceCents: 900})
		require.NoError(t, err)
		sub := "sub_" + name
		payload, sig := testenv.SignedConnectEvent(t, testenv.StripeConnectWebhookSecret, "evt_"+name, "customer.subscription.updated", account,
			map[string]any{"id": sub, "object": "subscription", "status": "active", "metadata": map[string]string{"company_id": co.ID}})
		_, err = e.Svc.HandleSalesWebhook(bg, payload, sig)
		require.NoError(t, err)
		if i == 2 {
			archived = co
			continue
		}
		products, subs = append(products, p.ProviderProductID), append(subs, sub)
	}
	require.NoError(t, e.Svc.ArchiveCompany(ada, archived.ID))
	rec.reset()

	require.NoError(t, e.Svc.DeleteAccount(ada))

	assert.ElementsMatch(t, products, rec.deactivated, "each live company's products, once")
	assert.ElementsMatch(t, subs, rec.cancelledSubs, "each live company's running subscriptions, once")
}

// TestDeleteAccountStopsCompanyKeysAndPayments: deleting an account stops
// its companies' keys at once (not after the key cache's minute), cancels
// its platform subscription and deactivates its companies' payment
// objects at the provider.
func TestDeleteAccountStopsCompanyKeysAndPayments(t *testing.T) {
	pay := &recordingPayments{Payments: testenv.StripePayments(t, testWebhookSecret)}
	e := servicetest.NewWith(t, usecases.Options{Payments: pay})
	ada, cong := e.User(t, "ada@example.com")
	c, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Shop"})
	require.NoError(t, err)
	paused, err := e.Svc.CreateCompany(ada, cong, companies.CompanyInput{Name: "Later", Paused: true})
	require.NoError(t, err)
	key, err := e.Svc.CompanyAPIKey(ada, c.ID)
	require.NoError(t, err)
	_, err = e.Svc.Authenticate(context.Background(), key.Key) // now cached
	require.NoError(t, err)
	require.NoError(t, e.Store.Billing().SetSubscription(context.Background(), cong, "cus_del", "sub_del", models.PlanFounder, models.SubscriptionActive, nil))

	require.NoError(t, e.Svc.DeleteAccount(ada))

	_, err = e.Svc.Authenticate(context.Background(), key.Key)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "the company key stops at once: %v", err)
	assert.Equal(t, []string{"sub_del"}, pay.cancelled)
	assert.ElementsMatch(t, []string{c.ID, paused.ID}, pay.deactivated)
}
