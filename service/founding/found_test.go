package founding_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
)

// acceptedInterview stores an interview of the user behind ctx that was
// accepted (state founding) with a proposal, as the workflow leaves it
// before its founding step.
func acceptedInterview(t *testing.T, e *servicetest.Env, ctx context.Context, cong string, kind models.FoundingKind, companyID *string, p models.FoundingProposal) models.FoundingInterview {
	t.Helper()
	pr, ok := service.PrincipalFrom(ctx)
	require.True(t, ok)
	f, err := e.Store.Founding().CreateFoundingInterview(context.Background(), e.Store.SystemConglomerateScope(cong), models.FoundingInterview{
		UserID: pr.UserID, Kind: kind, State: models.FoundingFounding, Idea: "Guided hiking maps for families", CompanyID: companyID, Proposal: &p,
		SegmentRunning: true, Transcript: []models.FoundingEntry{{Role: models.RoleFounder, Kind: models.EntryAccept, Text: "Found it."}}})
	require.NoError(t, err)
	return f
}

var trailKin = models.FoundingProposal{Name: "Trail Kin", Handle: "trail-kin", Mission: "Maps for families who hike.", FoundingPlan: "# Founding plan: Trail Kin"}

// TestFoundIsTheBusinessStart: the interview's founding step is the one
// business start: each of its gates, in their order, ends the interview
// rejected with the gate's sentence and writes nothing; a start that goes
// through founds the company with its plan, the welcome credits once and
// the interview's end, and a retry changes nothing.
func TestFoundIsTheBusinessStart(t *testing.T) {
	type fails struct{ plan, limit, credits bool }
	cases := []struct {
		name   string
		fails  fails
		reason string
	}{
		{"the plan first", fails{plan: true, limit: true, credits: true}, "The 3-day free trial ended on"},
		{"then the business limit", fails{limit: true, credits: true}, "This account has 1 businesses and may have at most 1; archive one to start another."},
		{"then the credits", fails{credits: true}, "This needs 12 credits but the account has 2; add at least 10 credits or upgrade the plan."},
		{"a new account: founded with the welcome credits", fails{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var limits founding.Limits
			if c.fails.limit {
				limits.BusinessLimit = 1
			}
			e := servicetest.NewWith(t, usecases.Options{FoundingLimits: limits})
			ada, congID := e.User(t, "ada@example.com")
			ctx := context.Background()
			cong := e.Store.SystemConglomerateScope(congID)
			if c.fails.limit {
				e.SeedCompany(t, ada, companies.CompanyInput{Name: "Ada First"})
			}
			if c.fails.credits {
				_, err := e.Svc.GrantWelcomeCredits(ctx, cong)
				require.NoError(t, err)
				_, err = e.Svc.Spend(ctx, cong, "", "run-1", models.EntryTokenUsagePartial, 13)
				require.NoError(t, err)
			}
			if c.fails.plan {
				e.Clock.Advance(service.TrialLength + time.Minute)
			}
			welcomes := welcomeEntries(t, e, congID)
			f := acceptedInterview(t, e, ada, congID, models.FoundingNew, nil, trailKin)

			for range 2 { // the second is a retry of the activity
				st, err := e.Svc.Founding.Found(ctx, cong, f.ID)
				require.NoError(t, err)
				if c.reason != "" {
					assert.Equal(t, models.FoundingRejected, st.State)
				} else {
					assert.Equal(t, models.FoundingFounded, st.State)
				}
			}
			got, err := e.Store.Founding().FoundingInterview(ctx, cong, f.ID)
			require.NoError(t, err)
			if c.reason != "" {
				assert.Contains(t, got.RejectedReason, c.reason)
				assert.Nil(t, got.CompanyID)
				assert.EqualValues(t, 0, mustCount(t, e, "SELECT COUNT(*) FROM companies WHERE handle = 'trail-kin'"))
				assert.Equal(t, welcomes, welcomeEntries(t, e, congID), "a refused founding grants nothing")
				return
			}
			require.NotNil(t, got.CompanyID)
			co, err := e.Svc.GetCompany(ada, *got.CompanyID)
			require.NoError(t, err)
			assert.Equal(t, "trail-kin", co.Handle)
			assert.Equal(t, trailKin.Mission, co.Mission)
			doc, err := e.Svc.Documents.Get(ada, co.ID, models.DocFoundingPlan)
			require.NoError(t, err)
			assert.Equal(t, trailKin.FoundingPlan, doc.Content)
			assert.EqualValues(t, 1, welcomeEntries(t, e, congID))
			st, err := e.Svc.Credits(ada, congID)
			require.NoError(t, err)
			assert.EqualValues(t, billing.WelcomeCredits, st.Balance)
			assert.EqualValues(t, 1, mustCount(t, e, "SELECT COUNT(*) FROM companies"), "the retry founded nothing more")
		})
	}
}

