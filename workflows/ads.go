package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/models"
	"holdco/workflows/contract"
)

// reconcileCall is the reconciler's one activity: database, credits and
// the ads network, all idempotent; retried with backoff while a part is
// down.
var reconcileCall = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    2 * time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    5 * time.Minute,
	},
}

// adsWorkflow is a company's ad reconciler.
type adsWorkflow struct {
	in    contract.AdsInput
	state contract.AdsState
}

// AdReconciler keeps a company's campaign at its daily cap. It reconciles
// at once (a cap change or a grant of credits signalled it), then sleeps
// until the next UTC midnight or the next signal, whichever comes first.
// At a day boundary it reconciles again: the ended day is closed and the
// new one reserved. It ends when the campaign is paused with nothing left
// to close (a positive cap starts it again) and continues as new every
// DaysPerRun days.
func AdReconciler(ctx workflow.Context, in contract.AdsInput) (contract.AdsState, error) {
	w := &adsWorkflow{in: in, state: contract.AdsState{Days: in.Days}}
	if err := workflow.SetQueryHandler(ctx, contract.QueryAdsState, func() (contract.AdsState, error) { return w.state, nil }); err != nil {
		return w.state, err
	}
	return w.run(ctx)
}

func (w *adsWorkflow) run(ctx workflow.Context) (contract.AdsState, error) {
	signals := workflow.GetSignalChannel(ctx, contract.SignalAdsReconcile)
	ctx = workflow.WithActivityOptions(ctx, reconcileCall)
	perRun := w.in.DaysPerRun
	if perRun <= 0 {
		perRun = contract.DefaultAdsDaysPerRun
	}
	var a *activities.AdReconciler
	for {
		for signals.ReceiveAsync(nil) { // this reconcile answers them
		}
		day := workflow.Now(ctx).UTC().Truncate(24 * time.Hour)
		var out contract.ReconcileAdsResult
		if err := workflow.ExecuteActivity(ctx, a.ReconcileAds, contract.ReconcileAdsInput{CompanyID: w.in.CompanyID,
			ConglomerateID: w.in.ConglomerateID, Day: day}).Get(ctx, &out); err != nil {
			return w.state, err
		}
		w.state.Day, w.state.State, w.state.DailyCap = day, string(out.State), out.DailyCap
		if out.State == models.AdPaused && !out.Reserved && !signals.ReceiveAsync(nil) {
			return w.state, nil
		}
		timerCtx, cancel := workflow.WithCancel(ctx)
		boundary := false
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(workflow.NewTimer(timerCtx, day.Add(24*time.Hour).Sub(workflow.Now(ctx))), func(workflow.Future) { boundary = true })
		sel.AddReceive(signals, func(workflow.ReceiveChannel, bool) {})
		sel.Select(ctx)
		cancel()
		if boundary {
			w.state.Days++
			if w.state.Days-w.in.Days >= perRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
				next := w.in
				next.Days = w.state.Days
				// Signals not yet received are carried by the next run's
				// first reconcile (it runs at once).
				return w.state, workflow.NewContinueAsNewError(ctx, AdReconciler, next)
			}
		}
	}
}
