package store

import (
	"context"
	"errors"
	"strings"

	"holdco/models"
)

// CreateProspect stores a lead of the scope's company with its event; an
// email the company has already is models.ErrDuplicate.
func (s Sales) CreateProspect(ctx context.Context, c CompanyScope, p models.Prospect, event models.ActivityInput) (models.Prospect, error) {
	if err := c.check("create prospect"); err != nil {
		return p, err
	}
	at := now()
	p.CompanyID, p.CreatedAt, p.UpdatedAt, p.EmailKey = c.id, at, at, emailKey(p.Email)
	// A prospect given an id (an agent's call derives it from the call's
	// key) is created once: the company's prospect with that id is
	// answered instead.
	if p.ID != "" {
		if prior, err := s.GetProspect(ctx, c, p.ID); err == nil {
			return prior, nil
		}
	}
	preset := p.ID
	err := s.store().InTx(ctx, func(tx *Store) error {
		if err := tx.db.WithContext(ctx).Create(&p).Error; err != nil {
			return wrap("create prospect", err)
		}
		event.Subject = p.ID
		event.Data = withData(event.Data, "prospect_id", p.ID, "status", string(p.Status))
		return tx.Companies().RecordActivity(ctx, c, event)
	})
	if preset != "" && errors.Is(err, models.ErrDuplicate) {
		if prior, gerr := s.GetProspect(ctx, c, preset); gerr == nil {
			return prior, nil
		}
	}
	return p, err
}

func emailKey(email string) *string {
	if email == "" {
		return nil
	}
	k := strings.ToLower(email)
	return &k
}

// GetProspect returns a lead of the scope's company, or models.ErrNotFound.
func (s Sales) GetProspect(ctx context.Context, c CompanyScope, id string) (models.Prospect, error) {
	var p models.Prospect
	if err := c.check("get prospect"); err != nil {
		return p, err
	}
	err := s.db.WithContext(ctx).Where("id = ? AND company_id = ?", id, c.id).Take(&p).Error
	return p, wrap("get prospect", err)
}

// ListProspects returns the company's leads in any of statuses (all when
// none), newest first (ids are time-ordered), up to limit, older than the
// prospect beforeID when given.
func (s Sales) ListProspects(ctx context.Context, c CompanyScope, statuses []models.ProspectStatus, beforeID string, limit int) ([]models.Prospect, error) {
	if err := c.check("list prospects"); err != nil {
		return nil, err
	}
	q := s.db.WithContext(ctx).Where("company_id = ?", c.id)
	if len(statuses) > 0 {
		q = q.Where("status IN ?", statuses)
	}
	if beforeID != "" {
		q = q.Where("id < ?", beforeID)
	}
	out := []models.Prospect{}
	err := q.Order("id DESC").Limit(limit).Find(&out).Error
	return out, wrap("list prospects", err)
}

// UpdateProspect applies ch to a lead of the scope's company with its
// event; a changed email the company has already is models.ErrDuplicate.
func (s Sales) UpdateProspect(ctx context.Context, c CompanyScope, id string, ch models.ProspectChanges, event models.ActivityInput) (models.Prospect, error) {
	if err := c.check("update prospect"); err != nil {
		return models.Prospect{}, err
	}
	set := map[string]any{"updated_at": now()}
	for col, v := range map[string]*string{"name": ch.Name, "organization": ch.Organization, "notes": ch.Notes, "source": ch.Source} {
		if v != nil {
			set[col] = *v
		}
	}
	if ch.Email != nil {
		set["email"], set["email_key"] = *ch.Email, emailKey(*ch.Email)
	}
	if ch.Status != nil {
		set["status"] = *ch.Status
	}
	err := s.store().InTx(ctx, func(tx *Store) error {
		res := tx.db.WithContext(ctx).Model(&models.Prospect{}).Where("id = ? AND company_id = ?", id, c.id).Updates(set)
		if res.Error != nil {
			return wrap("update prospect", res.Error)
		}
		if res.RowsAffected == 0 {
			return wrap("update prospect", models.ErrNotFound)
		}
		event.Subject = id
		event.Data = withData(event.Data, "prospect_id", id)
		return tx.Companies().RecordActivity(ctx, c, event)
	})
	if err != nil {
		return models.Prospect{}, err
	}
	return s.GetProspect(ctx, c, id)
}
