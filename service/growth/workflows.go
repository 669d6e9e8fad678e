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

	"holdco/models"
	"holdco/store"
	"holdco/workflows/contract"
)

// startTimeout bounds a workflow start or signal made for a request.
const startTimeout = 5 * time.Second

// startDomain starts domain:<id> and marks the row; a failure is logged
// and left to the sweeper (the row is the outbox).
func (s *Service) startDomain(ctx context.Context, scope store.ConglomerateScope, p models.DomainPurchase) {
	if s.temporal == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	if err := startDomainWorkflow(ctx, s.temporal, p); err != nil {
		s.logger.WarnContext(ctx, "domain purchase: workflow not started; the sweeper retries", "purchase", p.ID, "error", err)
		return
	}
	if err := s.store.SetDomainWorkflowStarted(ctx, scope, p.ID); err != nil {
		s.logger.WarnContext(ctx, "domain purchase: started but not marked", "purchase", p.ID, "error", err)
	}
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
// campaign's outbox mark; a failure is logged and left to the sweeper.
func (s *Service) signalAds(ctx context.Context, scope store.CompanyScope, a models.AdCampaign) {
	if s.temporal == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	if err := signalAdsWorkflow(ctx, s.temporal, a); err != nil {
		s.logger.WarnContext(ctx, "ads: reconciler not signalled; the sweeper retries", "company", a.CompanyID, "error", err)
		return
	}
	if err := s.store.ClearAdReconcilePending(ctx, scope, a.UpdatedAt); err != nil {
		s.logger.WarnContext(ctx, "ads: signalled but not marked", "company", a.CompanyID, "error", err)
	}
}

func signalAdsWorkflow(ctx context.Context, c client.Client, a models.AdCampaign) error {
	_, err := c.SignalWithStartWorkflow(ctx, contract.AdsWorkflowID(a.CompanyID), contract.SignalAdsReconcile, nil,
		client.StartWorkflowOptions{TaskQueue: contract.TaskQueue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(contract.CompanyIDKey.ValueSet(a.CompanyID),
				contract.ConglomerateIDKey.ValueSet(a.ConglomerateID))},
		contract.AdsWorkflowName, contract.AdsInput{CompanyID: a.CompanyID, ConglomerateID: a.ConglomerateID})
	return err
}

// resumeStalled is billing's grant hook: campaigns of the account waiting
// for credits are marked and their reconcilers signalled (the mark makes
// the signal survive a crash).
func (s *Service) resumeStalled(ctx context.Context, scope store.ConglomerateScope) {
	stalled, err := s.store.StalledAdCampaigns(ctx, scope)
	if err != nil {
		s.logger.WarnContext(ctx, "ads: stalled campaigns not read after a grant", "error", err)
		return
	}
	for _, c := range stalled {
		a, err := s.store.UpdateAdCampaign(ctx, c, func(a *models.AdCampaign) ([]models.ActivityInput, error) {
			a.ReconcilePending = true
			return nil, nil
		})
		if err != nil {
			s.logger.WarnContext(ctx, "ads: stalled campaign not marked after a grant", "company", c.ID(), "error", err)
			continue
		}
		s.signalAds(ctx, c, a)
	}
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
		n, err := w.Store.ExpireDomainCheckouts(ctx, now().UTC(), sweepBatch)
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

// Sweep starts and signals what is older than grace; it returns how many
// and stops at the first Temporal failure.
func (w *Sweeper) Sweep(ctx context.Context, grace time.Duration) (int, error) {
	before := time.Now().UTC().Add(-grace)
	domains, err := w.Store.UnstartedDomainPurchases(ctx, before, sweepBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range domains {
		if err := startDomainWorkflow(ctx, w.Temporal, d.Purchase); err != nil {
			return n, err
		}
		if err := w.Store.SetDomainWorkflowStarted(ctx, d.Scope, d.Purchase.ID); err != nil {
			return n, err
		}
		n++
	}
	ads, err := w.Store.PendingAdReconciles(ctx, before, sweepBatch)
	if err != nil {
		return n, err
	}
	for _, a := range ads {
		if err := signalAdsWorkflow(ctx, w.Temporal, a.Campaign); err != nil {
			return n, err
		}
		if err := w.Store.ClearAdReconcilePending(ctx, a.Scope, a.Campaign.UpdatedAt); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Run sweeps every interval until ctx ends.
func (w *Sweeper) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := w.Sweep(ctx, SweepGrace); err != nil && ctx.Err() == nil {
			w.Logger.WarnContext(ctx, "growth sweep", "error", err)
		} else if n > 0 {
			w.Logger.InfoContext(ctx, "growth sweep: started or signalled what a crash left behind", "count", n)
		}
		if n, err := w.ExpireCheckouts(ctx); err != nil && ctx.Err() == nil {
			w.Logger.WarnContext(ctx, "growth sweep: expiring unpaid domain checkouts", "error", err)
		} else if n > 0 {
			w.Logger.InfoContext(ctx, "growth sweep: unpaid domain checkouts expired", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
