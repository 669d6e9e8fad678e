package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/usecases"
)

// startedRuns stands in for the turn use cases behind a task's move to
// dispatched (their own tests run real turns): every run may start.
type startedRuns struct{}

func (startedRuns) CheckTaskRun(context.Context, service.AuthorizedCompany, bool) error { return nil }

func (startedRuns) StartTaskRun(_ context.Context, _ service.AuthorizedCompany, _ models.Task, runID string, _ bool) (models.Turn, error) {
	return models.Turn{ID: runID}, nil
}

func TestTasksOverREST(t *testing.T) {
	w := newWorldWith(t, usecases.Options{TaskRuns: startedRuns{}})
	base := "/companies/" + w.adaCo + "/tasks"

	var task map[string]any
	w.call(http.MethodPost, base, userA, `{"title":"Launch the site","description":"# Steps\n\n1. build\r\n\t2. ship","due_at":"2031-01-02T03:04:05+01:00"}`, http.StatusCreated, &task)
	id := task["id"].(string)
	assert.Equal(t, "pending", task["status"])
	assert.Equal(t, "normal", task["priority"])
	assert.Equal(t, "user", task["created_by"])
	assert.Equal(t, "2031-01-02T02:04:05Z", task["due_at"])
	assert.Nil(t, task["failure_reason"])
	assert.Nil(t, task["last_run_id"])
	assert.Equal(t, w.adaCo, task["company_id"])

	var agentTask map[string]any
	w.call(http.MethodPost, base, company, `{"title":"Research","priority":"low"}`, http.StatusCreated, &agentTask)
	assert.Equal(t, "agent", agentTask["created_by"], "the company key acts as the agents")

	// The lifecycle through PUT: pending → dispatched → running → failed → pending.
	for _, st := range []string{"dispatched", "running"} {
		w.call(http.MethodPut, "/tasks/"+id, company, `{"status":"`+st+`"}`, http.StatusOK, &task)
		assert.Equal(t, st, task["status"])
	}
	// Running: no delete, 409 with the status.
	rec := w.do(http.MethodDelete, "/tasks/"+id, userA, "")
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	var body map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.Equal(t, "conflict", body["error"])
	assert.Equal(t, "running", body["status"])
	// A move the lifecycle does not allow: 409 with the status.
	rec = w.do(http.MethodPut, "/tasks/"+id, userA, `{"status":"pending"}`)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
	assert.Equal(t, "running", body["status"])

	w.call(http.MethodPut, "/tasks/"+id, company, `{"status":"failed","failure_reason":"The build broke."}`, http.StatusOK, &task)
	assert.Equal(t, "The build broke.", task["failure_reason"])
	w.call(http.MethodPut, "/tasks/"+id, userA, `{"status":"pending","title":"Launch the site, again","clear_due_at":true}`, http.StatusOK, &task)
	assert.Nil(t, task["failure_reason"], "a retry clears the reason")
	assert.Nil(t, task["due_at"])
	assert.Equal(t, "Launch the site, again", task["title"])

	// Lists: newest first, filtered by repeated status.
	var list map[string]any
	w.call(http.MethodGet, base, userA, "", http.StatusOK, &list)
	assert.EqualValues(t, 2, list["total"])
	tasks := list["tasks"].([]any)
	require.Len(t, tasks, 2)
	assert.Equal(t, agentTask["id"], tasks[0].(map[string]any)["id"])
	w.call(http.MethodPut, "/tasks/"+agentTask["id"].(string), userA, `{"status":"cancelled"}`, http.StatusOK, nil)
	w.call(http.MethodGet, base+"?status=pending&status=dispatched", userA, "", http.StatusOK, &list)
	require.Len(t, list["tasks"], 1)
	assert.Equal(t, id, list["tasks"].([]any)[0].(map[string]any)["id"])
	w.call(http.MethodGet, base+"?status=cancelled", userA, "", http.StatusOK, &list)
	require.Len(t, list["tasks"], 1)

	// Bad input: 422.
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, base, `{}`},
		{http.MethodPost, base, `{"title":""}`},
		{http.MethodPost, base, `{"title":"two\nlines"}`},
		{http.MethodPost, base, `{"title":"` + strings.Repeat("a", 201) + `"}`},
		{http.MethodPost, base, `{"title":"a","description":"` + strings.Repeat("a", 20001) + `"}`},
		{http.MethodPost, base, `{"title":"a","description":"nul\u0000"}`},
		{http.MethodPost, base, `{"title":"a","priority":"asap"}`},
		{http.MethodPut, "/tasks/" + id, `{"status":"started"}`},
		{http.MethodPut, "/tasks/" + id, `{"failure_reason":"not failed"}`},
		{http.MethodGet, base + "?status=open", ``},
		{http.MethodGet, "/tasks/not-a-uuid", ``},
	} {
		rec := w.do(tc.method, tc.path, userA, tc.body)
		assert.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s %s %s: %s", tc.method, tc.path, tc.body, rec.Body.String())
	}

	// Ownership: bob's credentials 403, missing 404.
	w.call(http.MethodGet, "/tasks/"+id, userB, "", http.StatusForbidden, nil)
	w.call(http.MethodPut, "/tasks/"+id, companyB, `{"title":"mine"}`, http.StatusForbidden, nil)
	w.call(http.MethodGet, "/tasks/"+missingID, userA, "", http.StatusNotFound, nil)

	// Delete a pending task: 204, then 404; the feed has every change.
	w.call(http.MethodDelete, "/tasks/"+id, userA, "", http.StatusNoContent, nil)
	w.call(http.MethodGet, "/tasks/"+id, userA, "", http.StatusNotFound, nil)
	var feed map[string][]map[string]any
	w.call(http.MethodGet, "/companies/"+w.adaCo+"/activity?limit=100", userA, "", http.StatusOK, &feed)
	kinds := map[string]int{}
	for _, e := range feed["events"] {
		kinds[e["kind"].(string)]++
	}
	assert.Equal(t, 2, kinds["task_created"])
	assert.Equal(t, 5, kinds["task_updated"])
	assert.Equal(t, 1, kinds["task_deleted"])
}

