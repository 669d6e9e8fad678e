package billing

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"holdco/internal/bounds"
	"holdco/models"
	"holdco/store"
	"holdco/workflows/contract"
)

// The follow-ups of billing's rules are workflow signals sent through the
// Temporal client billing is built with (Options.Temporal), never hooks
// another domain installs: what follows a spend or a grant does not depend
// on which use cases the process built.

// signalTimeout bounds a signal sent after a spend or a grant: it must not
// slow the request much, and it is detached from the request's end.
const signalTimeout = 3 * time.Second

// afterSpend starts (or joins) the account's auto top-up workflow when the
// spend left the balance under the threshold of an account that has it
// on: a running workflow gets a signal, none starts one. A failure is
// logged (the next spend under the threshold tries again); it never fails
// the spend.
func (s *Service) afterSpend(ctx context.Context, cong models.Conglomerate, st CreditState) {
	b := cong.Billing
	if s.temporal == nil || !b.AutoTopUpEnabled || b.AutoTopUpCredits <= 0 || st.Balance >= b.AutoTopUpThreshold {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bounds.Of(signalTimeout))
	defer cancel()
	_, err := s.temporal.SignalWithStartWorkflow(ctx, contract.AutoTopUpWorkflowID(cong.ID), contract.SignalAutoTopUpCheck, nil,
		client.StartWorkflowOptions{TaskQueue: contract.TaskQueue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(contract.ConglomerateIDKey.ValueSet(cong.ID))},
		contract.AutoTopUpWorkflowName, contract.AutoTopUpInput{ConglomerateID: cong.ID})
	if err != nil {
		s.logger.WarnContext(ctx, "auto top-up: not started; the next spend under the threshold tries again", "conglomerate", cong.ID, "error", err)
	}
}

// afterGrant signals the reconcilers of the ad campaigns a grant woke
// (store.CreditOutcome.Woken) and clears their marks. Without Temporal, or
// when a signal fails, the marks stay for the growth sweeper: the grant
// resumes them either way.
func (s *Service) afterGrant(ctx context.Context, woken []store.PendingAdCampaign) {
	if s.temporal == nil || len(woken) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bounds.Of(signalTimeout))
	defer cancel()
	for _, w := range woken {
		a := w.Campaign
		if err := contract.SignalAds(ctx, s.temporal, a.CompanyID, a.ConglomerateID); err != nil {
			s.logger.WarnContext(ctx, "ads: reconciler not signalled after a grant; the growth sweeper does", "company", a.CompanyID, "error", err)
			return
		}
		if err := s.store.Growth().ClearAdReconcilePending(ctx, w.Scope, a.UpdatedAt); err != nil {
			s.logger.WarnContext(ctx, "ads: signalled after a grant but not marked", "company", a.CompanyID, "error", err)
		}
	}
}
