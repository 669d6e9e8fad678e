package growth

import (
	"context"
	"errors"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"holdco/internal/bounds"
	"holdco/models"
	"holdco/service/background"
	"holdco/store"
	"holdco/workflows/contract"
)

// startTimeout bounds a workflow start or signal and its row's mark, made
// for a request or by the sweeper.
const startTimeout = 5 * time.Second

// startDomain starts domain:<id> and marks the row, detached from the
// request; a failure is logged and left to the sweeper (the row is the
// outbox).
func (s *Service) startDomain(ctx context.Context, scope store.ConglomerateScope, p models.DomainPurchase) {
	if s.temporal == nil {
		return
	}
	if err := startDomainAndMark(context.WithoutCancel(ctx), s.store, s.temporal, scope, p); err != nil {
		s.logger.WarnContext(ctx, "domain purchase: workflow not started or not marked; the sweeper retries", "purchase", p.ID, "error", err)
	}
}

// startDomainAndMark starts domain:<id> and takes the row out of the
// outbox, within startTimeout under ctx (a request's start and a sweep's
// alike).
func startDomainAndMark(ctx context.Context, st *store.Store, c client.Client, scope store.ConglomerateScope, p models.DomainPurchase) error {
	ctx, cancel := context.WithTimeout(ctx, bounds.Of(startTimeout))
	defer cancel()
	if err := startDomainWorkflow(ctx, c, p); err != nil {
		return err
	}
	return st.Growth().SetDomainWorkflowStarted(ctx, scope, p.ID)
}

func startDomainWorkflow(ctx context.Context, c client.Client, p models.DomainPurchase) error {
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: contract.DomainWorkflowID(p.ID), TaskQueue: contract.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDKey.ValueSet(p.CompanyID),
			contract.ConglomerateIDKey.ValueSet(p.ConglomerateID))},
		contract.DomainWorkflowName, contract.DomainInput{PurchaseID: p.ID, ConglomerateID: p.ConglomerateID, CompanyID: p.CompanyID})
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		return nil // started before (or ran already): the row just was not marked
	}
	return err
}

// signalAds signals-with-start the company's reconciler and clears the
// campaign's outbox mark, detached from the request; a failure is logged
// and left to the sweeper.
func (s *Service) signalAds(ctx context.Context, scope store.CompanyScope, a models.AdCampaign) {
	if s.temporal == nil {
		return
	}
	if err := signalAdsAndMark(context.WithoutCancel(ctx), s.store, s.temporal, scope, a); err != nil {
		s.logger.WarnContext(ctx, "ads: reconciler not signalled or not marked; the sweeper retries", "company", a.CompanyID, "error", err)
	}
}

// signalAdsAndMark signals-with-start the company's reconciler and clears
// the campaign's outbox mark, within startTimeout under ctx.
func signalAdsAndMark(ctx context.Context, st *store.Store, c client.Client, scope store.CompanyScope, a models.AdCampaign) error {
	ctx, cancel := context.WithTimeout(ctx, bounds.Of(startTimeout))
	defer cancel()
	if err := contract.SignalAds(ctx, c, a.CompanyID, a.ConglomerateID); err != nil {
		return err
	}
	return st.Growth().ClearAdReconcilePending(ctx, scope, a.UpdatedAt)
}

// Sweeper starts the domain workflows and signals the reconcilers whose
// start or signal a crash lost after the commit (the rows are their own
// outbox), and expires unpaid domain checkouts. It runs on the worker
// role.
type Sweeper struct {
	Store    *store.Store
	Temporal client.Client
	Logger   *slog.Logger
	// Now is the clock of the expiry (nil: the system clock).
	Now func() time.Time
}

// ExpireCheckouts ends every unpaid domain checkout whose expiry passed
// (state expired, nothing granted) and returns how many.
func (w *Sweeper) ExpireCheckouts(ctx context.Context) (int64, error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	var total int64
	for {
		n, err := w.Store.Growth().ExpireDomainCheckouts(ctx, now().UTC(), sweepBatch)
		total += n
		if err != nil || n < sweepBatch {
			return total, err
		}
	}
}

// Sweep timing.
const (
	// SweepGrace leaves a fresh change to the request making it.
	SweepGrace = 30 * time.Second
	SweepEvery = 10 * time.Second
	sweepBatch = 100
)

// Sweep starts and signals what is older than grace: the unstarted domain
// workflows, then the pending ad reconciles. It returns how many and stops
// at the first Temporal failure (background.Drain).
func (w *Sweeper) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	n, err := background.Outbox[store.UnstartedDomain]{Key: func(d store.UnstartedDomain) string { return d.Purchase.ID },
		Pending: w.Store.Growth().UnstartedDomainPurchases,
		Start: func(ctx context.Context, d store.UnstartedDomain) error {
			return startDomainAndMark(ctx, w.Store, w.Temporal, d.Scope, d.Purchase)
		}}.Sweep(ctx, grace)
	if err != nil {
		return n, err
	}
	signalled, err := background.Outbox[store.PendingAdCampaign]{Key: func(a store.PendingAdCampaign) string { return a.Campaign.CompanyID },
		Pending: w.Store.Growth().PendingAdReconciles,
		Start: func(ctx context.Context, a store.PendingAdCampaign) error {
			return signalAdsAndMark(ctx, w.Store, w.Temporal, a.Scope, a.Campaign)
		}}.Sweep(ctx, grace)
	return n + signalled, err
}
