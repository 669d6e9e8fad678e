package tasks_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/service/tasks"
	"holdco/service/usecases"
)

func codeOf(t *testing.T, err error) models.ErrorCode {
	t.Helper()
	var de *models.Error
	require.ErrorAs(t, err, &de, "want a domain error, got %v", err)
	return de.Code
}

const missingID = "00000000-0000-4000-8000-000000000000"

type world struct {
	e        *servicetest.Env
	ada, bob context.Context
	agent    context.Context // ada's company key
	admin    context.Context
	adaCo    string
	bobCo    string
	svc      *tasks.Service
	runs     *runs
}

func newWorld(t *testing.T, opts usecases.Options) *world {
	r, _ := opts.TaskRuns.(*runs)
	if r == nil {
		r = &runs{}
		opts.TaskRuns = r
	}
	e := servicetest.NewWith(t, opts)
	ada, adaCong := e.User(t, "ada@example.com")
	bob, bobCong := e.User(t, "bob@example.com")
	co, err := e.Svc.CreateCompany(ada, adaCong, companies.CompanyInput{Name: "Ada Tasks"})
	require.NoError(t, err)
	bco, err := e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Bob Tasks"})
	require.NoError(t, err)
	key, err := e.Svc.CompanyAPIKey(ada, co.ID)
	require.NoError(t, err)
	raw, err := e.Svc.CreateAdminToken(context.Background(), "ops")
	require.NoError(t, err)
	return &world{e: e, ada: ada, bob: bob, agent: e.As(t, key.Key), admin: e.As(t, raw), adaCo: co.ID, bobCo: bco.ID, svc: e.Svc.Tasks, runs: r}
}

func status(s models.TaskStatus) *models.TaskStatus { return &s }

func TestTaskRulesAndOwnership(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	ctx := w.ada
	due := time.Date(2031, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	task, err := w.svc.Create(ctx, w.adaCo, tasks.CreateInput{Title: "  Write the launch post  ", Description: "# Plan\n\n- one\r\n\t- two\n", DueAt: &due})
	require.NoError(t, err)
	assert.Equal(t, "Write the launch post", task.Title, "surrounding spaces are trimmed")
	assert.Equal(t, models.TaskPending, task.Status)
	assert.Equal(t, models.TaskPriorityNormal, task.Priority)
	assert.Equal(t, models.ActorUser, task.CreatedBy)
	require.NotNil(t, task.DueAt)
	assert.True(t, due.Equal(*task.DueAt))

	// The company key acts as the company's agents.
	agentTask, err := w.svc.Create(w.agent, w.adaCo, tasks.CreateInput{Title: "Research competitors", Priority: models.TaskPriorityHigh})
	require.NoError(t, err)
	assert.Equal(t, models.ActorAgent, agentTask.CreatedBy)
	got, err := w.svc.Get(w.agent, task.ID)
	require.NoError(t, err)
	assert.Equal(t, task.Description, got.Description)

	// Bad input is refused before anything is stored.
	for name, in := range map[string]tasks.CreateInput{
		"empty title":          {Title: "   "},
		"title too long":       {Title: strings.Repeat("é", models.MaxTaskTitleLen+1)},
		"newline in title":     {Title: "a\nb"},
		"NUL in description":   {Title: "a", Description: "x\x00y"},
		"escape in desc":       {Title: "a", Description: "x\x1by"},
		"description too long": {Title: "a", Description: strings.Repeat("é", models.MaxTaskDescriptionLen+1)},
		"unknown priority":     {Title: "a", Priority: "asap"},
		"zero due date":        {Title: "a", DueAt: &time.Time{}},
	} {
		_, err := w.svc.Create(ctx, w.adaCo, in)
		assert.Equal(t, models.CodeInvalidArgument, codeOf(t, err), name)
	}
	_, err = w.svc.Create(ctx, w.adaCo, tasks.CreateInput{Title: strings.Repeat("é", models.MaxTaskTitleLen), Description: strings.Repeat("é", models.MaxTaskDescriptionLen)})
	require.NoError(t, err, "exactly the limits are fine")
	_, err = w.svc.List(ctx, w.adaCo, tasks.ListInput{Statuses: []models.TaskStatus{"open"}})
	assert.Equal(t, models.CodeInvalidArgument, codeOf(t, err))
	_, err = w.svc.Update(ctx, task.ID, tasks.UpdateInput{Status: status("started")})
	assert.Equal(t, models.CodeInvalidArgument, codeOf(t, err))

	// Ownership: another account is 403, a missing task 404, the other
	// company's key 403, no credential 401.
	_, err = w.svc.Get(w.bob, task.ID)
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))
	_, err = w.svc.Update(w.bob, task.ID, tasks.UpdateInput{Title: new("mine")})
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))
	assert.Equal(t, models.CodeForbidden, codeOf(t, w.svc.Delete(w.bob, task.ID)))
	_, err = w.svc.Create(w.bob, w.adaCo, tasks.CreateInput{Title: "x"})
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))
	_, err = w.svc.List(w.bob, w.adaCo, tasks.ListInput{})
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))
	_, err = w.svc.Get(ctx, missingID)
	assert.Equal(t, models.CodeNotFound, codeOf(t, err))
	assert.Equal(t, models.CodeNotFound, codeOf(t, w.svc.Delete(ctx, missingID)))
	_, err = w.svc.Get(context.Background(), task.ID)
	assert.Equal(t, models.CodeUnauthenticated, codeOf(t, err))
	_, err = w.svc.Get(w.admin, task.ID)
	assert.Equal(t, models.CodeForbidden, codeOf(t, err), "the operator uses the admin use cases")
	_, err = w.svc.AdminGet(ctx, task.ID)
	assert.Equal(t, models.CodeForbidden, codeOf(t, err), "the admin use cases need the admin credential")

	list, err := w.svc.List(ctx, w.adaCo, tasks.ListInput{})
	require.NoError(t, err)
	assert.Len(t, list.Tasks, 3)
	assert.Equal(t, int64(3), list.Total)
	list, err = w.svc.List(ctx, w.adaCo, tasks.ListInput{Statuses: []models.TaskStatus{models.TaskDone, models.TaskDone}})
	require.NoError(t, err)
	assert.Empty(t, list.Tasks)
}

