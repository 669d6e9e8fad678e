package contract

import "time"

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
