// Package tasks holds the use cases of a company's tasks: work for the
// company's agents with a lifecycle (models.CanTransition). REST, the
// agents' task tools and the connector call these functions with typed
// inputs, so the rules — limits, the lifecycle, which statuses may be
// deleted, the activity event of every change — live only here.
//
// A task is addressed by its id: the use case reads the task's company id,
// authorizes that company (a task of another account is 403, a missing one
// 404) and reads the task with the scope the authorization step gave.
package tasks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// Runs starts the agent run of a dispatched task (service/turns builds
// it; every process that builds the tasks use cases passes it). A move to
// dispatched is a run starting: CheckTaskRun is asked first (the company
// provisioned, the plan, the credit gate unless skipCredits — the
// operator's paths — and no turn running) and refuses with nothing
// changed; after the move, StartTaskRun starts the turn, or ends the task
// failed with the reason when it cannot start.
type Runs interface {
	CheckTaskRun(ctx context.Context, company service.AuthorizedCompany, skipCredits bool) error
	StartTaskRun(ctx context.Context, company service.AuthorizedCompany, task models.Task, runID string, skipCredits bool) (models.Turn, error)
}

// Options are the dependencies besides the core.
type Options struct {
	// Runs starts the runs of dispatched tasks; nil refuses every move
	// to dispatched (upstream_unavailable), never lets it pass unchecked.
	Runs Runs
}

// Service is the tasks use cases.
type Service struct {
	core  *service.Core
	store *store.Store
	runs  Runs
}

// New builds the tasks use cases on core.
func New(core *service.Core, opts Options) *Service {
	return &Service{core: core, store: core.Store(), runs: opts.Runs}
}

// CreateInput is a new task. It starts pending.
type CreateInput struct {
	// Title is one line of 1 to 200 characters (surrounding spaces are
	// trimmed).
	Title string
	// Description is Markdown of at most 20,000 characters, several lines.
	Description string
	// Priority defaults to normal.
	Priority models.TaskPriority
	DueAt    *time.Time
}

// ListInput selects tasks.
type ListInput struct {
	// Statuses keeps tasks in any of these statuses; none keeps all.
	Statuses []models.TaskStatus
}

// List is a page of tasks, newest first, and how many matched in all
// (more than len(Tasks) when the list was cut at models.MaxTaskList).
type List struct {
	Tasks []models.Task
	Total int64
}

// UpdateInput changes a task; nil fields stay as they are.
type UpdateInput struct {
	Title       *string
	Description *string
	Priority    *models.TaskPriority
	// Status moves the task through the lifecycle; a move the lifecycle
	// does not allow is conflict (409). The same status is no move.
	Status *models.TaskStatus
	DueAt  *time.Time
	// ClearDueAt removes the due date.
	ClearDueAt bool
	// FailureReason is kept with a move to failed (at most 1,000
	// characters; longer is cut). Leaving failed clears it.
	FailureReason *string
}

// target is a task's company as the caller reaches it.
type target struct {
	company service.AuthorizedCompany
	admin   bool
}

// Create adds a pending task to the company.
func (s *Service) Create(ctx context.Context, companyID string, in CreateInput) (models.Task, error) {
	t, err := checkCreate(in)
	if err != nil {
		return models.Task{}, err
	}
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.Task{}, err
	}
	return s.create(ctx, target{company: c}, t)
}

// List returns the company's tasks in the given statuses, newest first, at
// most models.MaxTaskList of them.
func (s *Service) List(ctx context.Context, companyID string, in ListInput) (List, error) {
	statuses, err := checkStatuses(in.Statuses)
	if err != nil {
		return List{}, err
	}
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return List{}, err
	}
	return s.list(ctx, c.Scope, statuses)
}

// Get returns a task.
func (s *Service) Get(ctx context.Context, taskID string) (models.Task, error) {
	tg, err := s.authorizeTask(ctx, taskID)
	if err != nil {
		return models.Task{}, err
	}
	return s.get(ctx, tg, taskID)
}

