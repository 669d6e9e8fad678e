package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

func TestDocumentsOverREST(t *testing.T) {
	w := newWorld(t)
	base := "/companies/" + w.adaCo + "/documents/"

	var doc map[string]any
	w.call(http.MethodPut, base+"founding_plan", userA, `{"content":"# Plan\n\n- sell tea"}`, http.StatusOK, &doc)
	assert.Equal(t, "Founding plan", doc["title"])
	assert.Equal(t, "visible", doc["visibility"])
	assert.EqualValues(t, 1, doc["revision"])
	w.call(http.MethodPut, base+"founding_plan", company, `{"content":"v2","title":"The plan"}`, http.StatusOK, &doc)
	assert.EqualValues(t, 2, doc["revision"])
	assert.Equal(t, "agent", doc["updated_by"])

	// Too large: 413 with the numbers, and nothing changed.
	big, _ := json.Marshal(map[string]string{"content": strings.Repeat("x", models.MaxDocumentBytes+1)})
	rec := w.do(http.MethodPut, base+"founding_plan", userA, string(big))
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code, rec.Body.String())
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.Equal(t, "too_large", body["error"])
	assert.EqualValues(t, models.MaxDocumentBytes, body["limit_bytes"])
	w.call(http.MethodGet, base+"founding_plan", userA, "", http.StatusOK, &doc)
	assert.Equal(t, "v2", doc["content"])

	// Bad types and text: 422 with a useful body.
	for _, tc := range []struct{ path, body string }{
		{base + "Founding", `{"content":"x"}`},
		{base + url.PathEscape("a b"), `{"content":"x"}`},
		{base + strings.Repeat("a", 65), `{"content":"x"}`},
		{base + "brand", `{"content":"a\u0000b"}`},
		{base + "brand", `{"content":"x","title":"two\nlines"}`},
		{base + "brand", `{"content":"x","visibility":"public"}`},
		{base + "brand", `{}`},
	} {
		rec := w.do(http.MethodPut, tc.path, userA, tc.body)
		assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s %s: %s", tc.path, tc.body, rec.Body.String())
	}
	w.call(http.MethodGet, base+"brand", userA, "", http.StatusNotFound, nil)

	var list map[string][]map[string]any
	w.call(http.MethodPut, base+"agent_memory", company, `{"content":"remember"}`, http.StatusOK, nil)
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/documents", userA, "", http.StatusOK, &list)
	require.Len(t, list["documents"], 1, "internal documents are not listed")
	assert.NotContains(t, list["documents"][0], "content")

	w.call(http.MethodDelete, base+"founding_plan", userA, "", http.StatusNoContent, nil)
	w.call(http.MethodDelete, base+"founding_plan", userA, "", http.StatusNotFound, nil)
}

func TestActivityAndDashboardOverREST(t *testing.T) {
	w := newWorld(t)
	co := "/companies/" + w.adaCo
	for _, typ := range []string{"mission", "strategy", "brand"} {
		w.call(http.MethodPut, co+"/documents/"+typ, userA, `{"content":"x"}`, http.StatusOK, nil)
	}
	var page struct {
		Events []map[string]any `json:"events"`
		Next   *struct {
			Before   string `json:"before"`
			BeforeID string `json:"before_id"`
		} `json:"next"`
	}
	w.call(http.MethodGet, co+"/activity?limit=2", userA, "", http.StatusOK, &page)
	require.Len(t, page.Events, 2)
	require.NotNil(t, page.Next)
	assert.Equal(t, "document_updated", page.Events[0]["kind"])
	next := co + "/activity?limit=2&before=" + url.QueryEscape(page.Next.Before) + "&before_id=" + page.Next.BeforeID
	w.call(http.MethodGet, next, userA, "", http.StatusOK, &page)
	require.Len(t, page.Events, 2, "one more document and the company's creation")
	assert.Equal(t, "company_created", page.Events[1]["kind"])
	assert.Nil(t, page.Next)

	for _, q := range []string{"limit=0", "limit=101", "before=yesterday", "before_id=nope&before=2026-01-01T00:00:00Z"} {
		rec := w.do(http.MethodGet, co+"/activity?"+q, userA, "")
		assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, q+": "+rec.Body.String())
	}

	var dash map[string]any
	w.call(http.MethodGet, co+"/dashboard", userA, "", http.StatusOK, &dash)
	for _, section := range []string{"company", "resources", "credits", "recent_activity", "documents", "milestones", "files", "inbox", "revenue", "open_tasks"} {
		assert.NotNil(t, dash[section], section)
	}
	assert.Equal(t, "30d", dash["analytics"].(map[string]any)["range"], "the analytics headline")
	for _, later := range []string{"last_turn", "domain", "ads"} { // no turn yet
		v, ok := dash[later]
		assert.True(t, ok, later+" is present")
		assert.Nil(t, v, later+" is null until its capability exists")
	}
	assert.Len(t, dash["documents"], 3)
	assert.Equal(t, false, dash["documents_more"])
	rec := w.do(http.MethodGet, co+"/dashboard", userA, "")
	assert.Equal(t, strconv.Itoa(rec.Body.Len()), rec.Header().Get("Content-Length"), "the answer is written whole, with its length")
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))

	var ms map[string]any
	w.call(http.MethodGet, co+"/milestones", userA, "", http.StatusOK, &ms)
	assert.Equal(t, "first_dollar", ms["next_goal"].(map[string]any)["kind"])
	assert.Empty(t, ms["achieved"])
	w.call(http.MethodPost, co+"/milestones/seen", userA, "", http.StatusOK, &ms)
	assert.EqualValues(t, 0, ms["marked"])
}

// The access log names the route and the ids in the path, never text a
// caller typed into it.
func TestAccessLogHoldsNoTypedPathText(t *testing.T) {
	w := newWorld(t)
	w.call(http.MethodPut, "/companies/"+w.adaCo+"/documents/secret-plan-xyz", userA, `{"content":"x"}`, http.StatusOK, nil)
	w.do(http.MethodGet, "/no-such-route/typed-by-someone", userA, "")
	logs := w.logs.String()
	assert.Contains(t, logs, "route=/companies/:company_id/documents/:document_type")
	assert.Contains(t, logs, "company_id="+w.adaCo)
	assert.NotContains(t, logs, "secret-plan-xyz")
	assert.NotContains(t, logs, "typed-by-someone")
}
