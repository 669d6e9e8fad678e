package contract

import (
	"context"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"holdco/models"
)

// The domain purchase workflow: one per purchase, started once it is paid;
// it places the registrar order and polls it with backoff until the
// domain is registered or the order failed (then the price is refunded
// as credits).
const (
	DomainWorkflowName = "DomainPurchase"
	// QueryDomainState answers DomainState.
	QueryDomainState = "state"
)

// DomainWorkflowID is the one workflow id per purchase.
func DomainWorkflowID(purchaseID string) string { return "domain:" + purchaseID }

// DomainInput names the purchase.
type DomainInput struct {
	PurchaseID     string
	ConglomerateID string
	CompanyID      string
	// Polls counts the status polls of earlier runs and OrderedAt is when
	// the first run placed the order (continue-as-new).
	Polls     int
	OrderedAt time.Time
	// PollFirst and PollMax override DomainPollFirst and DomainPollMax
	// (zero: those; tests poll faster).
	PollFirst, PollMax time.Duration
}

// DomainState is where the workflow is.
type DomainState struct {
	OrderID string
	Polls   int
	// Outcome is "" while polling, then "registered" or "failed".
	Outcome string
}

// Polling of a registrar order: the first look after DomainPollFirst, each
// wait twice the last up to DomainPollMax, for at most DomainPollFor.
const (
	DomainPollFirst = 10 * time.Second
	DomainPollMax   = 30 * time.Minute
	DomainPollFor   = 7 * 24 * time.Hour
)

// The ad reconciler: one long-lived workflow per company. Each UTC day it
// reserves the day's cap from credits and runs the campaign; a cap change,
// a new creative or a grant of credits signals it (signal-with-start).
const (
	AdsWorkflowName = "AdReconciler"
	// SignalAdsReconcile asks the reconciler to look at the campaign again.
	SignalAdsReconcile = "reconcile"
	// QueryAdsState answers AdsState.
	QueryAdsState = "state"
)

// AdsWorkflowID is the one workflow id per company.
func AdsWorkflowID(companyID string) string { return "ads:" + companyID }

// SignalAds asks the company's reconciler to look at its campaign again,
// starting it when none runs (signal-with-start). Every sender uses it: a
// cap change or a new creative (service/growth), a grant that woke the
// campaign (service/billing), the growth sweeper.
func SignalAds(ctx context.Context, c client.Client, companyID, conglomerateID string) error {
	_, err := c.SignalWithStartWorkflow(ctx, AdsWorkflowID(companyID), SignalAdsReconcile, nil,
		client.StartWorkflowOptions{TaskQueue: TaskQueue, WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			TypedSearchAttributes: temporal.NewSearchAttributes(CompanyIDKey.ValueSet(companyID), ConglomerateIDKey.ValueSet(conglomerateID))},
		AdsWorkflowName, AdsInput{CompanyID: companyID, ConglomerateID: conglomerateID})
	return err
}

// AdsInput names the company; Days counts the day boundaries of earlier
// runs (continue-as-new).
type AdsInput struct {
	CompanyID      string
	ConglomerateID string
	Days           int
	// DaysPerRun continues as new after this many day boundaries (0:
	// DefaultAdsDaysPerRun).
	DaysPerRun int
}

// DefaultAdsDaysPerRun keeps a reconciler's history short: a day adds
// about ten events.
const DefaultAdsDaysPerRun = 30

// AdsState is where the reconciler is.
type AdsState struct {
	Day      time.Time
	State    string
	DailyCap int64
	Days     int
}

// DomainRef names a purchase (the domain activities' input).
type DomainRef struct {
	PurchaseID     string
	ConglomerateID string
}

// FinishDomainInput ends a purchase.
type FinishDomainInput struct {
	DomainRef
	Registered bool
	Reason     string
}

// ErrDomainGone: the purchase no longer exists (its account was deleted);
// the workflow ends.
const ErrDomainGone = "domain_purchase_gone"

// ReconcileAdsInput is the company and the workflow's day (UTC midnight).
type ReconcileAdsInput struct {
	CompanyID      string
	ConglomerateID string
	Day            time.Time
}

// ReconcileAdsResult is the campaign after a reconcile.
type ReconcileAdsResult struct {
	State    models.AdState
	DailyCap int64
	// Reserved: the day has a reservation to close at its end.
	Reserved bool
}