// TestFoundTakesTheNextFreeHandle: the interview's handle is a proposal;
// taken by then, the next free one is used.
func TestFoundTakesTheNextFreeHandle(t *testing.T) {
	e := servicetest.New(t)
	ada, congID := e.User(t, "ada@example.com")
	bob, _ := e.User(t, "bob@example.com")
	e.SeedCompany(t, bob, companies.CompanyInput{Name: "Trail Kin", Handle: "trail-kin"})
	f := acceptedInterview(t, e, ada, congID, models.FoundingNew, nil, trailKin)
	st, err := e.Svc.Founding.Found(context.Background(), e.Store.SystemConglomerateScope(congID), f.ID)
	require.NoError(t, err)
	require.Equal(t, models.FoundingFounded, st.State)
	live, err := e.Svc.ListCompanies(ada, congID)
	require.NoError(t, err)
	require.Len(t, live, 1)
	assert.Equal(t, "trail-kin-2", live[0].Handle)
}

// upgradeWorld is an older-generation company, ready, with credits and an
// earlier first-pass turn of its own founding, and an accepted switch
// interview for it.
type upgradeWorld struct {
	e       *servicetest.Env
	ada     context.Context
	cong    store.ConglomerateScope
	congID  string
	company models.Company
	scope   store.CompanyScope
	oldTurn models.Turn
	iv      models.FoundingInterview
}

func newUpgradeWorld(t *testing.T, temporal usecases.Options, ready bool) upgradeWorld {
	t.Helper()
	e := servicetest.NewWith(t, temporal)
	w := upgradeWorld{e: e}
	w.ada, w.congID = e.User(t, "ada@example.com")
	ctx := context.Background()
	w.cong = e.Store.SystemConglomerateScope(w.congID)
	w.company = e.SeedCompany(t, w.ada, companies.CompanyInput{Name: "Old Shop", Idea: "Sell old maps to collectors"})
	var err error
	w.scope, err = e.Store.SystemCompanyScope(ctx, w.company.ID)
	require.NoError(t, err)
	require.NoError(t, e.Store.Founding().SetCompanyGeneration(ctx, w.scope, 2))
	if ready {
		setReady(t, e, w.company.ID)
	}
	_, err = e.Svc.GrantCredits(ctx, w.cong, models.EntryAdminAdjustment, 50, "test credits")
	require.NoError(t, err)
	// Its own founding had a first pass long ago.
	w.oldTurn, err = e.Store.Turns().CreateTurn(ctx, w.scope, models.Turn{SessionID: "00000000-0000-4000-8000-000000000001", Trigger: models.TriggerFirstPass,
		Message: "First pass: you run Old Shop"}, []models.ContentBlock{{Type: models.ContentText, Text: "First pass"}})
	require.NoError(t, err)
	w.oldTurn, _, err = e.Store.Turns().FinishTurn(ctx, w.scope, w.oldTurn.ID, "", models.TurnResult{Status: models.TurnCompleted, EndedAt: time.Now().UTC()},
		models.ActivityInput{Kind: models.ActivityTurnEnded, Actor: models.ActorAgent, Summary: "The agent finished a turn"})
	require.NoError(t, err)
	id := w.company.ID
	w.iv = acceptedInterview(t, e, w.ada, w.congID, models.FoundingV3Upgrade, &id,
		models.FoundingProposal{Name: "Map Vault", Handle: "old-shop", Mission: "Old maps for collectors.", FoundingPlan: "# Founding plan: Map Vault"})
	return w
}

func (w upgradeWorld) interview(t *testing.T) models.FoundingInterview {
	t.Helper()
	f, err := w.e.Store.Founding().FoundingInterview(context.Background(), w.cong, w.iv.ID)
	require.NoError(t, err)
	return f
}

func (w upgradeWorld) firstPassTurns(t *testing.T) int64 {
	t.Helper()
	return mustCount(t, w.e, "SELECT COUNT(*) FROM turns WHERE trigger = 'first_pass' AND company_id = '"+w.company.ID+"'")
}

// TestUpgradeStartsItsFirstPass: a v3 upgrade switches the company and
// starts its first pass on the new founding plan at once when the company
// is ready: a turn of its own (the earlier founding's first pass does not
// count), recorded on the interview, and a retry of the founding step
// starts no other.
func TestUpgradeStartsItsFirstPass(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil)
	w := newUpgradeWorld(t, usecases.Options{Temporal: tmp.Client}, true)
	ctx := context.Background()

	for range 2 { // the second is a retry of the activity
		st, err := w.e.Svc.Founding.Found(ctx, w.cong, w.iv.ID)
		require.NoError(t, err)
		assert.Equal(t, models.FoundingFounded, st.State)
	}
	f := w.interview(t)
	assert.Equal(t, string(founding.FirstPassStarted), f.FirstPassStatus, "%s %s", f.FirstPassError, f.FirstPassDetail)
	require.NotNil(t, f.FirstPassTurnID)
	assert.NotEqual(t, w.oldTurn.ID, *f.FirstPassTurnID, "a turn of its own, not the first founding's")
	turn, err := w.e.Store.Turns().GetTurn(ctx, w.scope, *f.FirstPassTurnID)
	require.NoError(t, err)
	assert.Equal(t, models.TriggerFirstPass, turn.Trigger)
	assert.Contains(t, turn.Message, "First pass on the new founding plan: you run Map Vault")
	assert.Contains(t, turn.Message, "Read the document founding_plan")
	assert.EqualValues(t, 2, w.firstPassTurns(t), "the old one and the upgrade's")

	co, err := w.e.Svc.GetCompany(w.ada, w.company.ID)
	require.NoError(t, err)
	assert.Equal(t, models.CurrentCompanyGeneration, co.Generation)
	assert.Equal(t, "Map Vault", co.Name)

	// The provisioning run's call (a heal later) starts nothing more.
	require.NoError(t, w.e.Svc.Founding.StartPendingFirstPass(ctx, w.cong, w.scope))
	assert.EqualValues(t, 2, w.firstPassTurns(t))
}

