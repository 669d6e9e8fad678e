package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"

	"holdco/service/billing"
	"holdco/store"
	"holdco/workflows/contract"
)

// AutoTopUps is the activity set of the auto top-up workflow.
type AutoTopUps struct {
	Store   *store.Store
	Billing *billing.Service
}

// ChargeAutoTopUp charges the account's saved card when auto top-up is on
// and the balance is still under the threshold.
func (a *AutoTopUps) ChargeAutoTopUp(ctx context.Context, in contract.AutoTopUpAttempt) (contract.AutoTopUpOutcome, error) {
	info := activity.GetInfo(ctx)
	key := fmt.Sprintf("auto-top-up:%s:%s:%d", in.ConglomerateID, info.WorkflowExecution.RunID, in.Attempt)
	return a.Billing.ChargeAutoTopUp(ctx, a.Store.SystemConglomerateScope(in.ConglomerateID), key)
}
