package founding_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/usecases"
	"holdco/testenv"
)

// proposingModel proposes a company with the given mission.
type proposingModel struct{ mission string }

func (m proposingModel) Complete(context.Context, models.ModelRequest, func(string)) (models.ModelResponse, error) {
	in, _ := json.Marshal(models.ProposeCompanyInput{Name: "Trail Kin", Handle: "trail-kin", Mission: m.mission, FoundingPlan: "# Plan\n\nWalk."})
	return models.ModelResponse{Content: []models.ContentBlock{{Type: models.ContentToolUse, ToolUseID: "t1", ToolName: models.ToolProposeCompany, Input: in}},
		StopReason: models.StopToolUse}, nil
}

// TestProposedMissionIsCutAtAWordBoundary: a mission longer than the
// limit ends with a whole word and an ellipsis, never in the middle of a
// word.
func TestProposedMissionIsCutAtAWordBoundary(t *testing.T) {
	e := servicetest.NewWith(t, usecases.Options{Temporal: testenv.UnreachableTemporal{}})
	ada, congID := e.User(t, "ada@example.com")
	iv, err := e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: "Guided hiking maps for families"})
	require.NoError(t, err)
	// 2,000 characters fall inside "wonderful" (each word is "wonderful " or
	// "maps ").
	var b strings.Builder
	for i := 0; b.Len() < 2600; i++ {
		if i%2 == 0 {
			b.WriteString("wonderful ")
		} else {
			b.WriteString("maps ")
		}
	}
	long := b.String()
	_, err = e.Svc.Founding.RunSegment(context.Background(), e.Store.SystemConglomerateScope(congID), iv.ID, proposingModel{mission: long})
	require.NoError(t, err)
	cur, err := e.Svc.Founding.CurrentFounding(ada)
	require.NoError(t, err)
	require.NotNil(t, cur.Proposal)
	m := cur.Proposal.Mission
	assert.LessOrEqual(t, utf8.RuneCountInString(m), 2000)
	require.True(t, strings.HasSuffix(m, "…"), "marked as cut: %q", m[len(m)-20:])
	body := strings.TrimSuffix(m, "…")
	assert.True(t, strings.HasPrefix(long, body), "a prefix of the mission")
	words := strings.Fields(body)
	last := words[len(words)-1]
	assert.Contains(t, []string{"wonderful", "maps"}, last, "ends with a whole word")
	assert.Greater(t, utf8.RuneCountInString(m), 1900, "keeps nearly all of it")

	// A short mission is kept as it is.
	assert.Equal(t, "Maps for families who hike.", cutMissionVia(t, "  Maps for families who hike.  "))
}

// cutMissionVia proposes mission in a new interview and returns what was
// stored.
func cutMissionVia(t *testing.T, mission string) string {
	t.Helper()
	e := servicetest.NewWith(t, usecases.Options{Temporal: testenv.UnreachableTemporal{}})
	ada, congID := e.User(t, "bob@example.com")
	iv, err := e.Svc.Founding.StartFounding(ada, founding.StartInput{Idea: "Guided hiking maps for families"})
	require.NoError(t, err)
	_, err = e.Svc.Founding.RunSegment(context.Background(), e.Store.SystemConglomerateScope(congID), iv.ID, proposingModel{mission: mission})
	require.NoError(t, err)
	cur, err := e.Svc.Founding.CurrentFounding(ada)
	require.NoError(t, err)
	require.NotNil(t, cur.Proposal)
	return cur.Proposal.Mission
}