// Update changes a task; status changes go through the lifecycle and a
// move to dispatched through the dispatch gate.
func (s *Service) Update(ctx context.Context, taskID string, in UpdateInput) (models.Task, error) {
	if err := checkUpdate(in); err != nil {
		return models.Task{}, err
	}
	tg, err := s.authorizeTask(ctx, taskID)
	if err != nil {
		return models.Task{}, err
	}
	return s.update(ctx, tg, taskID, in)
}

// Delete deletes a task; only pending, dispatched and failed tasks may be
// deleted (anything else is conflict, with the task's status).
func (s *Service) Delete(ctx context.Context, taskID string) error {
	tg, err := s.authorizeTask(ctx, taskID)
	if err != nil {
		return err
	}
	return s.delete(ctx, tg, taskID)
}

// AdminCreate is Create for the operator: any company that is not
// archived.
func (s *Service) AdminCreate(ctx context.Context, companyID string, in CreateInput) (models.Task, error) {
	t, err := checkCreate(in)
	if err != nil {
		return models.Task{}, err
	}
	tg, err := s.adminCompany(ctx, companyID)
	if err != nil {
		return models.Task{}, err
	}
	if tg.company.Status == models.CompanyArchived {
		return models.Task{}, models.Errorf(models.CodeConflict, "Company %s is archived; it takes no new tasks.", companyID)
	}
	return s.create(ctx, tg, t)
}

// AdminList is List for the operator: any company, archived ones too.
func (s *Service) AdminList(ctx context.Context, companyID string, in ListInput) (List, error) {
	statuses, err := checkStatuses(in.Statuses)
	if err != nil {
		return List{}, err
	}
	tg, err := s.adminCompany(ctx, companyID)
	if err != nil {
		return List{}, err
	}
	return s.list(ctx, tg.company.Scope, statuses)
}

// AdminGet is Get for the operator.
func (s *Service) AdminGet(ctx context.Context, taskID string) (models.Task, error) {
	tg, err := s.adminTask(ctx, taskID)
	if err != nil {
		return models.Task{}, err
	}
	return s.get(ctx, tg, taskID)
}

// AdminUpdate is Update for the operator: the same lifecycle, with the
// dispatch gate (the credit check) skipped.
func (s *Service) AdminUpdate(ctx context.Context, taskID string, in UpdateInput) (models.Task, error) {
	if err := checkUpdate(in); err != nil {
		return models.Task{}, err
	}
	tg, err := s.adminTask(ctx, taskID)
	if err != nil {
		return models.Task{}, err
	}
	return s.update(ctx, tg, taskID, in)
}

// AdminDelete is Delete for the operator (the same statuses).
func (s *Service) AdminDelete(ctx context.Context, taskID string) error {
	tg, err := s.adminTask(ctx, taskID)
	if err != nil {
		return err
	}
	return s.delete(ctx, tg, taskID)
}

// authorizeTask finds the task's company and applies the ownership rule to
// it: a missing task (or one of an archived company) is 404, one of
// another account 403.
func (s *Service) authorizeTask(ctx context.Context, taskID string) (target, error) {
	if _, ok := service.PrincipalFrom(ctx); !ok {
		return target{}, service.ErrUnauthenticated()
	}
	companyID, err := s.store.Companies().TaskCompanyID(ctx, taskID)
	if errors.Is(err, models.ErrNotFound) {
		return target{}, taskNotFound(taskID)
	}
	if err != nil {
		return target{}, err
	}
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if models.IsCode(err, models.CodeNotFound) {
		return target{}, taskNotFound(taskID)
	}
	if models.IsCode(err, models.CodeForbidden) {
		return target{}, models.Errorf(models.CodeForbidden, "Task %s belongs to another account.", taskID).Wrap(err)
	}
	if err != nil {
		return target{}, err
	}
	return target{company: c}, nil
}