func TestAdminTasksOverREST(t *testing.T) {
	w := newWorldWith(t, usecases.Options{TaskRuns: startedRuns{}})
	var task map[string]any
	w.call(http.MethodPost, "/admin/companies/"+w.bobCo+"/tasks", admin, `{"title":"Operator task","priority":"urgent"}`, http.StatusCreated, &task)
	id := task["id"].(string)
	assert.Equal(t, "system", task["created_by"])
	w.call(http.MethodGet, "/tasks/"+id, userB, "", http.StatusOK, nil)

	var list map[string]any
	w.call(http.MethodGet, "/admin/companies/"+w.bobCo+"/tasks?status=pending", admin, "", http.StatusOK, &list)
	require.Len(t, list["tasks"], 1)
	w.call(http.MethodGet, "/admin/companies/"+w.bobCo+"/tasks?status=done", admin, "", http.StatusOK, &list)
	assert.Empty(t, list["tasks"])

	w.call(http.MethodPut, "/admin/tasks/"+id, admin, `{"status":"dispatched"}`, http.StatusOK, &task)
	assert.Equal(t, "dispatched", task["status"])
	w.call(http.MethodPut, "/admin/tasks/"+id, admin, `{"status":"done"}`, http.StatusConflict, nil)
	w.call(http.MethodGet, "/admin/tasks/"+id, admin, "", http.StatusOK, &task)
	assert.Equal(t, "dispatched", task["status"])
	w.call(http.MethodPut, "/admin/tasks/"+id, admin, `{"status":"running"}`, http.StatusOK, nil)
	w.call(http.MethodDelete, "/admin/tasks/"+id, admin, "", http.StatusConflict, nil)
	w.call(http.MethodPut, "/admin/tasks/"+id, admin, `{"status":"failed"}`, http.StatusOK, nil)
	w.call(http.MethodDelete, "/admin/tasks/"+id, admin, "", http.StatusNoContent, nil)
	w.call(http.MethodGet, "/admin/tasks/"+id, admin, "", http.StatusNotFound, nil)
	w.call(http.MethodGet, "/admin/tasks/"+id, userB, "", http.StatusForbidden, nil)
}
