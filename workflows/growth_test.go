package workflows_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/activities"
	"holdco/models"
	"holdco/providers/ads"
	"holdco/service/companies"
	"holdco/service/growth"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

var (
	domainOptions = workflow.RegisterOptions{Name: contract.DomainWorkflowName}
	adsOptions    = workflow.RegisterOptions{Name: contract.AdsWorkflowName}
)

// domainEnv runs the domain workflow with the registrar's answers
// scripted: statuses are returned in order (the last one repeats), an
// error answer fails that call.
func domainEnv(t *testing.T, statuses []any) (env interface {
	ExecuteWorkflow(any, ...any)
}, finish *[]contract.FinishDomainInput, polls *[]time.Time, get func() (contract.DomainState, error)) {
	t.Helper()
	e := newTestEnv()
	var acts *activities.Domains
	e.RegisterWorkflowWithOptions(workflows.DomainPurchase, domainOptions)
	e.RegisterActivity(acts)
	e.OnActivity(acts.PlaceDomainOrder, mock.Anything, mock.Anything).Return("order-1", nil).Once()
	var mu sync.Mutex
	var seen []time.Time
	var finished []contract.FinishDomainInput
	e.OnActivity(acts.DomainOrderStatus, mock.Anything, "order-1").Return(func(context.Context, string) (models.RegistrarOrder, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, e.Now())
		a := statuses[min(len(seen), len(statuses))-1]
		if err, ok := a.(error); ok {
			return models.RegistrarOrder{}, err
		}
		return models.RegistrarOrder{OrderID: "order-1", State: a.(models.RegistrarOrderState), Reason: "refused by the registry"}, nil
	})
	e.OnActivity(acts.FinishDomainPurchase, mock.Anything, mock.Anything).Return(func(_ context.Context, in contract.FinishDomainInput) (models.DomainState, error) {
		finished = append(finished, in)
		if in.Registered {
			return models.DomainRegistered, nil
		}
		return models.DomainFailed, nil
	})
	return e, &finished, &seen, func() (contract.DomainState, error) {
		require.True(t, e.IsWorkflowCompleted())
		var st contract.DomainState
		err := e.GetWorkflowResult(&st)
		return st, err
	}
}

func domainInput() contract.DomainInput {
	return contract.DomainInput{PurchaseID: "p1", ConglomerateID: "g1", CompanyID: "c1"}
}

func TestDomainPurchaseRegistersAfterSlowRegistrar(t *testing.T) {
	env, finish, polls, result := domainEnv(t, []any{models.OrderPending, models.OrderPending, models.OrderPending, models.OrderRegistered})
	env.ExecuteWorkflow(workflows.DomainPurchase, domainInput())
	st, err := result()
	require.NoError(t, err)
	assert.Equal(t, string(models.DomainRegistered), st.Outcome)
	assert.Equal(t, 4, st.Polls)
	require.Len(t, *finish, 1)
	assert.True(t, (*finish)[0].Registered)
	// Backoff: 10 s, then 20, 40, 80 s between polls.
	require.Len(t, *polls, 4)
	for i := 1; i < 4; i++ {
		assert.Equal(t, contract.DomainPollFirst<<i, (*polls)[i].Sub((*polls)[i-1]), "wait before poll %d", i+1)
	}
}

func TestDomainPurchaseRetriesARegistrarThatFails(t *testing.T) {
	down := errors.New("registrar: 503")
	env, finish, polls, result := domainEnv(t, []any{down, down, models.OrderRegistered})
	env.ExecuteWorkflow(workflows.DomainPurchase, domainInput())
	st, err := result()
	require.NoError(t, err)
	assert.Equal(t, string(models.DomainRegistered), st.Outcome)
	assert.Len(t, *polls, 3, "the failed calls were retried")
	require.Len(t, *finish, 1)
	assert.True(t, (*finish)[0].Registered)
}

func TestDomainPurchaseFailsWithTheRegistrarsReason(t *testing.T) {
	env, finish, _, result := domainEnv(t, []any{models.OrderPending, models.OrderFailed})
	env.ExecuteWorkflow(workflows.DomainPurchase, domainInput())
	st, err := result()
	require.NoError(t, err)
	assert.Equal(t, string(models.DomainFailed), st.Outcome)
	require.Len(t, *finish, 1)
	assert.False(t, (*finish)[0].Registered)
	assert.Equal(t, "refused by the registry", (*finish)[0].Reason)
}

