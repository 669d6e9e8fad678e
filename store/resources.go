package store

import (
	"context"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// SaveResource records the state of a resource of the scope's company
// (insert or update; the scope wins over r.CompanyID). Attempts counts how
// often provisioning of the resource started.
func (s *Store) SaveResource(ctx context.Context, c CompanyScope, r models.CompanyResource) error {
	if err := c.check("save resource"); err != nil {
		return err
	}
	r.CompanyID, r.UpdatedAt = c.id, now()
	inc := 0
	if r.Status == models.ResourceProvisioning {
		inc = 1
	}
	r.Attempts = inc
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "company_id"}, {Name: "kind"}},
		DoUpdates: clause.Assignments(map[string]any{
			"status": r.Status, "ref": r.Ref, "last_error": r.LastError, "updated_at": r.UpdatedAt,
			"attempts": gorm.Expr(s.existing("company_resources", "attempts")+" + ?", inc),
		}),
	}).Create(&r).Error
	return wrap("save resource", err)
}

// ListResources returns the rows of the scope's company's resources.
func (s *Store) ListResources(ctx context.Context, c CompanyScope) ([]models.CompanyResource, error) {
	var rs []models.CompanyResource
	if err := c.check("list resources"); err != nil {
		return nil, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ?", c.id).Order("kind").Find(&rs).Error
	return rs, wrap("list resources", err)
}

// ListLiveCompanies returns every company that is not archived, across
// tenants (operators' health check only).
func (s *Store) ListLiveCompanies(ctx context.Context, admin AdminScope) ([]models.Company, error) {
	var cs []models.Company
	if err := admin.check("list live companies"); err != nil {
		return nil, err
	}
	err := s.db.WithContext(ctx).Where("status <> ?", models.CompanyArchived).Order("created_at, id").Find(&cs).Error
	return cs, wrap("list live companies", err)
}
