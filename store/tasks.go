package store

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"holdco/models"
)

// ErrTaskStatusChanged is the answer of a conditional task change whose
// expected status is no longer the task's: another change won the race.
// The method answers the task as it now is with it.
var ErrTaskStatusChanged = errors.New("store: the task's status changed")

// TaskCompanyID returns the id of the company a task belongs to, or
// models.ErrNotFound. It is the first half of addressing a task by its id:
// the caller authorizes that company, then reads the task with the scope
// the authorization step gave (GetTask). It reveals nothing but the id.
func (s Companies) TaskCompanyID(ctx context.Context, taskID string) (string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Model(&models.Task{}).Where("id = ?", taskID).Limit(1).Pluck("company_id", &ids).Error
	if err != nil {
		return "", wrap("task company", err)
	}
	if len(ids) == 0 {
		return "", wrap("task company", models.ErrNotFound)
	}
	return ids[0], nil
}

// CreateTask stores a new task of the scope's company and records the
// event with it. A task given an id (an agent's tool call derives it from
// the call's key) is created once: when the company has a task with that
// id already, that task is answered and nothing is written.
func (s Companies) CreateTask(ctx context.Context, c CompanyScope, t models.Task, event models.ActivityInput) (models.Task, error) {
	if err := c.check("create task"); err != nil {
		return t, err
	}
	at := now()
	t.CompanyID, t.CreatedAt, t.UpdatedAt = c.id, at, at
	preset := t.ID
	if preset != "" {
		if prior, err := s.GetTask(ctx, c, preset); err == nil {
			return prior, nil
		}
	}
	err := s.store().InTx(ctx, func(tx *Store) error {
		if err := tx.db.WithContext(ctx).Create(&t).Error; err != nil {
			return wrap("create task", err)
		}
		event.Subject = t.ID
		event.Data = withData(event.Data, "task_id", t.ID, "status", string(t.Status))
		return tx.Companies().RecordActivity(ctx, c, event)
	})
	if preset != "" && errors.Is(err, models.ErrDuplicate) {
		// The same call, concurrently: its task stands.
		return s.GetTask(ctx, c, preset)
	}
	return t, err
}

// GetTask returns the scope's company's task, or models.ErrNotFound (also
// for a task of another company).
func (s Companies) GetTask(ctx context.Context, c CompanyScope, taskID string) (models.Task, error) {
	var t models.Task
	if err := c.check("get task"); err != nil {
		return t, err
	}
	err := s.db.WithContext(ctx).Where("id = ? AND company_id = ?", taskID, c.id).Take(&t).Error
	return t, wrap("get task", err)
}

// ListTasks returns the scope's company's tasks in any of statuses (all
// when none are given), newest first, at most limit of them, and how many
// match in all.
func (s Companies) ListTasks(ctx context.Context, c CompanyScope, statuses []models.TaskStatus, limit int) ([]models.Task, int64, error) {
	if err := c.check("list tasks"); err != nil {
		return nil, 0, err
	}
	q := s.db.WithContext(ctx).Model(&models.Task{}).Where("company_id = ?", c.id)
	if len(statuses) > 0 {
		q = q.Where("status IN ?", statuses)
	}
	tasks := []models.Task{}
	if err := q.Session(&gorm.Session{}).Order("created_at DESC, id DESC").Limit(limit).Find(&tasks).Error; err != nil {
		return nil, 0, wrap("list tasks", err)
	}
	total := int64(len(tasks))
	if total == int64(limit) {
		if err := q.Session(&gorm.Session{}).Count(&total).Error; err != nil {
			return nil, 0, wrap("list tasks: count", err)
		}
	}
	return tasks, total, nil
}

// OpenTasks returns the scope's company's open tasks (pending, dispatched,
// running), newest first, at most limit of them: one read of migration
// 0040's index, for the dashboard.
func (s Companies) OpenTasks(ctx context.Context, c CompanyScope, limit int) ([]models.Task, error) {
	if err := c.check("open tasks"); err != nil {
		return nil, err
	}
	tasks := []models.Task{}
	err := s.db.WithContext(ctx).Where("company_id = ? AND status IN "+openTaskStatuses, c.id).
		Order("created_at DESC, id DESC").Limit(limit).Find(&tasks).Error
	return tasks, wrap("open tasks", err)
}

