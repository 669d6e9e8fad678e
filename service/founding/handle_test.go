package founding_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"holdco/activities"
	"holdco/models"
	"holdco/providers/llm/scripted"
	"holdco/service/companies"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// reviewingInterview stores an open interview of the user behind ctx
// showing its proposal (state reviewing), as the interviewer leaves it.
func reviewingInterview(t *testing.T, e *servicetest.Env, ctx context.Context, cong string, kind models.FoundingKind, companyID *string, p models.FoundingProposal) models.FoundingInterview {
	t.Helper()
	f := acceptedInterview(t, e, ctx, cong, kind, companyID, p)
	f, err := e.Store.Founding().UpdateFoundingInterview(context.Background(), e.Store.SystemConglomerateScope(cong), f.ID, func(f *models.FoundingInterview) error {
		f.State, f.SegmentRunning = models.FoundingReviewing, false
		f.Transcript = []models.FoundingEntry{{Role: models.RoleInterviewer, Kind: models.EntryProposal, Text: "I propose Trail Kin (trail-kin)."}}
		return nil
	})
	require.NoError(t, err)
	return f
}

// TestAnswerRefusesABadHandleAndChangesNothing: a handle the handle check
// refuses, a handle with another action than accept, a handle on an
// upgrade and a handle taken now are refused before the workflow hears
// of them, on field handle, and the interview is as it was.
func TestAnswerRefusesABadHandleAndChangesNothing(t *testing.T) {
	e := servicetest.New(t)
	ada, congID := e.User(t, "ada@example.com")
	bob, _ := e.User(t, "bob@example.com")
	e.SeedCompany(t, bob, companies.CompanyInput{Name: "Kin Trails", Handle: "kin-trails"})
	f := reviewingInterview(t, e, ada, congID, models.FoundingNew, nil, trailKin)

	for _, c := range []struct {
		name string
		in   founding.AnswerInput
		code models.ErrorCode
	}{
		{"no letter or digit", founding.AnswerInput{Action: contract.FoundingActionAccept, Handle: "--- !"}, models.CodeInvalidArgument},
		{"not one line", founding.AnswerInput{Action: contract.FoundingActionAccept, Handle: "trail\nkin"}, models.CodeInvalidArgument},
		{"too long", founding.AnswerInput{Action: contract.FoundingActionAccept, Handle: strings.Repeat("a", 201)}, models.CodeInvalidArgument},
		{"with an answer", founding.AnswerInput{Action: contract.FoundingActionAnswer, Text: "Make it shorter", Handle: "trail-kin"}, models.CodeInvalidArgument},
		{"with the default action", founding.AnswerInput{Text: "Make it shorter", Handle: "trail-kin"}, models.CodeInvalidArgument},
		{"with withdraw", founding.AnswerInput{Action: contract.FoundingActionWithdraw, Handle: "trail-kin"}, models.CodeInvalidArgument},
		{"taken now", founding.AnswerInput{Action: contract.FoundingActionAccept, Handle: "Kin Trails"}, models.CodeHandleTaken},
	} {
		_, err := e.Svc.Founding.Answer(ada, c.in)
		var de *models.Error
		require.ErrorAs(t, err, &de, c.name)
		assert.Equal(t, c.code, de.Code, "%s: %v", c.name, err)
		assert.Equal(t, "handle", de.Field, c.name)
		if c.code == models.CodeHandleTaken {
			assert.Equal(t, "kin-trails-2", de.Extra["suggested_handle"])
		}
	}
	got, err := e.Store.Founding().FoundingInterview(context.Background(), e.Store.SystemConglomerateScope(congID), f.ID)
	require.NoError(t, err)
	assert.Equal(t, models.FoundingReviewing, got.State)
	assert.Equal(t, f.Transcript, got.Transcript, "nothing recorded")
	assert.Equal(t, "trail-kin", got.Proposal.Handle)

	// An upgrade keeps its company's handle.
	carol, carolCong := e.User(t, "carol@example.com")
	co := e.SeedCompany(t, carol, companies.CompanyInput{Name: "Carol Maps"})
	reviewingInterview(t, e, carol, carolCong, models.FoundingV3Upgrade, &co.ID, trailKin)
	_, err = e.Svc.Founding.Answer(carol, founding.AnswerInput{Action: contract.FoundingActionAccept, Handle: "carol-new"})
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeInvalidArgument, de.Code)
	assert.Equal(t, "handle", de.Field)
}

