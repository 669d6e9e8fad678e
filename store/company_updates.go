package store

import (
	"context"
	"time"

	"holdco/models"
)

// HandleTaken reports whether any company (archived ones included, whose
// handles stay reserved) uses handle.
func (s Companies) HandleTaken(ctx context.Context, handle string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.Company{}).Where("handle = ?", handle).Count(&n).Error
	return n > 0, wrap("check handle", err)
}

// UpdateCompanyFields writes name, idea, mission and status (from c) of
// the scope's company while it is not archived; it reports
// models.ErrNotFound otherwise.
func (s Companies) UpdateCompanyFields(ctx context.Context, sc CompanyScope, c models.Company) error {
	if err := sc.check("update company"); err != nil {
		return err
	}
	res := s.db.WithContext(ctx).Model(&models.Company{}).
		Where("id = ? AND status <> ?", sc.id, models.CompanyArchived).
		Updates(map[string]any{"name": c.Name, "idea": c.Idea, "mission": c.Mission, "status": c.Status, "chat_disabled": c.ChatDisabled, "updated_at": now()})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("update company", models.ErrNotFound)
	}
	return wrap("update company", res.Error)
}

// ArchiveCompany archives the scope's company. It reports whether this
// call did it (false when it was already archived).
func (s Companies) ArchiveCompany(ctx context.Context, c CompanyScope, at time.Time) (bool, error) {
	if err := c.check("archive company"); err != nil {
		return false, err
	}
	res := s.db.WithContext(ctx).Model(&models.Company{}).
		Where("id = ? AND status <> ?", c.id, models.CompanyArchived).
		Updates(map[string]any{"status": models.CompanyArchived, "archived_at": at, "updated_at": at})
	if res.Error != nil {
		return false, wrap("archive company", res.Error)
	}
	return res.RowsAffected == 1, nil
}
