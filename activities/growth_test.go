package activities_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"holdco/activities"
	"holdco/models"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/service/servicetest"
	"holdco/workflows/contract"
)

// The domain activities place the order of a paid purchase once, read its
// status and record its end; a purchase that no longer exists ends the
// workflow (a non-retryable ErrDomainGone).
func TestDomainActivities(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	owner, cong := e.User(t, "ada@example.com")
	co, err := e.Svc.CreateCompany(owner, cong, companies.CompanyInput{Name: "Tea Shop", Mission: "Sell good tea."})
	require.NoError(t, err)
	name := servicetest.FreeDomain(t, owner, e.Svc.Growth, co.ID, "teashopada")
	checkout, err := e.Svc.Growth.CreateCheckout(owner, co.ID, growth.CheckoutInput{Domain: name})
	require.NoError(t, err)
	u, err := url.Parse(checkout.URL)
	require.NoError(t, err)
	paid, err := e.Svc.Growth.ConfirmLocalCheckout(ctx, u.Query().Get("t"))
	require.NoError(t, err)

	acts := &activities.Domains{Store: e.Store, Growth: e.Svc.Growth}
	ref := contract.DomainRef{PurchaseID: paid.Purchase.ID, ConglomerateID: cong}
	var orders []string
	for range 2 { // a retry places nothing twice
		v, err := activityEnv(acts).ExecuteActivity(acts.PlaceDomainOrder, ref)
		require.NoError(t, err)
		var id string
		require.NoError(t, v.Get(&id))
		orders = append(orders, id)
	}
	require.NotEmpty(t, orders[0])
	assert.Equal(t, orders[0], orders[1], "one order")

	v, err := activityEnv(acts).ExecuteActivity(acts.DomainOrderStatus, orders[0])
	require.NoError(t, err)
	var st models.RegistrarOrder
	require.NoError(t, v.Get(&st))
	assert.Equal(t, models.OrderRegistered, st.State)

	v, err = activityEnv(acts).ExecuteActivity(acts.FinishDomainPurchase, contract.FinishDomainInput{DomainRef: ref, Registered: true})
	require.NoError(t, err)
	var state models.DomainState
	require.NoError(t, v.Get(&state))
	assert.Equal(t, models.DomainRegistered, state)

	_, err = activityEnv(acts).ExecuteActivity(acts.PlaceDomainOrder, contract.DomainRef{PurchaseID: "00000000-0000-4000-8000-000000000000", ConglomerateID: cong})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, contract.ErrDomainGone, appErr.Type())
	assert.True(t, appErr.NonRetryable())
}

// The ad reconciler's activity reserves and runs the day's campaign of a
// company with a cap; a company that is gone has nothing to run.
func TestReconcileAdsActivity(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	owner, cong := e.User(t, "ada@example.com")
	co, err := e.Svc.CreateCompany(owner, cong, companies.CompanyInput{Name: "Tea Shop", Mission: "Sell good tea."})
	require.NoError(t, err)
	_, err = e.Svc.GrantCredits(ctx, e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 200, "test credits")
	require.NoError(t, err)
	_, err = e.Svc.Growth.SetDailyCap(owner, co.ID, 150)
	require.NoError(t, err)

	acts := &activities.AdReconciler{Store: e.Store, Growth: e.Svc.Growth}
	day := e.Clock.Now().UTC().Truncate(24 * time.Hour)
	v, err := activityEnv(acts).ExecuteActivity(acts.ReconcileAds, contract.ReconcileAdsInput{CompanyID: co.ID, ConglomerateID: cong, Day: day})
	require.NoError(t, err)
	var res contract.ReconcileAdsResult
	require.NoError(t, v.Get(&res))
	assert.Equal(t, contract.ReconcileAdsResult{State: models.AdActive, DailyCap: 150, Reserved: true}, res)

	v, err = activityEnv(acts).ExecuteActivity(acts.ReconcileAds, contract.ReconcileAdsInput{CompanyID: "00000000-0000-4000-8000-000000000000", ConglomerateID: cong, Day: day})
	require.NoError(t, err)
	require.NoError(t, v.Get(&res))
	assert.Equal(t, contract.ReconcileAdsResult{State: models.AdPaused}, res)
}