// TestChosenHandleTakenBeforeFoundingTakesTheNextFree: the founder's
// handle replaces the proposal's when the accept is recorded; taken by
// someone else before the founding step, the next free one is used, as
// for a proposal's, and the transcript names it.
func TestChosenHandleTakenBeforeFoundingTakesTheNextFree(t *testing.T) {
	e := servicetest.New(t)
	ada, congID := e.User(t, "ada@example.com")
	bob, _ := e.User(t, "bob@example.com")
	f := reviewingInterview(t, e, ada, congID, models.FoundingNew, nil, trailKin)
	ctx := context.Background()
	cong := e.Store.SystemConglomerateScope(congID)

	for range 2 { // the second is the activity's retry
		st, err := e.Svc.Founding.RecordAnswer(ctx, cong, f.ID, 1, contract.FoundingAnswer{Action: contract.FoundingActionAccept, Handle: "kin-trails"})
		require.NoError(t, err)
		assert.Equal(t, models.FoundingFounding, st.State)
	}
	got, err := e.Store.Founding().FoundingInterview(ctx, cong, f.ID)
	require.NoError(t, err)
	assert.Equal(t, "kin-trails", got.Proposal.Handle)
	assert.Equal(t, "Found it with the handle kin-trails.", got.Transcript[len(got.Transcript)-1].Text)

	e.SeedCompany(t, bob, companies.CompanyInput{Name: "Kin Trails", Handle: "kin-trails"})
	st, err := e.Svc.Founding.Found(ctx, cong, f.ID)
	require.NoError(t, err)
	require.Equal(t, models.FoundingFounded, st.State)
	live, err := e.Svc.ListCompanies(ada, congID)
	require.NoError(t, err)
	require.Len(t, live, 1)
	assert.Equal(t, "kin-trails-2", live[0].Handle)
	got, err = e.Store.Founding().FoundingInterview(ctx, cong, f.ID)
	require.NoError(t, err)
	assert.Equal(t, "Founded Trail Kin (kin-trails-2).", got.Transcript[len(got.Transcript)-1].Text)
}

// TestAcceptWithAChosenHandleFoundsWithIt runs the interview's workflow
// on the scripted interviewer: the founder answers, then accepts the
// proposal with a handle of their own (typed as a name, normalized as
// the handle check does), and the company is founded with it.
func TestAcceptWithAChosenHandleFoundsWithIt(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil)
	e := servicetest.NewWith(t, usecases.Options{Temporal: tmp.Client})
	tmp.Server.NewWorker(contract.TaskQueue, func(r worker.Registry) {
		workflows.RegisterFounding(r, &activities.Founding{Store: e.Store, Founding: e.Svc.Founding, Model: scripted.New(0)})
	})
	ada, congID := e.User(t, "ada@example.com")
	_, err := e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: "Guided hiking maps for families"})
	require.NoError(t, err)
	idle := func() founding.Interview {
		t.Helper()
		var iv founding.Interview
		require.Eventually(t, func() bool {
			iv, err = e.Svc.Founding.CurrentFounding(ada)
			return err == nil && !iv.SegmentRunning
		}, testenv.EventualBound, 50*time.Millisecond)
		return iv
	}
	for _, text := range []string{"Trail Kin", "Families who hike"} {
		idle()
		_, err = e.Svc.Founding.Answer(ada, founding.AnswerInput{Text: text})
		require.NoError(t, err)
	}
	iv := idle()
	require.Equal(t, models.FoundingReviewing, iv.State)
	require.Equal(t, "trail-kin", iv.Proposal.Handle)

	_, err = e.Svc.Founding.Answer(ada, founding.AnswerInput{Action: contract.FoundingActionAccept, Handle: "Kin Trails"})
	require.NoError(t, err)
	iv = idle()
	require.Equal(t, models.FoundingFounded, iv.State, "%+v", iv.Transcript)
	require.NotNil(t, iv.CompanyID)
	co, err := e.Svc.GetCompany(ada, *iv.CompanyID)
	require.NoError(t, err)
	assert.Equal(t, "kin-trails", co.Handle, "the founder's handle, not the proposal's")
	assert.Equal(t, "Trail Kin", co.Name)
	live, err := e.Svc.ListCompanies(ada, congID)
	require.NoError(t, err)
	assert.Len(t, live, 1)
}