// UpdateTask applies ch to the scope's company's task if its status is
// still expected — one conditional UPDATE, so of two changes racing from
// the same status exactly one wins — and records the event in the same
// transaction. The loser gets ErrTaskStatusChanged with the task as it now
// is; a missing task is models.ErrNotFound. The lifecycle itself is the
// caller's rule (models.CanTransition): the store only makes it atomic.
func (s Companies) UpdateTask(ctx context.Context, c CompanyScope, taskID string, expected models.TaskStatus, ch models.TaskChanges, event models.ActivityInput) (models.Task, error) {
	if err := c.check("update task"); err != nil {
		return models.Task{}, err
	}
	set := map[string]any{"updated_at": now()}
	if ch.Title != nil {
		set["title"] = *ch.Title
	}
	if ch.Description != nil {
		set["description"] = *ch.Description
	}
	if ch.Priority != nil {
		set["priority"] = *ch.Priority
	}
	if ch.Status != nil {
		set["status"] = *ch.Status
	}
	switch {
	case ch.ClearDueAt:
		set["due_at"] = nil
	case ch.DueAt != nil:
		set["due_at"] = *ch.DueAt
	}
	if ch.FailureReason != nil {
		set["failure_reason"] = *ch.FailureReason
	}
	if ch.LastRunID != nil {
		set["last_run_id"] = *ch.LastRunID
	}
	var t models.Task
	err := s.store().InTx(ctx, func(tx *Store) error {
		res := tx.db.WithContext(ctx).Model(&models.Task{}).
			Where("id = ? AND company_id = ? AND status = ?", taskID, c.id, expected).Updates(set)
		if res.Error != nil {
			return wrap("update task", res.Error)
		}
		if res.RowsAffected == 0 {
			return tx.lostTaskRace(ctx, c, taskID, &t, "update task")
		}
		if err := tx.db.WithContext(ctx).Where("id = ? AND company_id = ?", taskID, c.id).Take(&t).Error; err != nil {
			return wrap("update task: read back", err)
		}
		event.Subject = t.ID
		event.Data = withData(event.Data, "task_id", t.ID, "status", string(t.Status))
		if ch.Status != nil && *ch.Status != expected {
			event.Data["previous_status"] = string(expected)
		}
		return tx.Companies().RecordActivity(ctx, c, event)
	})
	return t, err
}

// DeleteTask deletes the scope's company's task if its status is still
// expected (one conditional DELETE, as UpdateTask) and records the event
// with it. The caller decides which statuses may be deleted
// (models.TaskStatus.Deletable).
func (s Companies) DeleteTask(ctx context.Context, c CompanyScope, taskID string, expected models.TaskStatus, event models.ActivityInput) (models.Task, error) {
	if err := c.check("delete task"); err != nil {
		return models.Task{}, err
	}
	var t models.Task
	err := s.store().InTx(ctx, func(tx *Store) error {
		res := tx.db.WithContext(ctx).Where("id = ? AND company_id = ? AND status = ?", taskID, c.id, expected).Delete(&models.Task{})
		if res.Error != nil {
			return wrap("delete task", res.Error)
		}
		if res.RowsAffected == 0 {
			return tx.lostTaskRace(ctx, c, taskID, &t, "delete task")
		}
		event.Subject = taskID
		event.Data = withData(event.Data, "task_id", taskID, "status", string(expected))
		return tx.Companies().RecordActivity(ctx, c, event)
	})
	return t, err
}

// lostTaskRace reads the task a conditional change did not touch into t:
// ErrTaskStatusChanged when it exists, models.ErrNotFound when not.
func (s *Store) lostTaskRace(ctx context.Context, c CompanyScope, taskID string, t *models.Task, op string) error {
	err := s.db.WithContext(ctx).Where("id = ? AND company_id = ?", taskID, c.id).Take(t).Error
	if err != nil {
		return wrap(op, err)
	}
	return ErrTaskStatusChanged
}

// withData adds key/value pairs to an event's data, making the map if
// needed.
func withData(data map[string]any, kv ...string) map[string]any {
	if data == nil {
		data = map[string]any{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		data[kv[i]] = kv[i+1]
	}
	return data
}