func (s *Service) adminCompany(ctx context.Context, companyID string) (target, error) {
	admin, err := service.RequireAdmin(ctx)
	if err != nil {
		return target{}, err
	}
	scope, c, err := s.store.AdminCompany(ctx, admin, companyID)
	if errors.Is(err, models.ErrNotFound) {
		return target{}, models.Errorf(models.CodeNotFound, "Company %s does not exist.", companyID)
	}
	if err != nil {
		return target{}, err
	}
	return target{company: service.AuthorizedCompany{Company: c, Scope: scope}, admin: true}, nil
}

func (s *Service) adminTask(ctx context.Context, taskID string) (target, error) {
	if _, err := service.RequireAdmin(ctx); err != nil {
		return target{}, err
	}
	companyID, err := s.store.Companies().TaskCompanyID(ctx, taskID)
	if errors.Is(err, models.ErrNotFound) {
		return target{}, taskNotFound(taskID)
	}
	if err != nil {
		return target{}, err
	}
	tg, err := s.adminCompany(ctx, companyID)
	if models.IsCode(err, models.CodeNotFound) {
		return target{}, taskNotFound(taskID)
	}
	return tg, err
}

func taskNotFound(taskID string) *models.Error {
	return models.Errorf(models.CodeNotFound, "Task %s does not exist.", taskID).WithField("task_id")
}

// event is an activity event of a task change by the caller.
func event(ctx context.Context, tg target, kind models.ActivityKind, summary string) models.ActivityInput {
	e := models.ActivityInput{Kind: kind, Actor: service.ActorOf(ctx), Summary: summary}
	if tg.admin {
		e.Data = map[string]any{"via": "admin"}
	}
	return e
}

func (s *Service) create(ctx context.Context, tg target, t models.Task) (models.Task, error) {
	t.Status = models.TaskPending
	t.CreatedBy = service.ActorOf(ctx)
	if service.Keyed(ctx) {
		// An agent's call: made again after a crash, it finds its task.
		t.ID = service.EffectID(ctx, "task")
	}
	return s.store.Companies().CreateTask(ctx, tg.company.Scope, t, event(ctx, tg, models.ActivityTaskCreated, fmt.Sprintf("Task %q created", t.Title)))
}

func (s *Service) list(ctx context.Context, scope store.CompanyScope, statuses []models.TaskStatus) (List, error) {
	tasks, total, err := s.store.Companies().ListTasks(ctx, scope, statuses, models.MaxTaskList)
	if err != nil {
		return List{}, err
	}
	return List{Tasks: tasks, Total: total}, nil
}

func (s *Service) get(ctx context.Context, tg target, taskID string) (models.Task, error) {
	t, err := s.store.Companies().GetTask(ctx, tg.company.Scope, taskID)
	if errors.Is(err, models.ErrNotFound) {
		return t, taskNotFound(taskID)
	}
	return t, err
}

// maxRaces bounds how often a change is retried after another change of
// the same task won the race (a content edit meeting a status change).
const maxRaces = 3

func (s *Service) update(ctx context.Context, tg target, taskID string, in UpdateInput) (models.Task, error) {
	cur, err := s.get(ctx, tg, taskID)
	for race := 0; err == nil; race++ {
		var ch models.TaskChanges
		var summary string
		ch, summary, err = s.changes(ctx, tg, cur, in)
		if err != nil || ch == (models.TaskChanges{}) {
			return cur, err
		}
		var t models.Task
		t, err = s.store.Companies().UpdateTask(ctx, tg.company.Scope, taskID, cur.Status, ch, event(ctx, tg, models.ActivityTaskUpdated, summary))
		switch {
		case err == nil && ch.Status != nil && *ch.Status == models.TaskDispatched:
			// Dispatched: its run starts now (or the task fails with why).
			if _, err := s.runs.StartTaskRun(ctx, tg.company, t, *ch.LastRunID, tg.admin); err != nil {
				return models.Task{}, err
			}
			return s.get(ctx, tg, taskID)
		case err == nil:
			return t, nil
		case errors.Is(err, models.ErrNotFound):
			return t, taskNotFound(taskID)
		case errors.Is(err, store.ErrTaskStatusChanged) && race+1 < maxRaces:
			// Another change won: apply the rules again to the task as it
			// now is (a move it no longer allows is refused then).
			cur, err = t, nil
		case errors.Is(err, store.ErrTaskStatusChanged):
			return t, models.Errorf(models.CodeConflict, "The task kept changing meanwhile; it is now %s. Try again.", t.Status).With("status", string(t.Status))
		}
	}
	return models.Task{}, err
}