// TestUpgradeFirstPassWaitsAndRecovers: an upgraded company that is not
// ready keeps its first pass pending until provisioning is, and a turn
// made just before a crash is recorded, not made again.
func TestUpgradeFirstPassWaitsAndRecovers(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil)
	w := newUpgradeWorld(t, usecases.Options{Temporal: tmp.Client}, false)
	ctx := context.Background()

	// Not ready: founded, the first pass pending.
	st, err := w.e.Svc.Founding.Found(ctx, w.cong, w.iv.ID)
	require.NoError(t, err)
	assert.Equal(t, models.FoundingFounded, st.State)
	assert.Empty(t, w.interview(t).FirstPassStatus)
	assert.EqualValues(t, 1, w.firstPassTurns(t))

	// Ready. A first-pass turn made since the upgrade (its record lost to
	// a crash) is recorded by the next try, not made again, also while
	// Temporal is down (the turn's row is its own outbox).
	setReady(t, w.e, w.company.ID)
	made, err := w.e.Store.Turns().CreateTurn(ctx, w.scope, models.Turn{SessionID: "00000000-0000-4000-8000-000000000002", Trigger: models.TriggerFirstPass,
		Message: "First pass on the new founding plan"}, []models.ContentBlock{{Type: models.ContentText, Text: "First pass"}})
	require.NoError(t, err)
	down := w.e.NewServices(t, usecases.Options{Temporal: testenv.UnreachableTemporal{Client: tmp.Client}})
	st, err = down.Founding.Found(ctx, w.cong, w.iv.ID)
	require.NoError(t, err)
	assert.Equal(t, models.FoundingFounded, st.State)
	f := w.interview(t)
	assert.Equal(t, string(founding.FirstPassStarted), f.FirstPassStatus)
	require.NotNil(t, f.FirstPassTurnID)
	assert.Equal(t, made.ID, *f.FirstPassTurnID)
	assert.EqualValues(t, 2, w.firstPassTurns(t))
}

// TestTheEntriesShareOneStart: REST's creation, create_business and the
// interview start businesses through the one start: the welcome credits
// are granted once across them, and the account's limit counts them all.
func TestTheEntriesShareOneStart(t *testing.T) {
	e := servicetest.NewWith(t, usecases.Options{FoundingLimits: founding.Limits{BusinessLimit: 3}})
	ada, congID := e.User(t, "ada@example.com")
	cong := e.Store.SystemConglomerateScope(congID)
	rest, err := e.Svc.CreateCompany(ada, congID, companies.CompanyInput{Name: "Rest Shop"})
	require.NoError(t, err)
	res, err := e.Svc.Founding.CreateBusiness(connector(t, ada, "client-1"), founding.CreateBusinessInput{Idea: "Tea for night shifts"})
	require.NoError(t, err)
	assert.False(t, res.WelcomeCreditsGranted, "REST's start had them granted")
	f := acceptedInterview(t, e, ada, congID, models.FoundingNew, nil, trailKin)
	st, err := e.Svc.Founding.Found(context.Background(), cong, f.ID)
	require.NoError(t, err)
	assert.Equal(t, models.FoundingFounded, st.State)
	assert.EqualValues(t, 1, welcomeEntries(t, e, congID))
	credits, err := e.Svc.Credits(ada, congID)
	require.NoError(t, err)
	assert.EqualValues(t, billing.WelcomeCredits, credits.Balance)

	// The fourth, by any entry, is past the limit.
	_, err = e.Svc.CreateCompany(ada, congID, companies.CompanyInput{Name: "Fourth"})
	assert.Equal(t, models.CodeBusinessLimitReached, codeOf(t, err))
	_, err = e.Svc.Founding.CreateBusiness(connector(t, ada, "client-1"), founding.CreateBusinessInput{Idea: "Bikes for couriers"})
	assert.Equal(t, models.CodeBusinessLimitReached, codeOf(t, err))
	_, err = e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: "Bikes for couriers"})
	assert.Equal(t, models.CodeBusinessLimitReached, codeOf(t, err), "opening an interview asks the same limit")
	live, err := e.Svc.ListCompanies(ada, congID)
	require.NoError(t, err)
	require.Len(t, live, 3)
	ids := []string{live[0].ID, live[1].ID, live[2].ID}
	assert.Contains(t, ids, rest.ID)
	assert.Contains(t, ids, res.Business.ID)
}
