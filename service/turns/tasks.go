package turns

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// TaskRun is a run an operator started for a task.
type TaskRun struct {
	RunID     string
	TaskID    string
	CompanyID string
	SessionID string
	Status    models.TurnStatus
}

// RunTask starts a turn that works on the task, for the operator (POST
// /admin/tasks/{task_id}/run): the credit checks are skipped (the calls
// are still charged), the company must be provisioned and not archived,
// and no turn may run for it (conflict). A pending, failed or dispatched
// task is dispatched to the run; the run moves it to running, then done or
// failed.
func (s *Service) RunTask(ctx context.Context, taskID string) (TaskRun, error) {
	admin, err := service.RequireAdmin(ctx)
	if err != nil {
		return TaskRun{}, err
	}
	if _, err := uuid.Parse(taskID); err != nil {
		return TaskRun{}, models.Errorf(models.CodeInvalidArgument, "The task id is not a UUID.").WithField("task_id")
	}
	companyID, err := s.store.Companies().TaskCompanyID(ctx, taskID)
	if errors.Is(err, models.ErrNotFound) {
		return TaskRun{}, models.Errorf(models.CodeNotFound, "Task %s does not exist.", taskID).WithField("task_id")
	}
	if err != nil {
		return TaskRun{}, err
	}
	scope, company, err := s.store.AdminCompany(ctx, admin, companyID)
	if err != nil {
		return TaskRun{}, err
	}
	if company.Status == models.CompanyArchived {
		return TaskRun{}, models.Errorf(models.CodeConflict, "The task's company is archived; its tasks no longer run.")
	}
	task, err := s.store.Companies().GetTask(ctx, scope, taskID)
	if err != nil {
		return TaskRun{}, err
	}
	switch task.Status {
	case models.TaskPending, models.TaskFailed, models.TaskDispatched:
	default:
		return TaskRun{}, models.Errorf(models.CodeConflict, "A %s task cannot be run; only pending, failed or dispatched ones.", task.Status).With("status", string(task.Status))
	}
	ac := service.AuthorizedCompany{Company: company, Scope: scope}
	if err := s.CheckTaskRun(ctx, ac, true); err != nil {
		return TaskRun{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return TaskRun{}, err
	}
	runID := id.String()
	// Dispatched before the start, so the run finds it dispatched.
	if err := s.dispatch(ctx, scope, task, runID); err != nil {
		if errors.Is(err, store.ErrTaskStatusChanged) {
			return TaskRun{}, models.Errorf(models.CodeConflict, "The task changed meanwhile; try again.")
		}
		return TaskRun{}, err
	}
	task.Status = models.TaskDispatched
	t, err := s.StartTaskRun(ctx, ac, task, runID, true)
	if err != nil {
		return TaskRun{}, err
	}
	return TaskRun{RunID: t.ID, TaskID: task.ID, CompanyID: company.ID, SessionID: t.SessionID, Status: t.Status}, nil
}

// CheckTaskRun checks, before a task is dispatched, what its run needs: a
// company that is not archived and is provisioned, a plan that allows
// agent work and, unless skipCredits (an operator's run), the minimum
// balance to start a turn (insufficient_credits); Temporal to run it; and
// no turn of the company running now (conflict with its turn_id: a
// company runs one turn at a time).
func (s *Service) CheckTaskRun(ctx context.Context, ac service.AuthorizedCompany, skipCredits bool) error {
	if ac.Status == models.CompanyArchived {
		return models.Errorf(models.CodeConflict, "The task's company is archived; its tasks no longer run.")
	}
	if err := s.canWork(ctx, ac, skipCredits); err != nil {
		return err
	}
	if s.temporal == nil {
		return models.Errorf(models.CodeUpstreamUnavailable, "Agent runs are not available on this server.")
	}
	// The start refuses too (the rows' unique index); this check keeps the
	// task from being dispatched to a run that cannot start.
	t, err := s.store.Turns().LatestTurn(ctx, ac.Scope, true)
	switch {
	case err == nil:
		return models.Errorf(models.CodeConflict, "A turn of %s's agent is running; dispatch the task once it has ended.", ac.Name).With("turn_id", t.ID)
	case !errors.Is(err, models.ErrNotFound):
		return err
	}
	return nil
}

// StartTaskRun starts the run runID that works on a task just moved to
// dispatched (the task's last_run_id): a turn through the same start as a
// message's, with the credit check at its start unless skipCredits. When
// it cannot start, the task ends failed with the reason (the lifecycle's
// "dispatched → failed: the run could not start") and the error is
// returned.
func (s *Service) StartTaskRun(ctx context.Context, ac service.AuthorizedCompany, task models.Task, runID string, skipCredits bool) (models.Turn, error) {
	message := "Work on this task: " + task.Title
	if d := strings.TrimSpace(task.Description); d != "" {
		message += "\n\n" + d
	}
	t := models.Turn{ID: runID, SessionID: uuid.NewString(), Trigger: models.TriggerTask, TaskID: &task.ID, Message: message, SkipCreditCheck: skipCredits}
	t, err := s.start(ctx, ac, t, message)
	if err != nil {
		reason := "The run could not start."
		var de *models.Error
		if errors.As(err, &de) {
			reason = "The run could not start: " + de.Detail
		}
		if _, ferr := s.store.Companies().UpdateTask(context.WithoutCancel(ctx), ac.Scope, task.ID, models.TaskDispatched, models.TaskChanges{Status: new(models.TaskFailed), FailureReason: &reason},
			models.ActivityInput{Kind: models.ActivityTaskUpdated, Actor: models.ActorSystem, Summary: "Task run did not start"}); ferr != nil {
			s.logger.WarnContext(ctx, "task run: failing the task of a run that did not start", "task", task.ID, "error", ferr)
		}
		return t, err
	}
	return t, nil
}

// dispatch hands the task to the run (a failed task is first given back,
// as the lifecycle says: failed → pending → dispatched).
func (s *Service) dispatch(ctx context.Context, scope store.CompanyScope, task models.Task, runID string) error {
	ev := func(summary string) models.ActivityInput {
		return models.ActivityInput{Kind: models.ActivityTaskUpdated, Actor: models.ActorSystem, Summary: summary, Data: map[string]any{"via": "admin", "run_id": runID}}
	}
	status := task.Status
	if status == models.TaskFailed {
		if _, err := s.store.Companies().UpdateTask(ctx, scope, task.ID, status, models.TaskChanges{Status: new(models.TaskPending), FailureReason: new("")}, ev("Task retried")); err != nil {
			return err
		}
		status = models.TaskPending
	}
	_, err := s.store.Companies().UpdateTask(ctx, scope, task.ID, status, models.TaskChanges{Status: new(models.TaskDispatched), LastRunID: &runID}, ev("Task dispatched to a run"))
	return err
}