// changes applies the lifecycle to an update of cur: the fields to set and
// the event's summary, or conflict.
func (s *Service) changes(ctx context.Context, tg target, cur models.Task, in UpdateInput) (models.TaskChanges, string, error) {
	var ch models.TaskChanges
	to := cur.Status
	if in.Status != nil && *in.Status != cur.Status {
		to = *in.Status
		if !models.CanTransition(cur.Status, to) {
			next := models.NextTaskStatuses(cur.Status)
			allowed := "none: it is final"
			if len(next) > 0 {
				allowed = joinStatuses(next)
			}
			return ch, "", models.Errorf(models.CodeConflict, "A %s task cannot become %s; it may become %s.", cur.Status, to, allowed).
				WithField("status").With("status", string(cur.Status))
		}
		ch.Status = &to
	}
	edits := in.Title != nil || in.Description != nil || in.Priority != nil || in.DueAt != nil || in.ClearDueAt
	if edits && cur.Status.Final() {
		return ch, "", models.Errorf(models.CodeConflict, "The task is %s, which is final: it cannot be changed.", cur.Status).
			With("status", string(cur.Status))
	}
	if in.FailureReason != nil && to != models.TaskFailed {
		return ch, "", models.Errorf(models.CodeInvalidArgument, "A failure reason goes only with the status failed.").WithField("failure_reason")
	}
	ch.Title, ch.Description, ch.Priority, ch.DueAt, ch.ClearDueAt = in.Title, in.Description, in.Priority, in.DueAt, in.ClearDueAt
	if ch.Title != nil {
		ch.Title = new(strings.TrimSpace(*ch.Title))
	}
	if ch.DueAt != nil {
		ch.DueAt = new(ch.DueAt.UTC().Truncate(time.Microsecond))
	}
	switch {
	case in.FailureReason != nil:
		ch.FailureReason = new(cutRunes(strings.TrimSpace(*in.FailureReason), models.MaxTaskFailureReasonLen))
	case ch.Status != nil && cur.Status == models.TaskFailed:
		ch.FailureReason = new("") // a retried or cancelled task no longer carries the old reason
	}
	if ch.Status != nil && to == models.TaskDispatched {
		if s.runs == nil {
			return ch, "", models.Errorf(models.CodeUpstreamUnavailable, "Task runs are not available on this server.")
		}
		// The operator's paths skip the credit check, as the spec asks.
		if err := s.runs.CheckTaskRun(ctx, tg.company, tg.admin); err != nil {
			return ch, "", err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return ch, "", err
		}
		ch.LastRunID = new(id.String())
	}
	title := cur.Title
	if ch.Title != nil {
		title = *ch.Title
	}
	summary := fmt.Sprintf("Task %q updated", title)
	if ch.Status != nil {
		summary = fmt.Sprintf("Task %q: %s → %s", title, cur.Status, to)
	}
	return ch, summary, nil
}

func (s *Service) delete(ctx context.Context, tg target, taskID string) error {
	cur, err := s.get(ctx, tg, taskID)
	for race := 0; err == nil; race++ {
		if !cur.Status.Deletable() {
			return models.Errorf(models.CodeConflict, "A %s task cannot be deleted; only %s tasks can.", cur.Status,
				joinStatuses(models.DeletableTaskStatuses)).With("status", string(cur.Status))
		}
		var t models.Task
		t, err = s.store.Companies().DeleteTask(ctx, tg.company.Scope, taskID, cur.Status,
			event(ctx, tg, models.ActivityTaskDeleted, fmt.Sprintf("Task %q deleted", cur.Title)))
		switch {
		case err == nil:
			return nil
		case errors.Is(err, models.ErrNotFound):
			return taskNotFound(taskID)
		case errors.Is(err, store.ErrTaskStatusChanged) && race+1 < maxRaces:
			cur, err = t, nil
		case errors.Is(err, store.ErrTaskStatusChanged):
			return models.Errorf(models.CodeConflict, "The task kept changing meanwhile; it is now %s. Try again.", t.Status).With("status", string(t.Status))
		}
	}
	return err
}

