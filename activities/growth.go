package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"holdco/models"
	"holdco/service/growth"
	"holdco/store"
	"holdco/workflows/contract"
)

// Domains is the activity set of the domain purchase workflow; it acts as
// the system on the purchase's conglomerate.
type Domains struct {
	Store  *store.Store
	Growth *growth.Service
}

func gone(err error) error {
	if errors.Is(err, models.ErrNotFound) {
		return temporal.NewNonRetryableApplicationError("the domain purchase no longer exists", contract.ErrDomainGone, err)
	}
	return err
}

// PlaceDomainOrder places the registrar order once and returns its id.
func (a *Domains) PlaceDomainOrder(ctx context.Context, in contract.DomainRef) (string, error) {
	id, err := a.Growth.PlaceOrder(ctx, a.Store.SystemConglomerateScope(in.ConglomerateID), in.PurchaseID)
	return id, gone(err)
}

// DomainOrderStatus asks the registrar where the order stands.
func (a *Domains) DomainOrderStatus(ctx context.Context, orderID string) (models.RegistrarOrder, error) {
	return a.Growth.OrderStatus(ctx, orderID)
}

// FinishDomainPurchase records the end (registered, or failed with the
// refund) once.
func (a *Domains) FinishDomainPurchase(ctx context.Context, in contract.FinishDomainInput) (models.DomainState, error) {
	p, err := a.Growth.FinishPurchase(ctx, a.Store.SystemConglomerateScope(in.ConglomerateID), in.PurchaseID, in.Registered, in.Reason)
	return p.State, gone(err)
}

// AdReconciler is the activity set of the ad reconciler.
type AdReconciler struct {
	Store  *store.Store
	Growth *growth.Service
}

// ReconcileAds closes an ended day, then reserves and runs (or pauses) the
// day's campaign.
func (a *AdReconciler) ReconcileAds(ctx context.Context, in contract.ReconcileAdsInput) (contract.ReconcileAdsResult, error) {
	scope, err := a.Store.SystemCompanyScope(ctx, in.CompanyID)
	if errors.Is(err, models.ErrNotFound) {
		return contract.ReconcileAdsResult{State: models.AdPaused}, nil // the company is gone: nothing to run
	}
	if err != nil {
		return contract.ReconcileAdsResult{}, err
	}
	return a.Growth.Reconcile(ctx, scope, a.Store.SystemConglomerateScope(scope.ConglomerateID()), in.Day)
}