func TestTaskLifecycleThroughUpdate(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	ctx := w.agent
	task, err := w.svc.Create(w.ada, w.adaCo, tasks.CreateInput{Title: "Ship it"})
	require.NoError(t, err)

	// pending → running skips dispatched: conflict, with the status.
	_, err = w.svc.Update(ctx, task.ID, tasks.UpdateInput{Status: status(models.TaskRunning)})
	var de *models.Error
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeConflict, de.Code)
	assert.Equal(t, "pending", de.Extra["status"])
	assert.Contains(t, de.Detail, "dispatched, cancelled")

	// A failure reason goes only with failed.
	_, err = w.svc.Update(ctx, task.ID, tasks.UpdateInput{FailureReason: new("nope")})
	assert.Equal(t, models.CodeInvalidArgument, codeOf(t, err))

	for _, to := range []models.TaskStatus{models.TaskDispatched, models.TaskRunning} {
		task, err = w.svc.Update(ctx, task.ID, tasks.UpdateInput{Status: status(to)})
		require.NoError(t, err)
		assert.Equal(t, to, task.Status)
	}
	// Running tasks are not deleted.
	err = w.svc.Delete(w.ada, task.ID)
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeConflict, de.Code)
	assert.Equal(t, "running", de.Extra["status"])

	task, err = w.svc.Update(ctx, task.ID, tasks.UpdateInput{Status: status(models.TaskFailed), FailureReason: new("  the site did not build  ")})
	require.NoError(t, err)
	assert.Equal(t, "the site did not build", task.FailureReason)
	// Retry: failed → pending clears the reason; edits are fine while not final.
	task, err = w.svc.Update(w.ada, task.ID, tasks.UpdateInput{Status: status(models.TaskPending), Title: new("Ship it again"), Priority: new(models.TaskPriorityUrgent)})
	require.NoError(t, err)
	assert.Equal(t, models.TaskPending, task.Status)
	assert.Empty(t, task.FailureReason)
	assert.Equal(t, "Ship it again", task.Title)
	assert.Equal(t, models.TaskPriorityUrgent, task.Priority)

	// The same status is no move; an empty update changes nothing.
	same, err := w.svc.Update(ctx, task.ID, tasks.UpdateInput{Status: status(models.TaskPending)})
	require.NoError(t, err)
	assert.Equal(t, task.UpdatedAt, same.UpdatedAt)

	for _, to := range []models.TaskStatus{models.TaskDispatched, models.TaskRunning, models.TaskDone} {
		task, err = w.svc.Update(ctx, task.ID, tasks.UpdateInput{Status: status(to)})
		require.NoError(t, err)
	}
	// done is final: no moves, no edits, no delete.
	_, err = w.svc.Update(w.ada, task.ID, tasks.UpdateInput{Status: status(models.TaskPending)})
	require.ErrorAs(t, err, &de)
	assert.Equal(t, models.CodeConflict, de.Code)
	assert.Contains(t, de.Detail, "final")
	_, err = w.svc.Update(w.ada, task.ID, tasks.UpdateInput{Title: new("late edit")})
	assert.Equal(t, models.CodeConflict, codeOf(t, err))
	assert.Equal(t, models.CodeConflict, codeOf(t, w.svc.Delete(w.ada, task.ID)))

	// Deletable: pending, dispatched, failed.
	for _, path := range [][]models.TaskStatus{{}, {models.TaskDispatched}, {models.TaskDispatched, models.TaskFailed}} {
		d, err := w.svc.Create(w.ada, w.adaCo, tasks.CreateInput{Title: "to delete"})
		require.NoError(t, err)
		for _, to := range path {
			_, err = w.svc.Update(ctx, d.ID, tasks.UpdateInput{Status: status(to)})
			require.NoError(t, err)
		}
		require.NoError(t, w.svc.Delete(ctx, d.ID))
		_, err = w.svc.Get(ctx, d.ID)
		assert.Equal(t, models.CodeNotFound, codeOf(t, err))
	}
	c, err := w.svc.Create(w.ada, w.adaCo, tasks.CreateInput{Title: "cancelled"})
	require.NoError(t, err)
	_, err = w.svc.Update(w.ada, c.ID, tasks.UpdateInput{Status: status(models.TaskCancelled)})
	require.NoError(t, err)
	assert.Equal(t, models.CodeConflict, codeOf(t, w.svc.Delete(w.ada, c.ID)))

	// Every change is in the activity feed, with who made it.
	events, err := w.e.Svc.Activity(w.ada, w.adaCo, companies.ActivityInput{})
	require.NoError(t, err)
	kinds := map[models.ActivityKind]int{}
	for _, e := range events.Events {
		kinds[e.Kind]++
		if e.Kind == models.ActivityTaskUpdated && e.Subject == task.ID && strings.Contains(e.Summary, "running → done") {
			assert.Equal(t, models.ActorAgent, e.Actor)
		}
	}
	assert.Equal(t, 5, kinds[models.ActivityTaskCreated])
	assert.Equal(t, 3, kinds[models.ActivityTaskDeleted])
	assert.Equal(t, 11, kinds[models.ActivityTaskUpdated], "7 moves of the task, 3 before deletes, 1 cancel")
}

