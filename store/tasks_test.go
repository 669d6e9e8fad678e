package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

func newTask(t *testing.T, s *store.Store, c store.CompanyScope, title string) models.Task {
	t.Helper()
	task, err := s.Companies().CreateTask(context.Background(), c, models.Task{Title: title, Status: models.TaskPending,
		Priority: models.TaskPriorityNormal, CreatedBy: models.ActorUser},
		models.ActivityInput{Kind: models.ActivityTaskCreated, Actor: models.ActorUser, Summary: "Task created"})
	require.NoError(t, err)
	return task
}

func taskEvents(t *testing.T, s *store.Store, c store.CompanyScope, kind models.ActivityKind) []models.ActivityEvent {
	t.Helper()
	events, err := s.Companies().ListActivity(context.Background(), c, models.ActivityCursor{}, 100)
	require.NoError(t, err)
	var out []models.ActivityEvent
	for _, e := range events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// Tasks are reached only with their company's scope: another company's
// scope does not see, change or delete them; each change records its
// event.
func TestTasksAreScopedAndRecordEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	co := newCompany(t, s, "tasks")
	other := newCompany(t, s, "others")
	a := newTask(t, s, co, "first")
	b := newTask(t, s, co, "second")
	newTask(t, s, other, "not yours")

	owner, err := s.Companies().TaskCompanyID(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, co.ID(), owner)
	_, err = s.Companies().TaskCompanyID(ctx, "00000000-0000-4000-8000-000000000000")
	assert.ErrorIs(t, err, models.ErrNotFound)

	_, err = s.Companies().GetTask(ctx, other, a.ID)
	assert.ErrorIs(t, err, models.ErrNotFound, "another company's scope does not reach the task")
	_, err = s.Companies().UpdateTask(ctx, other, a.ID, models.TaskPending, models.TaskChanges{Title: new("stolen")}, models.ActivityInput{Kind: models.ActivityTaskUpdated})
	assert.ErrorIs(t, err, models.ErrNotFound)
	_, err = s.Companies().DeleteTask(ctx, other, a.ID, models.TaskPending, models.ActivityInput{Kind: models.ActivityTaskDeleted})
	assert.ErrorIs(t, err, models.ErrNotFound)
	_, err = s.Companies().GetTask(ctx, store.CompanyScope{}, a.ID)
	assert.ErrorIs(t, err, store.ErrNoScope)

	list, total, err := s.Companies().ListTasks(ctx, co, nil, 10)
	require.NoError(t, err)
	assert.Equal(t, int64(2), total)
	require.Len(t, list, 2)
	assert.Equal(t, []string{b.ID, a.ID}, []string{list[0].ID, list[1].ID}, "newest first")

	list, total, err = s.Companies().ListTasks(ctx, co, nil, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(2), total, "the total counts past the limit")
	assert.Len(t, list, 1)

	st := models.TaskDispatched
	got, err := s.Companies().UpdateTask(ctx, co, a.ID, models.TaskPending, models.TaskChanges{Status: &st, Title: new("first, renamed")},
		models.ActivityInput{Kind: models.ActivityTaskUpdated, Actor: models.ActorAgent, Summary: "Task updated"})
	require.NoError(t, err)
	assert.Equal(t, models.TaskDispatched, got.Status)
	assert.Equal(t, "first, renamed", got.Title)
	assert.False(t, got.UpdatedAt.Before(got.CreatedAt))

	list, _, err = s.Companies().ListTasks(ctx, co, []models.TaskStatus{models.TaskDispatched, models.TaskRunning}, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, a.ID, list[0].ID)

	open, err := s.Companies().OpenTasks(ctx, co, 10)
	require.NoError(t, err)
	assert.Len(t, open, 2)
	done := models.TaskCancelled
	_, err = s.Companies().UpdateTask(ctx, co, b.ID, models.TaskPending, models.TaskChanges{Status: &done}, models.ActivityInput{Kind: models.ActivityTaskUpdated})
	require.NoError(t, err)
	open, err = s.Companies().OpenTasks(ctx, co, 10)
	require.NoError(t, err)
	require.Len(t, open, 1, "a cancelled task is not open")
	assert.Equal(t, a.ID, open[0].ID)

	deleted, err := s.Companies().DeleteTask(ctx, co, a.ID, models.TaskDispatched, models.ActivityInput{Kind: models.ActivityTaskDeleted, Summary: "Task deleted"})
	require.NoError(t, err)
	assert.Empty(t, deleted.ID)
	_, err = s.Companies().GetTask(ctx, co, a.ID)
	assert.ErrorIs(t, err, models.ErrNotFound)

	assert.Len(t, taskEvents(t, s, co, models.ActivityTaskCreated), 2)
	updates := taskEvents(t, s, co, models.ActivityTaskUpdated)
	require.Len(t, updates, 2)
	assert.Contains(t, updates[1].Data, `"previous_status":"pending"`)
	require.Len(t, taskEvents(t, s, co, models.ActivityTaskDeleted), 1)
	assert.Equal(t, a.ID, taskEvents(t, s, co, models.ActivityTaskDeleted)[0].Subject)
	assert.Len(t, taskEvents(t, s, other, models.ActivityTaskUpdated), 0, "the failed attempts recorded nothing")
}

