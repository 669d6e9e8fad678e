package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/tasks"
)

// TaskResponse is one task.
type TaskResponse struct {
	ID            string     `json:"id" format:"uuid"`
	CompanyID     string     `json:"company_id" format:"uuid"`
	Title         string     `json:"title"`
	Description   string     `json:"description" doc:"Markdown."`
	Status        string     `json:"status" enum:"pending,dispatched,running,done,failed,cancelled"`
	Priority      string     `json:"priority" enum:"low,normal,high,urgent"`
	CreatedBy     string     `json:"created_by" enum:"user,agent,customer,system" doc:"user: a person; agent: the company's agents (its company key); system: holdco or its operators."`
	DueAt         *time.Time `json:"due_at"`
	LastRunID     *string    `json:"last_run_id" doc:"The most recent run that worked on the task; null until one has."`
	FailureReason *string    `json:"failure_reason" doc:"Why the task failed; null unless failed."`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// TaskListResponse lists a company's tasks, newest first.
type TaskListResponse struct {
	Tasks []TaskResponse `json:"tasks"`
	Total int64          `json:"total" doc:"How many tasks matched; more than the tasks listed when the list was cut at 500."`
}

// CreateTaskRequest is a new task; it starts pending.
type CreateTaskRequest struct {
	Title       string     `json:"title" minLength:"1" maxLength:"200" doc:"One line; surrounding spaces are trimmed."`
	Description string     `json:"description,omitempty" maxLength:"20000" multiline:"true" doc:"Markdown, at most 20,000 characters."`
	Priority    string     `json:"priority,omitempty" enum:"low,normal,high,urgent" default:"normal"`
	DueAt       *time.Time `json:"due_at,omitempty"`
}

// UpdateTaskRequest changes a task; absent fields stay as they are.
type UpdateTaskRequest struct {
	Title         *string    `json:"title,omitempty" minLength:"1" maxLength:"200"`
	Description   *string    `json:"description,omitempty" maxLength:"20000" multiline:"true"`
	Priority      *string    `json:"priority,omitempty" enum:"low,normal,high,urgent"`
	Status        *string    `json:"status,omitempty" enum:"pending,dispatched,running,done,failed,cancelled" doc:"Moves the task through its lifecycle; a move it does not allow answers 409 with the task's current status."`
	DueAt         *time.Time `json:"due_at,omitempty"`
	ClearDueAt    bool       `json:"clear_due_at,omitempty" doc:"Removes the due date."`
	FailureReason *string    `json:"failure_reason,omitempty" maxLength:"1000" multiline:"true" doc:"Only with status failed."`
}

// taskLifecycleDoc describes the lifecycle once for every operation.
const taskLifecycleDoc = "Lifecycle: pending → dispatched | cancelled; dispatched → running | failed | cancelled; running → done | failed; " +
	"failed → pending (retry) | cancelled; done and cancelled are final (no moves, no edits). " +
	"Only pending, dispatched and failed tasks may be deleted; any other status answers 409 with `status`. " +
	"A move the lifecycle does not allow answers 409 with the task's current `status`; of two changes racing from the same status one wins."

type taskHandlers struct{ svc *tasks.Service }

func registerTaskRoutes(api huma.API, h *taskHandlers) {
	tags := []string{"tasks"}
	huma.Register(api, huma.Operation{OperationID: "list-tasks", Method: http.MethodGet, Path: "/companies/{company_id}/tasks",
		Tags: tags, Summary: "List the company's tasks", Security: bearerSecurity,
		Description: "Newest first, at most 500 (`total` counts all that match). Filter with `status`, repeated: `?status=pending&status=running`."}, h.list)
	huma.Register(api, huma.Operation{OperationID: "create-task", Method: http.MethodPost, Path: "/companies/{company_id}/tasks",
		Tags: tags, Summary: "Create a task", Security: bearerSecurity, DefaultStatus: http.StatusCreated,
		Description: "The task starts pending. With the company key it is created by the company's agents. " + taskLifecycleDoc}, h.create)
	huma.Register(api, huma.Operation{OperationID: "get-task", Method: http.MethodGet, Path: "/tasks/{task_id}",
		Tags: tags, Summary: "Get a task", Security: bearerSecurity,
		Description: "Tasks are addressed by id: a task of another account answers 403, a missing one (or one of an archived company) 404."}, h.get)
	huma.Register(api, huma.Operation{OperationID: "update-task", Method: http.MethodPut, Path: "/tasks/{task_id}",
		Tags: tags, Summary: "Update a task", Security: bearerSecurity, Description: taskLifecycleDoc}, h.update)
	huma.Register(api, huma.Operation{OperationID: "delete-task", Method: http.MethodDelete, Path: "/tasks/{task_id}",
		Tags: tags, Summary: "Delete a task", Security: bearerSecurity, DefaultStatus: http.StatusNoContent, Description: taskLifecycleDoc}, h.delete)

	admin := []string{"admin"}
	meta := func() map[string]any { return map[string]any{adminOnly: true} }
	huma.Register(api, huma.Operation{OperationID: "admin-list-tasks", Method: http.MethodGet, Path: "/admin/companies/{company_id}/tasks",
		Tags: admin, Summary: "List a company's tasks", Security: bearerSecurity, Metadata: meta(),
		Description: "Any company, archived ones too. Newest first, at most 500. `status` is an array: repeat it."}, h.adminList)
	huma.Register(api, huma.Operation{OperationID: "admin-create-task", Method: http.MethodPost, Path: "/admin/companies/{company_id}/tasks",
		Tags: admin, Summary: "Create a task for a company", Security: bearerSecurity, Metadata: meta(), DefaultStatus: http.StatusCreated,
		Description: "Any company that is not archived (archived answers 409). The task starts pending, created by `system`."}, h.adminCreate)
	huma.Register(api, huma.Operation{OperationID: "admin-get-task", Method: http.MethodGet, Path: "/admin/tasks/{task_id}",
		Tags: admin, Summary: "Get a task", Security: bearerSecurity, Metadata: meta()}, h.adminGet)
	huma.Register(api, huma.Operation{OperationID: "admin-update-task", Method: http.MethodPut, Path: "/admin/tasks/{task_id}",
		Tags: admin, Summary: "Update a task", Security: bearerSecurity, Metadata: meta(),
		Description: "Status changes go through the lifecycle with the credit check skipped. " + taskLifecycleDoc}, h.adminUpdate)
	huma.Register(api, huma.Operation{OperationID: "admin-delete-task", Method: http.MethodDelete, Path: "/admin/tasks/{task_id}",
		Tags: admin, Summary: "Delete a task", Security: bearerSecurity, Metadata: meta(), DefaultStatus: http.StatusNoContent,
		Description: "Only tasks in pending, failed or dispatched; any other status answers 409."}, h.adminDelete)
}

func toTaskResponse(t models.Task) TaskResponse {
	r := TaskResponse{ID: t.ID, CompanyID: t.CompanyID, Title: t.Title, Description: t.Description, Status: string(t.Status),
		Priority: string(t.Priority), CreatedBy: string(t.CreatedBy), DueAt: t.DueAt, LastRunID: t.LastRunID,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if t.FailureReason != "" {
		r.FailureReason = &t.FailureReason
	}
	return r
}

func toTaskList(l tasks.List) TaskListResponse {
	out := TaskListResponse{Tasks: make([]TaskResponse, 0, len(l.Tasks)), Total: l.Total}
	for _, t := range l.Tasks {
		out.Tasks = append(out.Tasks, toTaskResponse(t))
	}
	return out
}

type listTasksInput struct {
	CompanyID string   `path:"company_id" format:"uuid"`
	Status    []string `query:"status,explode" required:"false" enum:"pending,dispatched,running,done,failed,cancelled" doc:"Keep tasks in any of these statuses; repeat the parameter for several. None keeps all."`
}

func (in *listTasksInput) toInput() tasks.ListInput {
	l := tasks.ListInput{}
	for _, s := range in.Status {
		l.Statuses = append(l.Statuses, models.TaskStatus(s))
	}
	return l
}

type createTaskInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Body      CreateTaskRequest
}

func (in *createTaskInput) toInput() tasks.CreateInput {
	return tasks.CreateInput{Title: in.Body.Title, Description: in.Body.Description, Priority: models.TaskPriority(in.Body.Priority), DueAt: in.Body.DueAt}
}

type taskIDInput struct {
	TaskID string `path:"task_id" format:"uuid"`
}

type updateTaskInput struct {
	TaskID string `path:"task_id" format:"uuid"`
	Body   UpdateTaskRequest
}

func (in *updateTaskInput) toInput() tasks.UpdateInput {
	b := in.Body
	u := tasks.UpdateInput{Title: b.Title, Description: b.Description, DueAt: b.DueAt, ClearDueAt: b.ClearDueAt, FailureReason: b.FailureReason}
	if b.Priority != nil {
		u.Priority = new(models.TaskPriority(*b.Priority))
	}
	if b.Status != nil {
		u.Status = new(models.TaskStatus(*b.Status))
	}
	return u
}

type taskOutput struct{ Body TaskResponse }

type taskListOutput struct{ Body TaskListResponse }

func taskOut(t models.Task, err error) (*taskOutput, error) {
	if err != nil {
		return nil, err
	}
	return &taskOutput{Body: toTaskResponse(t)}, nil
}

func taskListOut(l tasks.List, err error) (*taskListOutput, error) {
	if err != nil {
		return nil, err
	}
	return &taskListOutput{Body: toTaskList(l)}, nil
}

func (h *taskHandlers) list(ctx context.Context, in *listTasksInput) (*taskListOutput, error) {
	return taskListOut(h.svc.List(ctx, in.CompanyID, in.toInput()))
}

func (h *taskHandlers) create(ctx context.Context, in *createTaskInput) (*taskOutput, error) {
	return taskOut(h.svc.Create(ctx, in.CompanyID, in.toInput()))
}

func (h *taskHandlers) get(ctx context.Context, in *taskIDInput) (*taskOutput, error) {
	return taskOut(h.svc.Get(ctx, in.TaskID))
}

func (h *taskHandlers) update(ctx context.Context, in *updateTaskInput) (*taskOutput, error) {
	return taskOut(h.svc.Update(ctx, in.TaskID, in.toInput()))
}

func (h *taskHandlers) delete(ctx context.Context, in *taskIDInput) (*struct{}, error) {
	return nil, h.svc.Delete(ctx, in.TaskID)
}

func (h *taskHandlers) adminList(ctx context.Context, in *listTasksInput) (*taskListOutput, error) {
	return taskListOut(h.svc.AdminList(ctx, in.CompanyID, in.toInput()))
}

func (h *taskHandlers) adminCreate(ctx context.Context, in *createTaskInput) (*taskOutput, error) {
	return taskOut(h.svc.AdminCreate(ctx, in.CompanyID, in.toInput()))
}

func (h *taskHandlers) adminGet(ctx context.Context, in *taskIDInput) (*taskOutput, error) {
	return taskOut(h.svc.AdminGet(ctx, in.TaskID))
}

func (h *taskHandlers) adminUpdate(ctx context.Context, in *updateTaskInput) (*taskOutput, error) {
	return taskOut(h.svc.AdminUpdate(ctx, in.TaskID, in.toInput()))
}

func (h *taskHandlers) adminDelete(ctx context.Context, in *taskIDInput) (*struct{}, error) {
	return nil, h.svc.AdminDelete(ctx, in.TaskID)
}
