package founding_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/llm/scripted"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// TestInterviewStepsAreIdempotent plays the workflow's activities by hand,
// each twice as a retry after a crash would: nothing is stored twice, the
// company is founded once with its plan and the welcome credits, and the
// first pass waits for provisioning.
func TestInterviewStepsAreIdempotent(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil)
	e := servicetest.NewWith(t, usecases.Options{Temporal: testenv.UnreachableTemporal{Client: tmp.Client}})
	ada, congID := e.User(t, "ada@example.com")
	iv, err := e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: "Guided hiking maps for families"})
	require.NoError(t, err)
	ctx := context.Background()
	cong := e.Store.SystemConglomerateScope(congID)
	svc, model := e.Svc.Founding, scripted.New(0)
	segment := func(state models.FoundingState) {
		t.Helper()
		for range 2 {
			st, err := svc.RunSegment(ctx, cong, iv.ID, model)
			require.NoError(t, err)
			assert.Equal(t, state, st.State)
			assert.False(t, st.Busy)
		}
	}
	answer := func(seq int, a contract.FoundingAnswer) {
		t.Helper()
		for range 2 {
			st, err := svc.RecordAnswer(ctx, cong, iv.ID, seq, a)
			require.NoError(t, err)
			assert.Equal(t, seq, st.Answers)
		}
	}
	segment(models.FoundingNaming)
	answer(1, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "Trail Kin"})
	segment(models.FoundingShaping)
	answer(2, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "Families who hike"})
	segment(models.FoundingReviewing)
	answer(3, contract.FoundingAnswer{Action: contract.FoundingActionAccept})
	for range 2 {
		st, err := svc.Found(ctx, cong, iv.ID)
		require.NoError(t, err)
		assert.Equal(t, models.FoundingFounded, st.State)
	}
	cur, err := svc.CurrentFounding(ada)
	require.NoError(t, err)
	require.NotNil(t, cur.CompanyID)
	assert.Len(t, cur.Transcript, 8, "idea, 3 questions and answers…: %+v", cur.Transcript)
	assert.False(t, cur.SegmentLive)
	live, err := e.Svc.ListCompanies(ada, congID)
	require.NoError(t, err)
	require.Len(t, live, 1)
	assert.Equal(t, "trail-kin", live[0].Handle)
	assert.EqualValues(t, 1, welcomeEntries(t, e, congID))
	doc, err := e.Svc.Documents.Get(ada, *cur.CompanyID, models.DocFoundingPlan)
	require.NoError(t, err)
	assert.Contains(t, doc.Content, "# Founding plan: Trail Kin")

	// The first pass waits for provisioning; once ready it is taken while
	// Temporal does not answer (its turn queued, for the turn sweeper) and
	// recorded, once.
	scope, err := e.Store.SystemCompanyScope(ctx, *cur.CompanyID)
	require.NoError(t, err)
	require.NoError(t, svc.StartPendingFirstPass(ctx, cong, scope))
	cur, err = svc.CurrentFounding(ada)
	require.NoError(t, err)
	assert.Empty(t, cur.FirstPassStatus, "not ready: pending")
	setReady(t, e, *cur.CompanyID)
	require.NoError(t, svc.StartPendingFirstPass(ctx, cong, scope))
	require.NoError(t, svc.StartPendingFirstPass(ctx, cong, scope))
	cur, err = svc.CurrentFounding(ada)
	require.NoError(t, err)
	assert.Equal(t, string(founding.FirstPassStarted), cur.FirstPassStatus)
	assert.EqualValues(t, 1, mustCount(t, e, "SELECT COUNT(*) FROM turns WHERE trigger = 'first_pass' AND company_id = '"+*cur.CompanyID+"'"))
	// Another account's scope is refused.
	_, bobCong := e.User(t, "bob@example.com")
	require.Error(t, svc.StartPendingFirstPass(ctx, e.Store.SystemConglomerateScope(bobCong), scope))
}
