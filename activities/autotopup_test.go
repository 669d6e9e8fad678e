package activities_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/activities"
	"holdco/models"
	"holdco/service/billing"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/workflows/contract"
)

// cardPayments charges every top-up and records the idempotency keys; the
// other methods are not called here.
type cardPayments struct {
	billing.Payments
	mu   sync.Mutex
	keys []string
}

func (p *cardPayments) ChargeTopUp(_ context.Context, r models.ChargeRequest) (models.ChargeResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, r.IdempotencyKey)
	return models.ChargeResult{ID: "pi_" + r.IdempotencyKey, Succeeded: true, Status: "succeeded"}, nil
}

func (p *cardPayments) Livemode() bool { return false }

// The auto top-up activity charges the saved card under a key of the
// workflow run and the attempt (a retried activity charges once at the
// provider), and charges nothing when auto top-up is off or the balance is
// above the threshold.
func TestChargeAutoTopUpActivity(t *testing.T) {
	pay := &cardPayments{}
	e := servicetest.NewWith(t, usecases.Options{Payments: pay})
	ctx := context.Background()
	_, cong := e.User(t, "ada@example.com")
	scope := e.Store.SystemConglomerateScope(cong)
	acts := &activities.AutoTopUps{Store: e.Store, Billing: e.Svc.BillingUseCases}
	charge := func(attempt int) contract.AutoTopUpOutcome {
		t.Helper()
		v, err := activityEnv(acts).ExecuteActivity(acts.ChargeAutoTopUp, contract.AutoTopUpAttempt{ConglomerateID: cong, Attempt: attempt})
		require.NoError(t, err)
		var out contract.AutoTopUpOutcome
		require.NoError(t, v.Get(&out))
		return out
	}
	assert.Equal(t, contract.AutoTopUpOutcome{}, charge(1), "auto top-up is off")

	require.NoError(t, e.Store.Billing().SetAutoTopUp(ctx, scope, true, 50, 100))
	assert.Equal(t, contract.AutoTopUpOutcome{Failed: "no_payment_method"}, charge(1))
	require.NoError(t, e.Store.Billing().SetCustomerID(ctx, scope, "cus_ada"))
	assert.Equal(t, contract.AutoTopUpOutcome{Charged: true, Credits: 100}, charge(2))
	assert.Equal(t, contract.AutoTopUpOutcome{}, charge(3), "the balance is above the threshold now")
	require.Len(t, pay.keys, 1)
	assert.Regexp(t, `^auto-top-up:`+cong+`:.+:2$`, pay.keys[0])
}