func checkCreate(in CreateInput) (models.Task, error) {
	title := strings.TrimSpace(in.Title)
	if err := checkTitle(title); err != nil {
		return models.Task{}, err
	}
	if err := checkDescription(in.Description); err != nil {
		return models.Task{}, err
	}
	p := in.Priority
	if p == "" {
		p = models.TaskPriorityNormal
	}
	if !p.Valid() {
		return models.Task{}, badPriority()
	}
	t := models.Task{Title: title, Description: in.Description, Priority: p}
	if in.DueAt != nil {
		if in.DueAt.IsZero() {
			return models.Task{}, models.Errorf(models.CodeInvalidArgument, "A due date is a real instant.").WithField("due_at")
		}
		t.DueAt = new(in.DueAt.UTC().Truncate(time.Microsecond))
	}
	return t, nil
}

func checkUpdate(in UpdateInput) error {
	if in.Title != nil {
		if err := checkTitle(strings.TrimSpace(*in.Title)); err != nil {
			return err
		}
	}
	if in.Description != nil {
		if err := checkDescription(*in.Description); err != nil {
			return err
		}
	}
	if in.Priority != nil && !in.Priority.Valid() {
		return badPriority()
	}
	if in.Status != nil && !in.Status.Valid() {
		return badStatus()
	}
	if in.DueAt != nil && in.DueAt.IsZero() {
		return models.Errorf(models.CodeInvalidArgument, "A due date is a real instant.").WithField("due_at")
	}
	if in.FailureReason != nil {
		if err := service.CheckText(*in.FailureReason, true); err != nil {
			return err.WithField("failure_reason")
		}
	}
	return nil
}

func checkTitle(title string) error {
	if n := utf8.RuneCountInString(title); n == 0 || n > models.MaxTaskTitleLen {
		return models.Errorf(models.CodeInvalidArgument, "A task's title is 1 to %d characters.", models.MaxTaskTitleLen).WithField("title")
	}
	if err := service.CheckText(title, false); err != nil {
		return err.WithField("title")
	}
	return nil
}

func checkDescription(d string) error {
	if n := utf8.RuneCountInString(d); n > models.MaxTaskDescriptionLen {
		return models.Errorf(models.CodeInvalidArgument, "A task's description is at most %d characters; this one has %d.",
			models.MaxTaskDescriptionLen, n).WithField("description").With("limit", models.MaxTaskDescriptionLen)
	}
	if err := service.CheckText(d, true); err != nil {
		return err.WithField("description")
	}
	return nil
}

// checkStatuses refuses unknown statuses and drops repeats.
func checkStatuses(in []models.TaskStatus) ([]models.TaskStatus, error) {
	out := make([]models.TaskStatus, 0, len(in))
	for _, s := range in {
		if !s.Valid() {
			return nil, badStatus()
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

func badStatus() *models.Error {
	return models.Errorf(models.CodeInvalidArgument, "A task status is one of %s.", joinStatuses(models.TaskStatuses)).WithField("status")
}

func badPriority() *models.Error {
	names := make([]string, len(models.TaskPriorities))
	for i, p := range models.TaskPriorities {
		names[i] = string(p)
	}
	return models.Errorf(models.CodeInvalidArgument, "A task priority is one of %s.", strings.Join(names, ", ")).WithField("priority")
}

func joinStatuses(ss []models.TaskStatus) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// cutRunes cuts s to at most n characters.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
