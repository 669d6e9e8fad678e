package founding_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows/contract"
)

// asker is an interviewer that never proposes: every call asks another
// question. It counts its calls (each one a model call someone pays for).
type asker struct{ calls int }

func (a *asker) Complete(context.Context, models.ModelRequest, func(string)) (models.ModelResponse, error) {
	a.calls++
	return models.ModelResponse{Content: []models.ContentBlock{{Type: models.ContentText, Text: fmt.Sprintf("Question %d: tell me more?", a.calls)}}}, nil
}

// TestInterviewEndsAtTheAnswerCap: the interviewer's model calls are free
// to the founder (docs/founding.md), so an interview is bounded: after
// MaxFoundingAnswers answers without a proposal it ends rejected, and the
// model is not called again.
func TestInterviewEndsAtTheAnswerCap(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil)
	e := servicetest.NewWith(t, usecases.Options{Temporal: testenv.UnreachableTemporal{Client: tmp.Client}})
	ada, congID := e.User(t, "ada@example.com")
	iv, err := e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: "Guided hiking maps for families"})
	require.NoError(t, err)
	ctx := context.Background()
	cong := e.Store.SystemConglomerateScope(congID)
	svc, model := e.Svc.Founding, &asker{}
	for seq := 1; seq <= contract.MaxFoundingAnswers; seq++ {
		st, err := svc.RunSegment(ctx, cong, iv.ID, model)
		require.NoError(t, err, seq)
		require.True(t, st.State.Open(), "answer %d: %s", seq, st.State)
		_, err = svc.RecordAnswer(ctx, cong, iv.ID, seq, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: fmt.Sprintf("Answer %d", seq)})
		require.NoError(t, err, seq)
	}
	st, err := svc.RunSegment(ctx, cong, iv.ID, model)
	require.NoError(t, err)
	assert.Equal(t, models.FoundingRejected, st.State)
	assert.Equal(t, contract.MaxFoundingAnswers, model.calls, "no model call past the cap")
	cur, err := svc.CurrentFounding(ada)
	require.NoError(t, err)
	require.NotEmpty(t, cur.Transcript)
	assert.Contains(t, cur.Transcript[len(cur.Transcript)-1].Text, fmt.Sprintf("reached %d answers", contract.MaxFoundingAnswers))
	_, err = svc.RecordAnswer(ctx, cong, iv.ID, contract.MaxFoundingAnswers+1, contract.FoundingAnswer{Action: contract.FoundingActionAnswer, Text: "One more"})
	require.NoError(t, err)
	_, err = svc.RunSegment(ctx, cong, iv.ID, model)
	require.NoError(t, err)
	assert.Equal(t, contract.MaxFoundingAnswers, model.calls, "a closed interview calls nothing")
}

// TestInterviewsPerDayAreBounded: an account opens at most
// DefaultInterviewsPerDay interviews in 24 hours (each one's model calls
// are free), then rate_limited naming the limit; a day later it may again.
func TestInterviewsPerDayAreBounded(t *testing.T) {
	tmp := testenv.NewTemporal(t, nil)
	e := servicetest.NewWith(t, usecases.Options{Temporal: testenv.UnreachableTemporal{Client: tmp.Client}})
	ada, congID := e.User(t, "ada@example.com")
	ctx := context.Background()
	cong := e.Store.SystemConglomerateScope(congID)
	start := func(i int) error {
		iv, err := e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: fmt.Sprintf("Guided hiking maps, take %d", i)})
		if err != nil {
			return err
		}
		// The founder withdraws (the workflow's step, done here by hand:
		// this test's Temporal takes no workflow).
		_, err = e.Store.Founding().UpdateFoundingInterview(ctx, cong, iv.ID, func(f *models.FoundingInterview) error {
			f.State = models.FoundingRejected
			return nil
		})
		return err
	}
	for i := range founding.DefaultInterviewsPerDay {
		require.NoError(t, start(int(i)), i)
	}
	err := start(99)
	require.Equal(t, models.CodeRateLimited, codeOf(t, err))
	var de *models.Error
	require.True(t, errors.As(err, &de))
	assert.EqualValues(t, founding.DefaultInterviewsPerDay, de.Extra["limit"])
	assert.Contains(t, de.Detail, fmt.Sprintf("opened %d founding interviews", founding.DefaultInterviewsPerDay))

	e.Clock.Advance(24*time.Hour + time.Minute)
	require.NoError(t, start(100), "a day later the account may start again")
}
