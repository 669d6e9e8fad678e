package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// The open statuses the store's statements write out are those of the
// partial index over open tasks (migration 0040): a status added to
// models.OpenTaskStatuses needs a migration that recreates the index,
// else the dashboard's open tasks are read past it again.
func TestOpenTaskStatusesAreTheIndexs(t *testing.T) {
	assert.Equal(t, store.Migration0040OpenStatuses, store.OpenTaskStatuses)
}

// The dashboard's lists statement reads each list through an index in its
// order and sorts nothing: its work is bounded by the lists' limits, not by
// how many tasks, events or documents the company has. The open tasks come
// from migration 0040's partial index, past the company's finished tasks.
// On Postgres no branch has a projection of its own (a Subquery Scan).
func TestDashboardListsSortNothing(t *testing.T) {
	s := testenv.NewStore(t)
	ctx := context.Background()
	_, cong := signUp(t, s, "plan")
	c, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(cong.ID), models.Company{Name: "Plan", Handle: handle("plan")})
	require.NoError(t, err)
	sc := systemScope(t, s, c.ID)
	for i := range 30 {
		status := models.TaskDone
		if i%10 == 0 {
			status = models.TaskPending
		}
		_, err := s.Companies().CreateTask(ctx, sc, models.Task{Title: fmt.Sprint("task ", i), Status: status, Priority: models.TaskPriorityNormal,
			CreatedBy: models.ActorUser}, models.ActivityInput{Kind: models.ActivityTaskCreated, Actor: models.ActorUser, Summary: "Task created"})
		require.NoError(t, err)
	}
	day := time.Now().UTC().Format(time.DateOnly)
	qs, args, _ := store.DashboardStatements(s.Dialect(), c.ID, store.HeadlineDays{From: day, PrevFrom: day, To: day})
	explain := "EXPLAIN QUERY PLAN "
	if s.Dialect() == store.DialectPostgres {
		explain = "EXPLAIN "
	}
	rows, err := store.GormDB(s).WithContext(ctx).Raw(explain+qs[1], args[1]...).Rows()
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var plan strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		for i := range vals {
			vals[i] = new(any)
		}
		require.NoError(t, rows.Scan(vals...))
		for _, v := range vals {
			if b, ok := (*v.(*any)).([]byte); ok {
				*v.(*any) = string(b)
			}
			fmt.Fprintf(&plan, "%v ", *v.(*any))
		}
		plan.WriteByte('\n')
	}
	require.NoError(t, rows.Err())
	got := plan.String()
	assert.Contains(t, got, "idx_company_tasks_open", "the open tasks through their index:\n%s", got)
	for _, sort := range []string{"TEMP B-TREE", "Sort"} {
		assert.NotContains(t, got, sort, "no list is sorted:\n%s", got)
	}
	assert.NotContains(t, got, "Subquery Scan", "no branch is projected again on top of its read:\n%s", got)

	open, err := s.Companies().OpenTasks(ctx, sc, 20)
	require.NoError(t, err)
	require.Len(t, open, 3)
	assert.Equal(t, "task 20", open[0].Title, "newest first")
}
