package workflows_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/models"
	"holdco/providers/stripepay"
	"holdco/service/billing"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// countingPayments is the stripe-mock adapter, counting charges; succeed
// reports them succeeded (stripe-mock answers a fixed status).
type countingPayments struct {
	*stripepay.Client
	charges atomic.Int64
	succeed bool
}

func (p *countingPayments) ChargeTopUp(ctx context.Context, r models.ChargeRequest) (models.ChargeResult, error) {
	p.charges.Add(1)
	res, err := p.Client.ChargeTopUp(ctx, r)
	if err == nil && p.succeed {
		res.Succeeded = true
	}
	return res, err
}

func TestAutoTopUpChargesOnceUnderConcurrentSpends(t *testing.T) {
	for _, succeed := range []bool{true, false} {
		t.Run(map[bool]string{true: "charged", false: "declined"}[succeed], func(t *testing.T) {
			pay := &countingPayments{Client: testenv.StripePayments(t, "whsec_test_autotopup"), succeed: succeed}
			tmp := testenv.NewTemporal(t, nil)
			e := servicetest.NewWith(t, usecases.Options{Temporal: tmp.Client, Payments: pay})
			ada, cong := e.User(t, "ada@example.com")
			ctx := context.Background()
			scope := e.Store.SystemConglomerateScope(cong)
			_, err := e.Svc.GrantCredits(ctx, scope, models.EntryAdminAdjustment, 30, "start")
			require.NoError(t, err)
			// A customer with a saved card, and auto top-up: under 20, buy 100.
			_, err = e.Svc.CheckoutSession(ada, cong, models.CheckoutTopUp, 100)
			require.NoError(t, err)
			_, err = e.Svc.SetAutoTopUp(ada, cong, billing.AutoTopUp{Enabled: true, Threshold: 20, Credits: 100})
			require.NoError(t, err)
			tmp.Server.NewWorker(contract.TaskQueue, func(r worker.Registry) {
				workflows.RegisterAutoTopUp(r, &activities.AutoTopUps{Store: e.Store, Billing: e.Svc.BillingUseCases})
			})

			// Ten concurrent spends of 2 take the balance from 30 to 10,
			// crossing 20 on the way: several of them nudge.
			var wg sync.WaitGroup
			for range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := e.Svc.Spend(ctx, scope, "", "run-1", models.EntryTokenUsagePartial, 2)
					assert.NoError(t, err)
				}()
			}
			wg.Wait()
			want := int64(10)
			if succeed {
				want = 110
			}
			require.Eventually(t, func() bool { return pay.charges.Load() >= 1 }, 30*time.Second, 20*time.Millisecond)
			require.Eventually(t, func() bool {
				st, err := e.Svc.Credits(ada, cong)
				require.NoError(t, err)
				return st.Balance == want
			}, 30*time.Second, 20*time.Millisecond)
			// More spends during the cooldown charge nothing more.
			for range 3 {
				_, err := e.Svc.Spend(ctx, scope, "", "run-2", models.EntryToolUsage, 1)
				require.NoError(t, err)
			}
			time.Sleep(time.Second)
			assert.Equal(t, int64(1), pay.charges.Load(), "one charge")
			var topUps int64
			require.NoError(t, e.SQL.QueryRow("SELECT COUNT(*) FROM credit_ledger_entries WHERE type = 'TOP_UP'").Scan(&topUps))
			assert.Equal(t, map[bool]int64{true: 1, false: 0}[succeed], topUps, "granted once, only when paid")
		})
	}
}

// TestAutoTopUpWorkflow drives the workflow with its activity in memory:
// a charge, a cooldown absorbing signals, one more look, the end.
func TestAutoTopUpWorkflowCoolsDownAndLooksAgain(t *testing.T) {
	env := newTestEnv()
	env.RegisterWorkflowWithOptions(workflows.AutoTopUp, workflow.RegisterOptions{Name: contract.AutoTopUpWorkflowName})
	var attempts []int
	env.RegisterActivityWithOptions(func(_ context.Context, in contract.AutoTopUpAttempt) (contract.AutoTopUpOutcome, error) {
		attempts = append(attempts, in.Attempt)
		if in.Attempt == 1 {
			return contract.AutoTopUpOutcome{Charged: true, Credits: 100}, nil
		}
		return contract.AutoTopUpOutcome{}, nil // above the threshold again
	}, activity.RegisterOptions{Name: "ChargeAutoTopUp"})
	for _, d := range []time.Duration{time.Minute, 5 * time.Minute} {
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(contract.SignalAutoTopUpCheck, nil) }, d)
	}
	env.ExecuteWorkflow(workflows.AutoTopUp, contract.AutoTopUpInput{ConglomerateID: "cong"})
	require.NoError(t, env.GetWorkflowError())
	var charges int
	require.NoError(t, env.GetWorkflowResult(&charges))
	assert.Equal(t, 1, charges)
	assert.Equal(t, []int{1, 2}, attempts, "signals during the cooldown are answered by one look after it")
}
