package companies

import (
	"context"
	"time"

	"holdco/models"
)

// ActivityInput pages a company's activity feed.
type ActivityInput struct {
	// Limit is 1 to 100; 0 means the default, 50.
	Limit int
	// Before and BeforeID continue after the last event of the previous
	// page (both from ActivityPage.Next); Before alone lists events strictly
	// older than that instant.
	Before   time.Time
	BeforeID string
}

// ActivityPage is a page of the feed, newest first, with the cursor of the
// next page (nil on the last one).
type ActivityPage struct {
	Events []models.ActivityEvent
	Next   *models.ActivityCursor
}

// Activity lists the company's activity feed newest first; events with
// equal timestamps are ordered by id, so paging never skips or repeats one.
func (s *Service) Activity(ctx context.Context, companyID string, in ActivityInput) (ActivityPage, error) {
	limit := in.Limit
	if limit == 0 {
		limit = models.DefaultActivityLimit
	}
	if limit < 1 || limit > models.MaxActivityLimit {
		return ActivityPage{}, models.Errorf(models.CodeInvalidArgument, "limit is 1 to %d.", models.MaxActivityLimit).WithField("limit")
	}
	if in.BeforeID != "" && in.Before.IsZero() {
		return ActivityPage{}, models.Errorf(models.CodeInvalidArgument, "before_id needs before.").WithField("before_id")
	}
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return ActivityPage{}, err
	}
	// One more than asked tells whether another page follows.
	events, err := s.store.Companies().ListActivity(ctx, c.Scope, models.ActivityCursor{Before: in.Before.UTC(), BeforeID: in.BeforeID}, limit+1)
	if err != nil {
		return ActivityPage{}, err
	}
	page := ActivityPage{Events: events}
	if len(events) > limit {
		page.Events = events[:limit]
		last := page.Events[limit-1]
		page.Next = &models.ActivityCursor{Before: last.CreatedAt, BeforeID: last.ID}
	}
	return page, nil
}

// Milestones is a company's milestone shelf.
type Milestones struct {
	Achieved []models.Milestone
	// Unseen are the achieved milestones the company page has not shown
	// yet, oldest first.
	Unseen []models.Milestone
	// NextGoal is the first kind not reached; nil when all are.
	NextGoal *models.MilestoneKind
}

// Milestones returns what the company reached, the unseen queue and the
// next goal.
func (s *Service) Milestones(ctx context.Context, companyID string) (Milestones, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Milestones{}, err
	}
	ms, err := s.store.Companies().ListMilestones(ctx, c.Scope)
	if err != nil {
		return Milestones{}, err
	}
	return ShelfOf(ms), nil
}

// ShelfOf arranges reached milestones into the shelf.
func ShelfOf(ms []models.Milestone) Milestones {
	out := Milestones{Achieved: ms, Unseen: []models.Milestone{}}
	reached := map[models.MilestoneKind]bool{}
	for _, m := range ms {
		reached[m.Kind] = true
		if m.SeenAt == nil {
			out.Unseen = append(out.Unseen, m)
		}
	}
	for _, k := range models.MilestoneKinds {
		if !reached[k] {
			k := k
			out.NextGoal = &k
			break
		}
	}
	return out
}

// MarkMilestonesSeen marks every unseen milestone seen and answers how
// many it marked.
func (s *Service) MarkMilestonesSeen(ctx context.Context, companyID string) (int64, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return 0, err
	}
	return s.store.Companies().MarkMilestonesSeen(ctx, c.Scope, s.now())
}
