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
	companyID, err := s.store.TaskCompanyID(ctx, taskID)
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
	task, err := s.store.GetTask(ctx, scope, taskID)
	if err != nil {
		return TaskRun{}, err
	}
	switch task.Status {
	case models.TaskPending, models.TaskFailed, models.TaskDispatched:
	default:
		return TaskRun{}, models.Errorf(models.CodeConflict, "A %s task cannot be run; only pending, failed or dispatched ones.", task.Status).With("status", string(task.Status))
	}
	ac := service.AuthorizedCompany{Company: company, Scope: scope}
	if err := s.canWork(ctx, ac, true); err != nil {
		return TaskRun{}, err
	}
	message := "Work on this task: " + task.Title
	if d := strings.TrimSpace(task.Description); d != "" {
		message += "\n\n" + d
	}
	id, err := uuid.NewV7()
	if err != nil {
		return TaskRun{}, err
	}
	t := models.Turn{ID: id.String(), SessionID: uuid.NewString(), Trigger: models.TriggerTask, TaskID: &task.ID, Message: message, SkipCreditCheck: true}
	// Dispatched before the start, so the run finds it dispatched.
	if err := s.dispatch(ctx, scope, task, t.ID); err != nil {
		if errors.Is(err, store.ErrTaskStatusChanged) {
			return TaskRun{}, models.Errorf(models.CodeConflict, "The task changed meanwhile; try again.")
		}
		return TaskRun{}, err
	}
	if t, err = s.start(ctx, ac, t, message); err != nil {
		reason := "The run could not start."
		var de *models.Error
		if errors.As(err, &de) {
			reason = "The run could not start: " + de.Detail
		}
		if _, ferr := s.store.UpdateTask(context.WithoutCancel(ctx), scope, task.ID, models.TaskDispatched, models.TaskChanges{Status: new(models.TaskFailed), FailureReason: &reason},
			models.ActivityInput{Kind: models.ActivityTaskUpdated, Actor: models.ActorSystem, Summary: "Task run did not start"}); ferr != nil {
			s.logger.WarnContext(ctx, "task run: failing the task of a run that did not start", "task", task.ID, "error", ferr)
		}
		return TaskRun{}, err
	}
	return TaskRun{RunID: t.ID, TaskID: task.ID, CompanyID: company.ID, SessionID: t.SessionID, Status: t.Status}, nil
}

// dispatch hands the task to the run (a failed task is first given back,
// as the lifecycle says: failed → pending → dispatched).
func (s *Service) dispatch(ctx context.Context, scope store.CompanyScope, task models.Task, runID string) error {
	ev := func(summary string) models.ActivityInput {
		return models.ActivityInput{Kind: models.ActivityTaskUpdated, Actor: models.ActorSystem, Summary: summary, Data: map[string]any{"via": "admin", "run_id": runID}}
	}
	status := task.Status
	if status == models.TaskFailed {
		if _, err := s.store.UpdateTask(ctx, scope, task.ID, status, models.TaskChanges{Status: new(models.TaskPending), FailureReason: new("")}, ev("Task retried")); err != nil {
			return err
		}
		status = models.TaskPending
	}
	_, err := s.store.UpdateTask(ctx, scope, task.ID, status, models.TaskChanges{Status: new(models.TaskDispatched), LastRunID: &runID}, ev("Task dispatched to a run"))
	return err
}