func TestDomainPurchaseGivesUpAfterAWeek(t *testing.T) {
	env, finish, polls, result := domainEnv(t, []any{models.OrderPending})
	env.ExecuteWorkflow(workflows.DomainPurchase, domainInput())
	st, err := result()
	require.NoError(t, err)
	assert.Equal(t, string(models.DomainFailed), st.Outcome)
	require.Len(t, *finish, 1)
	assert.Contains(t, (*finish)[0].Reason, "within a week")
	ps := *polls
	assert.LessOrEqual(t, ps[len(ps)-1].Sub(ps[len(ps)-2]), contract.DomainPollMax, "waits are capped")
	assert.Greater(t, ps[len(ps)-1].Sub(ps[0]), contract.DomainPollFor-contract.DomainPollMax)
}

// adsWorld is the reconciler with its real activities on a service world
// whose clock follows the workflow test environment's.
type adsWorld struct {
	e       *servicetest.Env
	company string
	cong    string
	user    context.Context
}

func newAdsWorld(t *testing.T, start time.Time) (*adsWorld, func(func() time.Time) *activities.AdReconciler) {
	t.Helper()
	var now func() time.Time
	clock := func() time.Time { return now() }
	sim, err := ads.NewSimulator(t.TempDir(), clock)
	require.NoError(t, err)
	e := servicetest.NewWith(t, usecases.Options{Ads: sim})
	e.Clock.Advance(start.Sub(e.Clock.Now()))
	now = e.Clock.Now
	ada, cong := e.User(t, "ada@example.com")
	c := e.SeedCompany(t, ada, companies.CompanyInput{Name: "Tea Shop", Mission: "Sell green tea online."})
	w := &adsWorld{e: e, company: c.ID, cong: cong, user: ada}
	return w, func(envNow func() time.Time) *activities.AdReconciler {
		now = envNow
		return &activities.AdReconciler{Store: e.Store, Growth: e.Svc.Growth}
	}
}

func (w *adsWorld) grant(t *testing.T, n int64) {
	t.Helper()
	_, err := w.e.Svc.GrantCredits(context.Background(), w.e.Store.SystemConglomerateScope(w.cong), models.EntryAdminAdjustment, n, "test")
	require.NoError(t, err)
}

func (w *adsWorld) balance(t *testing.T) int64 {
	t.Helper()
	st, err := w.e.Svc.Credits(w.user, w.cong)
	require.NoError(t, err)
	return st.Balance
}

func (w *adsWorld) panel(t *testing.T) growth.AdPanel {
	t.Helper()
	p, err := w.e.Svc.Growth.Panel(w.user, w.company)
	require.NoError(t, err)
	return p
}

