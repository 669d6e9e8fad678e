package usecases

import (
	"context"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"holdco/workflows/contract"
)

// autoTopUpStarter signals-with-start an account's auto top-up workflow:
// a running one gets a signal, none starts one. Bounded and detached from
// the spend's request; a failure is logged (the next spend tries again).
type autoTopUpStarter struct {
	temporal client.Client
	logger   *slog.Logger
}

const nudgeTimeout = 3 * time.Second

func (a *autoTopUpStarter) Nudge(ctx context.Context, conglomerateID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), nudgeTimeout)
	defer cancel()
	_, err := a.temporal.SignalWithStartWorkflow(ctx, contract.AutoTopUpWorkflowID(conglomerateID), contract.SignalAutoTopUpCheck, nil,
		client.StartWorkflowOptions{TaskQueue: contract.TaskQueue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(contract.ConglomerateIDKey.ValueSet(conglomerateID))},
		contract.AutoTopUpWorkflowName, contract.AutoTopUpInput{ConglomerateID: conglomerateID})
	if err != nil {
		a.logger.WarnContext(ctx, "auto top-up: not started; the next spend under the threshold tries again", "conglomerate", conglomerateID, "error", err)
	}
}
