package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/models"
	"holdco/workflows/contract"
)

// registrarCall is one call to the registrar or the database: retried
// with backoff while the registrar is down (the order is keyed, so a
// retry places nothing twice).
var registrarCall = workflow.ActivityOptions{
	StartToCloseTimeout: time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:        2 * time.Second,
		BackoffCoefficient:     2,
		MaximumInterval:        5 * time.Minute,
		NonRetryableErrorTypes: []string{contract.ErrDomainGone},
	},
}

// domainPollsPerRun bounds a run's history (a week of polls fits in one
// run, about 8 events each); more continue as new.
const domainPollsPerRun = 500

// domainWorkflow is one purchase's registration.
type domainWorkflow struct {
	in    contract.DomainInput
	ref   contract.DomainRef
	state contract.DomainState
}

// DomainPurchase registers a paid domain: it places the registrar order,
// then polls it, first after DomainPollFirst and each time twice as late
// up to DomainPollMax, until the order is registered (the row becomes
// registered) or failed — or still pending after DomainPollFor, which
// counts as failed — (the row becomes failed and the price is refunded as
// credits). A worker restart resumes it where it was.
func DomainPurchase(ctx workflow.Context, in contract.DomainInput) (contract.DomainState, error) {
	w := &domainWorkflow{in: in, ref: contract.DomainRef{PurchaseID: in.PurchaseID, ConglomerateID: in.ConglomerateID},
		state: contract.DomainState{Polls: in.Polls}}
	if err := workflow.SetQueryHandler(ctx, contract.QueryDomainState, func() (contract.DomainState, error) { return w.state, nil }); err != nil {
		return w.state, err
	}
	return w.run(workflow.WithActivityOptions(ctx, registrarCall))
}

func (w *domainWorkflow) run(ctx workflow.Context) (contract.DomainState, error) {
	var a *activities.Domains
	if err := workflow.ExecuteActivity(ctx, a.PlaceDomainOrder, w.ref).Get(ctx, &w.state.OrderID); err != nil {
		return w.state, err
	}
	start := w.in.OrderedAt
	if start.IsZero() {
		start = workflow.Now(ctx)
	}
	first, most := w.in.PollFirst, w.in.PollMax
	if first <= 0 {
		first = contract.DomainPollFirst
	}
	if most <= 0 {
		most = contract.DomainPollMax
	}
	wait := pollWait(first, most, w.state.Polls)
	for polls := 0; ; polls++ {
		if err := workflow.Sleep(ctx, wait); err != nil {
			return w.state, err
		}
		var st models.RegistrarOrder
		if err := workflow.ExecuteActivity(ctx, a.DomainOrderStatus, w.state.OrderID).Get(ctx, &st); err != nil {
			return w.state, err
		}
		w.state.Polls++
		switch {
		case st.State == models.OrderRegistered:
			return w.finish(ctx, true, "")
		case st.State == models.OrderFailed:
			return w.finish(ctx, false, st.Reason)
		case workflow.Now(ctx).Sub(start) > contract.DomainPollFor:
			return w.finish(ctx, false, "The registrar did not complete the order within a week.")
		case polls+1 >= domainPollsPerRun:
			next := w.in
			next.Polls, next.OrderedAt = w.state.Polls, start
			return w.state, workflow.NewContinueAsNewError(ctx, DomainPurchase, next)
		}
		wait = min(wait*2, most)
	}
}

// pollWait is the wait before the next poll after n polls.
func pollWait(first, most time.Duration, n int) time.Duration {
	d := first
	for range n {
		if d >= most {
			return most
		}
		d *= 2
	}
	return min(d, most)
}

func (w *domainWorkflow) finish(ctx workflow.Context, registered bool, reason string) (contract.DomainState, error) {
	var a *activities.Domains
	var st models.DomainState
	if err := workflow.ExecuteActivity(ctx, a.FinishDomainPurchase, contract.FinishDomainInput{DomainRef: w.ref, Registered: registered, Reason: reason}).Get(ctx, &st); err != nil {
		return w.state, err
	}
	w.state.Outcome = string(st)
	return w.state, nil
}
