package console

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"holdco/models"
	"holdco/service/tasks"
)

// pager cuts a bounded list into pages of size; page counts from 1.
type pager struct {
	Page, Pages, From, To, Total int
	Prev, Next                   string // links, "" on the first or last page
}

// pageOf reads ?page= and returns the page's bounds in a list of n; q is
// the rest of the query, kept in the links.
func pageOf(r *http.Request, n, size int) pager {
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	pages := max(1, (n+size-1)/size)
	p = min(max(p, 1), pages)
	pg := pager{Page: p, Pages: pages, From: (p - 1) * size, To: min(p*size, n), Total: n}
	link := func(to int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(to))
		return "?" + q.Encode()
	}
	if p > 1 {
		pg.Prev = link(p - 1)
	}
	if p < pages {
		pg.Next = link(p + 1)
	}
	return pg
}

// tasksPageSize is how many tasks one page shows (of the at most
// models.MaxTaskList the use case answers).
const tasksPageSize = 25

type taskRow struct {
	models.Task
	Next []models.TaskStatus // the moves the lifecycle allows
}

type tasksData struct {
	Tasks      []taskRow
	Total      int64 // all that matched, more than listed when cut
	Listed     int
	Status     string
	Statuses   []models.TaskStatus
	Priorities []models.TaskPriority
	Pager      pager
}

func (c *Console) tasksPage(w http.ResponseWriter, r *http.Request) {
	req, co, ok := c.openCompany(w, r)
	if !ok {
		return
	}
	status := r.URL.Query().Get("status")
	in := tasks.ListInput{}
	if status != "" {
		in.Statuses = []models.TaskStatus{models.TaskStatus(status)}
	}
	l, err := c.svc.Tasks.List(req.ctx, req.companyID, in)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	pg := pageOf(r, len(l.Tasks), tasksPageSize)
	d := tasksData{Total: l.Total, Listed: len(l.Tasks), Status: status, Statuses: models.TaskStatuses, Pager: pg,
		Priorities: []models.TaskPriority{models.TaskPriorityLow, models.TaskPriorityNormal, models.TaskPriorityHigh, models.TaskPriorityUrgent}}
	for _, t := range l.Tasks[pg.From:pg.To] {
		d.Tasks = append(d.Tasks, taskRow{Task: t, Next: models.NextTaskStatuses(t.Status)})
	}
	c.render(w, r, http.StatusOK, "tasks", c.companyPage(req, "Tasks", "tasks", co, d))
}

func (c *Console) createTask(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	in := tasks.CreateInput{Title: r.FormValue("title"), Description: r.FormValue("description"), Priority: models.TaskPriority(r.FormValue("priority"))}
	if d := r.FormValue("due"); d != "" {
		due, err := time.Parse(time.DateOnly, d)
		if err != nil {
			c.fail(w, r, req, models.Errorf(models.CodeInvalidArgument, "The due date must be a date such as 2030-01-31.").WithField("due_at"))
			return
		}
		in.DueAt = &due
	}
	if _, err := c.svc.Tasks.Create(req.ctx, req.companyID, in); err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+req.companyID+"/tasks", http.StatusSeeOther)
}

// setTaskStatus moves a task through its lifecycle (the use case decides
// which moves are allowed; a refused one is its 409 with the status).
func (c *Console) setTaskStatus(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	status := models.TaskStatus(r.FormValue("status"))
	u := tasks.UpdateInput{Status: &status}
	if reason := r.FormValue("failure_reason"); reason != "" {
		u.FailureReason = &reason
	}
	t, err := c.svc.Tasks.Update(req.ctx, r.PathValue("task"), u)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+url.PathEscape(t.CompanyID)+"/tasks", http.StatusSeeOther)
}