// runs stands in for the turn use cases: it records the run checks (with
// whether the credit check was skipped) and the runs started, and refuses
// without credits when told to.
type runs struct {
	mu        sync.Mutex
	checks    []bool // skipCredits of each check
	started   []string
	noCredits bool
	failStart bool
}

func (r *runs) CheckTaskRun(_ context.Context, c service.AuthorizedCompany, skipCredits bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks = append(r.checks, skipCredits)
	if r.noCredits && !skipCredits {
		return models.Errorf(models.CodeInsufficientCredits, "Company %s needs credits to run a task.", c.ID)
	}
	return nil
}

func (r *runs) StartTaskRun(_ context.Context, _ service.AuthorizedCompany, task models.Task, runID string, _ bool) (models.Turn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failStart {
		return models.Turn{}, models.Errorf(models.CodeUpstreamUnavailable, "The turn could not be started; retry shortly.")
	}
	r.started = append(r.started, task.ID+"/"+runID)
	return models.Turn{ID: runID}, nil
}

// The admin use cases: any company, the same lifecycle, the credit check
// of a dispatch skipped (the run still starts).
func TestAdminTasksSkipTheDispatchGate(t *testing.T) {
	r := &runs{noCredits: true}
	w := newWorld(t, usecases.Options{TaskRuns: r})
	task, err := w.svc.AdminCreate(w.admin, w.bobCo, tasks.CreateInput{Title: "Operator's task"})
	require.NoError(t, err)
	assert.Equal(t, models.ActorSystem, task.CreatedBy)
	_, err = w.svc.Get(w.bob, task.ID)
	require.NoError(t, err, "the owner sees the operator's task")

	_, err = w.svc.Update(w.bob, task.ID, tasks.UpdateInput{Status: status(models.TaskDispatched)})
	assert.Equal(t, models.CodeInsufficientCredits, codeOf(t, err), "the credit gate decides for the owner")
	assert.Equal(t, []bool{false}, r.checks)
	assert.Empty(t, r.started, "nothing started, nothing changed")
	task, err = w.svc.AdminUpdate(w.admin, task.ID, tasks.UpdateInput{Status: status(models.TaskDispatched)})
	require.NoError(t, err, "the operator skips the credit check")
	assert.Equal(t, models.TaskDispatched, task.Status)
	assert.Equal(t, []bool{false, true}, r.checks)
	require.NotNil(t, task.LastRunID)
	assert.Equal(t, []string{task.ID + "/" + *task.LastRunID}, r.started, "its run started")
	_, err = w.svc.AdminUpdate(w.admin, task.ID, tasks.UpdateInput{Status: status(models.TaskDone)})
	assert.Equal(t, models.CodeConflict, codeOf(t, err), "but not the lifecycle")

	list, err := w.svc.AdminList(w.admin, w.bobCo, tasks.ListInput{Statuses: []models.TaskStatus{models.TaskDispatched}})
	require.NoError(t, err)
	require.Len(t, list.Tasks, 1)
	got, err := w.svc.AdminGet(w.admin, task.ID)
	require.NoError(t, err)
	assert.Equal(t, task.ID, got.ID)
	_, err = w.svc.AdminGet(w.admin, missingID)
	assert.Equal(t, models.CodeNotFound, codeOf(t, err))
	_, err = w.svc.AdminList(w.admin, missingID, tasks.ListInput{})
	assert.Equal(t, models.CodeNotFound, codeOf(t, err))
	_, err = w.svc.AdminCreate(w.ada, w.adaCo, tasks.CreateInput{Title: "x"})
	assert.Equal(t, models.CodeForbidden, codeOf(t, err))
	require.NoError(t, w.svc.AdminDelete(w.admin, task.ID))
	assert.Equal(t, models.CodeNotFound, codeOf(t, w.svc.AdminDelete(w.admin, task.ID)))

	// Archived companies: gone for their owner, readable by the operator,
	// closed to new tasks.
	kept, err := w.svc.Create(w.ada, w.adaCo, tasks.CreateInput{Title: "before archive"})
	require.NoError(t, err)
	require.NoError(t, w.e.Svc.ArchiveCompany(w.ada, w.adaCo))
	_, err = w.svc.Get(w.ada, kept.ID)
	assert.Equal(t, models.CodeNotFound, codeOf(t, err))
	_, err = w.svc.AdminGet(w.admin, kept.ID)
	require.NoError(t, err)
	_, err = w.svc.AdminCreate(w.admin, w.adaCo, tasks.CreateInput{Title: "after archive"})
	assert.Equal(t, models.CodeConflict, codeOf(t, err))
}