// The reconciler across day boundaries on the test clock: it reserves the
// day's cap each day, stops at INSUFFICIENT_CREDITS when the balance
// cannot fund a day, resumes by itself on a grant, refunds what a day did
// not spend, and ends once paused with nothing left to close.
func TestAdReconcilerAcrossDays(t *testing.T) {
	start := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC) // noon: half a day left
	w, acts := newAdsWorld(t, start)
	w.grant(t, 25)
	_, err := w.e.Svc.Growth.SetDailyCap(w.user, w.company, 10)
	require.NoError(t, err)

	env := newTestEnv()
	env.SetStartTime(start)
	env.RegisterWorkflowWithOptions(workflows.AdReconciler, adsOptions)
	env.RegisterActivity(acts(env.Now))

	type seen struct {
		state   models.AdState
		balance int64
	}
	var log []seen
	look := func() {
		p := w.panel(t)
		log = append(log, seen{p.Campaign.State, w.balance(t)})
	}
	signal := func() { env.SignalWorkflow(contract.SignalAdsReconcile, nil) }
	// Day 1 (from noon): 10 reserved, spent evenly by midnight.
	env.RegisterDelayedCallback(look, time.Hour)
	// Day 2: 10 more reserved; days 3 and 4: 5 left → INSUFFICIENT_CREDITS.
	env.RegisterDelayedCallback(look, 13*time.Hour)
	env.RegisterDelayedCallback(look, 61*time.Hour)
	// A top-up on day 4 at 06:00 resumes at once.
	env.RegisterDelayedCallback(func() { w.grant(t, 30); signal() }, 66*time.Hour)
	env.RegisterDelayedCallback(look, 67*time.Hour)
	// Paused on day 4 at 18:00; the reconciler closes day 4 at midnight and ends.
	env.RegisterDelayedCallback(func() {
		_, err := w.e.Svc.Growth.SetDailyCap(w.user, w.company, 0)
		require.NoError(t, err)
		signal()
	}, 78*time.Hour)
	env.ExecuteWorkflow(workflows.AdReconciler, contract.AdsInput{CompanyID: w.company, ConglomerateID: w.cong})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var st contract.AdsState
	require.NoError(t, env.GetWorkflowResult(&st))
	assert.Equal(t, string(models.AdPaused), st.State)
	assert.Equal(t, 4, st.Days, "ended at the boundary after the pause")

	require.Len(t, log, 4)
	assert.Equal(t, seen{models.AdActive, 15}, log[0], "day 1: the cap reserved")
	assert.Equal(t, seen{models.AdActive, 5}, log[1], "day 2: day 1 spent it all, 10 more reserved")
	assert.Equal(t, seen{models.AdInsufficientCredits, 5}, log[2], "day 4: 5 cannot fund 10")
	assert.Equal(t, seen{models.AdActive, 25}, log[3], "the top-up resumed day 4 at once")

	p := w.panel(t)
	assert.Equal(t, models.AdPaused, p.Campaign.State)
	assert.Equal(t, int64(0), p.Campaign.DailyCap)
	// Days 1 and 2 spent 10 each, day 3 nothing, day 4 (06:00 to the
	// pause at 18:00, of 18 h left) 6 of 10: 4 refunded at its close.
	assert.Equal(t, int64(26), p.Campaign.TotalSpent)
	assert.Positive(t, p.Campaign.TotalImpressions)
	assert.Equal(t, int64(25+30-26), w.balance(t), "every unspent credit came back")
	ev, err := w.e.Svc.Activity(w.user, w.company, companies.ActivityInput{Limit: 50})
	require.NoError(t, err)
	var states []string
	for _, e := range ev.Events {
		if e.Kind == models.ActivityAdStateChanged {
			states = append([]string{e.Subject}, states...)
		}
	}
	assert.Equal(t, []string{"PENDING", "ACTIVE", "INSUFFICIENT_CREDITS", "ACTIVE", "PAUSED"}, states)
}

// A positive cap while INSUFFICIENT_CREDITS re-triggers the reconciler,
// which resumes once the balance funds it; a cap signal on a running day
// does not reserve twice.
func TestAdReconcilerResumesOnAPositiveCap(t *testing.T) {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	w, acts := newAdsWorld(t, start)
	w.grant(t, 5)
	_, err := w.e.Svc.Growth.SetDailyCap(w.user, w.company, 5)
	require.NoError(t, err)
	env := newTestEnv()
	env.SetStartTime(start)
	env.RegisterWorkflowWithOptions(workflows.AdReconciler, adsOptions)
	env.RegisterActivity(acts(env.Now))
	var states []models.AdState
	look := func() { states = append(states, w.panel(t).Campaign.State) }
	signal := func() { env.SignalWorkflow(contract.SignalAdsReconcile, nil) }
	env.RegisterDelayedCallback(look, time.Hour)
	env.RegisterDelayedCallback(signal, 2*time.Hour) // a repeated signal reserves nothing more
	env.RegisterDelayedCallback(look, 3*time.Hour)
	env.RegisterDelayedCallback(look, 25*time.Hour) // day 2: nothing left
	env.RegisterDelayedCallback(func() {
		w.grant(t, 3) // not enough for 5: still stopped
		_, err := w.e.Svc.Growth.SetDailyCap(w.user, w.company, 3)
		require.NoError(t, err)
		signal()
	}, 26*time.Hour)
	env.RegisterDelayedCallback(look, 27*time.Hour)
	env.RegisterDelayedCallback(func() {
		_, err := w.e.Svc.Growth.SetDailyCap(w.user, w.company, 0)
		require.NoError(t, err)
		signal()
	}, 28*time.Hour)
	env.ExecuteWorkflow(workflows.AdReconciler, contract.AdsInput{CompanyID: w.company, ConglomerateID: w.cong})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []models.AdState{models.AdActive, models.AdActive, models.AdInsufficientCredits, models.AdActive}, states)
}

