package billing_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/service/servicetest"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// billingAlone is billing as a process that built no other use case
// builds it: `holdco admin grant-credits` (temporal nil), or any process
// with a Temporal client.
func billingAlone(t *testing.T, e *servicetest.Env, temporal client.Client) *billing.Service {
	t.Helper()
	core, err := service.NewCore(context.Background(), servicetest.Config, e.Store, slog.New(slog.DiscardHandler), e.Clock.Now)
	require.NoError(t, err)
	return billing.New(core, billing.Options{Temporal: temporal})
}

// workflowExists reports whether Temporal has a workflow of that id.
func workflowExists(t *testing.T, c client.Client, id string) bool {
	t.Helper()
	_, err := c.DescribeWorkflowExecution(context.Background(), id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false
	}
	require.NoError(t, err)
	return true
}

// A grant made by a process that built billing alone, without the growth
// use cases, resumes the account's ad campaigns waiting for credits:
// without Temporal (the operator's command) the grant's transaction leaves
// them marked and the growth sweeper signals their reconcilers; with
// Temporal billing signals them at once and clears the marks.
func TestGrantResumesStalledCampaignsWithBillingAlone(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil) // no worker: the reconcilers only need to exist
	e := servicetest.New(t)
	ctx := context.Background()
	ada, cong := e.User(t, "ada@example.com")
	account := e.Store.SystemConglomerateScope(cong)
	stalled := func(name string) string {
		co := e.SeedCompany(t, ada, companies.CompanyInput{Name: name})
		scope, err := e.Store.SystemCompanyScope(ctx, co.ID)
		require.NoError(t, err)
		_, err = e.Store.Growth().UpdateAdCampaign(ctx, scope, func(a *models.AdCampaign) ([]models.ActivityInput, error) {
			a.DailyCap, a.State = 5, models.AdInsufficientCredits
			return nil, nil
		})
		require.NoError(t, err)
		return co.ID
	}
	marked := func() []string {
		pending, err := e.Store.Growth().PendingAdReconciles(ctx, time.Now().Add(time.Hour), 10)
		require.NoError(t, err)
		ids := []string{}
		for _, p := range pending {
			ids = append(ids, p.Campaign.CompanyID)
		}
		return ids
	}

	first := stalled("First Tea")
	require.Empty(t, marked())
	_, err := billingAlone(t, e, nil).GrantCredits(ctx, account, models.EntryAdminAdjustment, 25, "operator")
	require.NoError(t, err)
	assert.Equal(t, []string{first}, marked(), "marked in the grant's transaction")
	assert.False(t, workflowExists(t, tmp.Client, contract.AdsWorkflowID(first)), "no Temporal: nothing signalled yet")
	n, err := (&growth.Sweeper{Store: e.Store, Temporal: tmp.Client, Logger: slog.New(slog.DiscardHandler)}).Sweep(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the sweeper signals the woken campaign's reconciler")
	assert.True(t, workflowExists(t, tmp.Client, contract.AdsWorkflowID(first)))
	assert.Empty(t, marked())

	// A spend changes nothing; a grant with Temporal signals at once.
	second := stalled("Second Tea")
	_, err = billingAlone(t, e, tmp.Client).Spend(ctx, account, second, "", models.EntryToolUsage, 1)
	require.NoError(t, err)
	assert.Empty(t, marked(), "only a grant wakes")
	_, err = billingAlone(t, e, tmp.Client).GrantCredits(ctx, account, models.EntryTopUp, 10, "top-up")
	require.NoError(t, err)
	assert.True(t, workflowExists(t, tmp.Client, contract.AdsWorkflowID(second)), "signalled by the granting process")
	assert.Empty(t, marked(), "signalled: no mark left for the sweeper")
}

// A spend that leaves the balance under the account's auto top-up
// threshold starts its auto top-up workflow through the Temporal client
// billing was built with, whoever else the process built.
func TestSpendUnderTheThresholdStartsTheAutoTopUp(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil)
	e := servicetest.New(t)
	ctx := context.Background()
	_, cong := e.User(t, "ada@example.com")
	account := e.Store.SystemConglomerateScope(cong)
	require.NoError(t, e.Store.Billing().SetAutoTopUp(ctx, account, true, 50, 100))
	bill := billingAlone(t, e, tmp.Client)
	_, err := bill.GrantCredits(ctx, account, models.EntryAdminAdjustment, 60, "start")
	require.NoError(t, err)
	id := contract.AutoTopUpWorkflowID(cong)

	_, err = bill.Spend(ctx, account, "", "run-1", models.EntryTokenUsagePartial, 5)
	require.NoError(t, err)
	assert.False(t, workflowExists(t, tmp.Client, id), "55 credits: above the threshold")
	_, err = bill.Spend(ctx, account, "", "run-1", models.EntryTokenUsagePartial, 10)
	require.NoError(t, err)
	assert.True(t, workflowExists(t, tmp.Client, id), "45 credits: under 50, the auto top-up runs")
}