// Racing use cases on one task: exactly one move from pending wins; the
// others are refused with conflict (the winner's status no longer allows
// their move) or succeed as the same-status no-op.
func TestRacingUpdatesThroughTheUseCase(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	task, err := w.svc.Create(w.ada, w.adaCo, tasks.CreateInput{Title: "raced"})
	require.NoError(t, err)
	const racers = 10
	var wg sync.WaitGroup
	results := make([]error, racers)
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			_, results[i] = w.svc.Update(w.agent, task.ID, tasks.UpdateInput{Status: status(models.TaskCancelled)})
		})
	}
	close(start)
	wg.Wait()
	final, err := w.svc.Get(w.ada, task.ID)
	require.NoError(t, err)
	assert.Equal(t, models.TaskCancelled, final.Status)
	for _, err := range results {
		if err != nil {
			assert.Equal(t, models.CodeConflict, codeOf(t, err))
		}
	}
	events, err := w.e.Svc.Activity(w.ada, w.adaCo, companies.ActivityInput{})
	require.NoError(t, err)
	n := 0
	for _, e := range events.Events {
		if e.Kind == models.ActivityTaskUpdated {
			n++
		}
	}
	assert.Equal(t, 1, n, "one move, one event")
}

// A move to dispatched starts the task's run, named by the task's
// last_run_id; a run that cannot start is the answer's error.
func TestDispatchStartsTheRun(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	task, err := w.svc.Create(w.ada, w.adaCo, tasks.CreateInput{Title: "Run me"})
	require.NoError(t, err)
	task, err = w.svc.Update(w.ada, task.ID, tasks.UpdateInput{Status: status(models.TaskDispatched)})
	require.NoError(t, err)
	require.NotNil(t, task.LastRunID)
	assert.Equal(t, []string{task.ID + "/" + *task.LastRunID}, w.runs.started)
	assert.Equal(t, []bool{false}, w.runs.checks, "the owner's dispatch goes through the credit check")

	w.runs.failStart = true
	other, err := w.svc.Create(w.ada, w.adaCo, tasks.CreateInput{Title: "Run me too"})
	require.NoError(t, err)
	_, err = w.svc.Update(w.agent, other.ID, tasks.UpdateInput{Status: status(models.TaskDispatched)})
	assert.Equal(t, models.CodeUpstreamUnavailable, codeOf(t, err))
}
