package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

// TestFoundingAnswerTakesAHandle: the answer's body takes an optional
// handle, mapped to the use case's: refused with another action than
// accept or when the handle check would refuse it (422, at body.handle),
// taken now (409 handle_taken with suggested_handle); a free one goes on
// to the workflow (which this world has not: 502).
func TestFoundingAnswerTakesAHandle(t *testing.T) {
	w := newWorld(t)
	var me map[string]any
	w.call(http.MethodGet, "/auth/me", userA, "", http.StatusOK, &me)
	userID := me["user"].(map[string]any)["id"].(string)
	_, err := w.store.Founding().CreateFoundingInterview(context.Background(), w.store.SystemConglomerateScope(w.adaCong), models.FoundingInterview{
		UserID: userID, Kind: models.FoundingNew, State: models.FoundingReviewing, Idea: "Hand-drawn maps of lighthouses",
		Proposal:   &models.FoundingProposal{Name: "Lighthouse Maps", Handle: "lighthouse-maps", Mission: "Maps.", FoundingPlan: "# Plan"},
		Transcript: []models.FoundingEntry{{Role: models.RoleInterviewer, Kind: models.EntryProposal, Text: "I propose Lighthouse Maps."}}})
	require.NoError(t, err)
	const path = "/founding/current/answers"

	for _, body := range []string{`{"answer":"Shorter, please","handle":"maps"}`, `{"action":"withdraw","handle":"maps"}`,
		`{"action":"accept","handle":"--"}`, `{"action":"accept","handle":"a\tb"}`} {
		var refused map[string]any
		w.call(http.MethodPost, path, userA, body, http.StatusUnprocessableEntity, &refused)
		require.NotEmpty(t, refused["detail"], body)
		assert.Equal(t, []any{"body", "handle"}, refused["detail"].([]any)[0].(map[string]any)["loc"], "%s: %v", body, refused)
	}
	var taken map[string]any
	w.call(http.MethodPost, path, userA, `{"action":"accept","handle":"Ada Shop"}`, http.StatusConflict, &taken)
	assert.Equal(t, "handle_taken", taken["error"])
	assert.Equal(t, "ada-shop-2", taken["suggested_handle"])
	var down map[string]any
	w.call(http.MethodPost, path, userA, `{"action":"accept","handle":"Lighthouse Prints"}`, http.StatusBadGateway, &down)
	assert.Equal(t, "upstream_unavailable", down["error"], "a free handle passes the checks")

	var cur map[string]any
	w.call(http.MethodGet, "/founding/current", userA, "", http.StatusOK, &cur)
	assert.Equal(t, "reviewing", cur["state"], "the refused answers changed nothing")
	assert.Equal(t, "lighthouse-maps", cur["proposal"].(map[string]any)["handle"])
}