// Recorded histories of the growth workflows; regenerate with
// UPDATE_HISTORIES=1 after an intended change.
var growthHistories = []string{"domain_registered.json", "ads_paused.json"}

func TestReplayGrowthHistories(t *testing.T) {
	if os.Getenv("UPDATE_HISTORIES") != "" {
		recordGrowthHistories(t)
	}
	for _, name := range growthHistories {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(workflows.DomainPurchase, domainOptions)
		r.RegisterWorkflowWithOptions(workflows.AdReconciler, adsOptions)
		require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, filepath.Join("testdata", name)), name)
	}
}

func recordGrowthHistories(t *testing.T) {
	var mu sync.Mutex
	polls := 0
	paused := false
	env := testenv.NewTemporal(t, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(workflows.DomainPurchase, domainOptions)
		r.RegisterWorkflowWithOptions(workflows.AdReconciler, adsOptions)
		r.RegisterActivityWithOptions(func(context.Context, contract.DomainRef) (string, error) { return "order-1", nil },
			activity.RegisterOptions{Name: "PlaceDomainOrder"})
		r.RegisterActivityWithOptions(func(context.Context, string) (models.RegistrarOrder, error) {
			mu.Lock()
			defer mu.Unlock()
			polls++
			if polls < 3 {
				return models.RegistrarOrder{State: models.OrderPending}, nil
			}
			return models.RegistrarOrder{State: models.OrderRegistered}, nil
		}, activity.RegisterOptions{Name: "DomainOrderStatus"})
		r.RegisterActivityWithOptions(func(context.Context, contract.FinishDomainInput) (models.DomainState, error) {
			return models.DomainRegistered, nil
		}, activity.RegisterOptions{Name: "FinishDomainPurchase"})
		r.RegisterActivityWithOptions(func(context.Context, contract.ReconcileAdsInput) (contract.ReconcileAdsResult, error) {
			mu.Lock()
			defer mu.Unlock()
			if paused {
				return contract.ReconcileAdsResult{State: models.AdPaused}, nil
			}
			return contract.ReconcileAdsResult{State: models.AdActive, DailyCap: 10, Reserved: true}, nil
		}, activity.RegisterOptions{Name: "ReconcileAds"})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	in := domainInput()
	in.PollFirst, in.PollMax = 10*time.Millisecond, 20*time.Millisecond
	run, err := env.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: contract.DomainWorkflowID("p1"), TaskQueue: env.TaskQueue},
		contract.DomainWorkflowName, in)
	require.NoError(t, err)
	require.NoError(t, run.Get(ctx, nil))
	save(t, ctx, env.Client, run, "domain_registered.json")

	ads, err := env.Client.SignalWithStartWorkflow(ctx, contract.AdsWorkflowID("c1"), contract.SignalAdsReconcile, nil,
		client.StartWorkflowOptions{TaskQueue: env.TaskQueue}, contract.AdsWorkflowName, contract.AdsInput{CompanyID: "c1", ConglomerateID: "g1"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, err := env.Client.QueryWorkflow(ctx, ads.GetID(), ads.GetRunID(), contract.QueryAdsState)
		var st contract.AdsState
		return err == nil && v.Get(&st) == nil && st.State == string(models.AdActive)
	}, 30*time.Second, 50*time.Millisecond)
	mu.Lock()
	paused = true
	mu.Unlock()
	require.NoError(t, env.Client.SignalWorkflow(ctx, ads.GetID(), ads.GetRunID(), contract.SignalAdsReconcile, nil))
	require.NoError(t, ads.Get(ctx, nil))
	save(t, ctx, env.Client, ads, "ads_paused.json")
}