// A conditional change that lost the race answers ErrTaskStatusChanged
// with the task as it is, and records nothing.
func TestTaskChangeFromAStaleStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	co := newCompany(t, s, "stale")
	a := newTask(t, s, co, "task")
	st := models.TaskRunning
	got, err := s.Companies().UpdateTask(ctx, co, a.ID, models.TaskDispatched, models.TaskChanges{Status: &st}, models.ActivityInput{Kind: models.ActivityTaskUpdated})
	assert.ErrorIs(t, err, store.ErrTaskStatusChanged)
	assert.Equal(t, models.TaskPending, got.Status)
	got, err = s.Companies().DeleteTask(ctx, co, a.ID, models.TaskFailed, models.ActivityInput{Kind: models.ActivityTaskDeleted})
	assert.ErrorIs(t, err, store.ErrTaskStatusChanged)
	assert.Equal(t, models.TaskPending, got.Status)
	assert.Empty(t, taskEvents(t, s, co, models.ActivityTaskUpdated))
	assert.Empty(t, taskEvents(t, s, co, models.ActivityTaskDeleted))
}

// Many changes race from the same status: exactly one wins, the others
// see the winner's status, and exactly one event is recorded. Runs on
// SQLite and, with TEST_DATABASE_URL, on Postgres.
func TestRacingTaskTransitionsOneWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	co := newCompany(t, s, "race")
	for round := range 3 {
		task := newTask(t, s, co, "raced")
		const racers = 12
		var (
			wg           sync.WaitGroup
			mu           sync.Mutex
			wins, losses int
			other        []error
		)
		start := make(chan struct{})
		for i := range racers {
			wg.Go(func() {
				<-start
				var err error
				if round == 2 && i%2 == 0 {
					// Half delete, half cancel: still one winner.
					_, err = s.Companies().DeleteTask(ctx, co, task.ID, models.TaskPending, models.ActivityInput{Kind: models.ActivityTaskDeleted})
				} else {
					to := []models.TaskStatus{models.TaskDispatched, models.TaskCancelled}[i%2]
					_, err = s.Companies().UpdateTask(ctx, co, task.ID, models.TaskPending, models.TaskChanges{Status: &to},
						models.ActivityInput{Kind: models.ActivityTaskUpdated, Subject: task.ID})
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, store.ErrTaskStatusChanged), errors.Is(err, models.ErrNotFound):
					losses++
				default:
					other = append(other, err)
				}
			})
		}
		close(start)
		wg.Wait()
		require.Empty(t, other)
		assert.Equal(t, 1, wins, "round %d: exactly one change wins", round)
		assert.Equal(t, racers-1, losses)
	}
	events := append(taskEvents(t, s, co, models.ActivityTaskUpdated), taskEvents(t, s, co, models.ActivityTaskDeleted)...)
	assert.Len(t, events, 3, "one event per round: the losers recorded nothing")
}
