package activities_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"holdco/activities"
	"holdco/models"
	"holdco/providers/llm/scripted"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// refusingModel fails as a misconfigured provider does.
type refusingModel struct{}

func (refusingModel) Complete(context.Context, models.ModelRequest, func(string)) (models.ModelResponse, error) {
	return models.ModelResponse{}, &models.ModelCallError{Kind: models.ModelAuth, Status: 401, Detail: "bad key"}
}

// The founding activities play an interview as its workflow does:
// interviewer segments, the founder's answers, the founding; a model that
// refuses the request fails the segment for good (ErrInterviewerFailed),
// and a rejected interview ends rejected.
func TestFoundingActivities(t *testing.T) {
	// No workflow starts: the interview's row is what the activities work
	// on (the founding sweeper would start the workflow).
	e := servicetest.NewWith(t, usecases.Options{Temporal: testenv.UnreachableTemporal{}})
	ada, cong := e.User(t, "ada@example.com")
	iv, err := e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: "Guided hiking maps for families"})
	require.NoError(t, err)
	acts := &activities.Founding{Store: e.Store, Founding: e.Svc.Founding, Model: scripted.New(0)}
	ref := contract.InterviewRef{InterviewID: iv.ID, ConglomerateID: cong}
	status := func(v interface{ Get(any) error }, err error) contract.FoundingStatus {
		t.Helper()
		require.NoError(t, err)
		var st contract.FoundingStatus
		require.NoError(t, v.Get(&st))
		return st
	}
	segment := func() contract.FoundingStatus {
		return status(activityEnv(acts).ExecuteActivity(acts.InterviewSegment, ref))
	}
	answer := func(seq int, a contract.FoundingAnswer) contract.FoundingStatus {
		return status(activityEnv(acts).ExecuteActivity(acts.RecordAnswer, contract.RecordAnswerInput{InterviewRef: ref, Seq: seq, Answer: a}))
	}
	assert.Equal(t, models.FoundingNaming, segment().State)
	assert.Equal(t, 1, answer(1, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "Trail Kin"}).Answers)
	assert.Equal(t, models.FoundingShaping, segment().State)
	answer(2, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "Families who hike"})
	assert.Equal(t, models.FoundingReviewing, segment().State)
	answer(3, contract.FoundingAnswer{Action: contract.FoundingActionAccept})
	assert.Equal(t, models.FoundingFounded, status(activityEnv(acts).ExecuteActivity(acts.Found, ref)).State)
	live, err := e.Svc.ListCompanies(ada, cong)
	require.NoError(t, err)
	require.Len(t, live, 1)
	assert.Equal(t, "trail-kin", live[0].Handle)

	bob, bobCong := e.User(t, "bob@example.com")
	iv, err = e.Svc.Founding.StartFounding(bob, founding.StartInput{Idea: "Bicycle repair at home"})
	require.NoError(t, err)
	ref = contract.InterviewRef{InterviewID: iv.ID, ConglomerateID: bobCong}
	refusing := &activities.Founding{Store: e.Store, Founding: e.Svc.Founding, Model: refusingModel{}}
	_, err = activityEnv(refusing).ExecuteActivity(refusing.InterviewSegment, ref)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, contract.ErrInterviewerFailed, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	st := status(activityEnv(acts).ExecuteActivity(acts.RejectInterview, contract.RejectInput{InterviewRef: ref, Reason: "The interviewer failed."}))
	assert.Equal(t, models.FoundingRejected, st.State)
}
