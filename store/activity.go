package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"gorm.io/gorm/clause"

	"holdco/models"
)

// RecordActivity appends an event to the scope's company's feed. Called on
// the Store an InTx callback gets, the event commits (or not) with the
// change it describes.
func (s Companies) RecordActivity(ctx context.Context, c CompanyScope, a models.ActivityInput) error {
	if err := c.check("record activity"); err != nil {
		return err
	}
	return s.store().recordActivityAt(ctx, c.id, a, now())
}

func (s *Store) recordActivityAt(ctx context.Context, companyID string, a models.ActivityInput, at time.Time) error {
	if a.Kind == "" {
		return fmt.Errorf("store: record activity: no kind")
	}
	if a.Actor == "" {
		a.Actor = models.ActorSystem
	}
	data := []byte("{}")
	if len(a.Data) > 0 {
		var err error
		if data, err = json.Marshal(a.Data); err != nil {
			return fmt.Errorf("store: record activity: data: %w", err)
		}
	}
	e := models.ActivityEvent{CompanyID: companyID, Kind: a.Kind, Actor: a.Actor,
		Summary: truncateRunes(a.Summary, models.MaxActivitySummary), Subject: truncateRunes(a.Subject, 255),
		Data: string(data), CreatedAt: at}
	return wrap("record activity", s.db.WithContext(ctx).Create(&e).Error)
}

// truncateRunes cuts s to at most n bytes on a rune boundary.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ListActivity returns up to limit events of the scope's company, newest
// first; equal timestamps are ordered by id (descending), and the cursor
// pages strictly after the last event of the previous page.
func (s Companies) ListActivity(ctx context.Context, c CompanyScope, cur models.ActivityCursor, limit int) ([]models.ActivityEvent, error) {
	if err := c.check("list activity"); err != nil {
		return nil, err
	}
	q := s.db.WithContext(ctx).Where("company_id = ?", c.id)
	switch {
	case !cur.Before.IsZero() && cur.BeforeID != "":
		q = q.Where("(created_at < ? OR (created_at = ? AND id < ?))", cur.Before, cur.Before, cur.BeforeID)
	case !cur.Before.IsZero():
		q = q.Where("created_at < ?", cur.Before)
	}
	events := []models.ActivityEvent{}
	err := q.Order("created_at DESC, id DESC").Limit(limit).Find(&events).Error
	return events, wrap("list activity", err)
}

// ReachMilestone records that the scope's company reached a milestone at
// at. The (company, kind) primary key makes it happen once: a second call,
// concurrent or later, inserts nothing and answers false. When reached,
// the milestone_reached event is recorded in the same transaction.
func (s Companies) ReachMilestone(ctx context.Context, c CompanyScope, kind models.MilestoneKind, at time.Time) (bool, error) {
	if err := c.check("reach milestone"); err != nil {
		return false, err
	}
	reached := false
	err := s.store().InTx(ctx, func(tx *Store) error {
		res := tx.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
			Create(&models.Milestone{CompanyID: c.id, Kind: kind, ReachedAt: at.UTC().Truncate(time.Microsecond)})
		if res.Error != nil {
			return wrap("reach milestone", res.Error)
		}
		if res.RowsAffected == 0 {
			return nil
		}
		reached = true
		return tx.recordActivityAt(ctx, c.id, models.ActivityInput{Kind: models.ActivityMilestoneReached, Actor: models.ActorSystem,
			Summary: "Milestone reached: " + kind.Goal(), Subject: string(kind)}, now())
	})
	return reached, err
}

// ListMilestones returns the milestones the scope's company reached, oldest
// first.
func (s Companies) ListMilestones(ctx context.Context, c CompanyScope) ([]models.Milestone, error) {
	if err := c.check("list milestones"); err != nil {
		return nil, err
	}
	ms := []models.Milestone{}
	err := s.db.WithContext(ctx).Where("company_id = ?", c.id).Order("reached_at, kind").Find(&ms).Error
	return ms, wrap("list milestones", err)
}

// MarkMilestonesSeen stamps every unseen milestone of the scope's company
// seen at at and returns how many it marked.
func (s Companies) MarkMilestonesSeen(ctx context.Context, c CompanyScope, at time.Time) (int64, error) {
	if err := c.check("mark milestones seen"); err != nil {
		return 0, err
	}
	res := s.db.WithContext(ctx).Model(&models.Milestone{}).Where("company_id = ? AND seen_at IS NULL", c.id).
		Update("seen_at", at.UTC().Truncate(time.Microsecond))
	return res.RowsAffected, wrap("mark milestones seen", res.Error)
}
