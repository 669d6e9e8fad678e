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
func (s Companies) SaveResource(ctx context.Context, c CompanyScope, r models.CompanyResource) error {
	if err := c.check("save resource"); err != nil {
		return err
	}
	r.CompanyID, r.UpdatedAt = c.id, now()
	inc := 0
	if r.Status == models.ResourceProvisioning {
		inc = 1
	}
	r.Attempts = inc
	return s.store().InTx(ctx, func(tx *Store) error {
		var before []models.CompanyResource
		if err := tx.db.WithContext(ctx).Select("kind, status, ref").Where("company_id = ?", c.id).Find(&before).Error; err != nil {
			return wrap("save resource", err)
		}
		// Ensuring a ready resource again (a provision or heal of a ready
		// company) keeps it ready while it is checked: the company does
		// not stop working meanwhile, and its readiness is no new
		// transition (one company_provisioned per real one).
		if r.Status == models.ResourceProvisioning {
			for _, b := range before {
				if b.Kind == r.Kind && b.Status == models.ResourceReady {
					r.Status, r.Ref = models.ResourceReady, b.Ref
				}
			}
		}
		err := tx.db.WithContext(ctx).Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "company_id"}, {Name: "kind"}},
			DoUpdates: clause.Assignments(map[string]any{
				"status": r.Status, "ref": r.Ref, "last_error": r.LastError, "updated_at": r.UpdatedAt,
				"attempts": gorm.Expr(tx.existing("company_resources", "attempts")+" + ?", inc),
			}),
		}).Create(&r).Error
		if err != nil {
			return wrap("save resource", err)
		}
		// The feed says so when the last resource turns ready (again, after
		// a heal).
		if r.Status != models.ResourceReady || allReady(before) || !allReady(append(before, r)) {
			return nil
		}
		return tx.recordActivityAt(ctx, c.id, models.ActivityInput{Kind: models.ActivityCompanyProvisioned, Actor: models.ActorSystem,
			Summary: "Repository, database and hosting are ready"}, r.UpdatedAt)
	})
}

// allReady reports whether rs (later rows of a kind win) hold every
// resource kind as ready.
func allReady(rs []models.CompanyResource) bool {
	status := map[models.ResourceKind]models.ResourceStatus{}
	for _, r := range rs {
		status[r.Kind] = r.Status
	}
	for _, k := range models.ResourceKinds {
		if status[k] != models.ResourceReady {
			return false
		}
	}
	return true
}

// ListResources returns the rows of the scope's company's resources.
func (s Companies) ListResources(ctx context.Context, c CompanyScope) ([]models.CompanyResource, error) {
	var rs []models.CompanyResource
	if err := c.check("list resources"); err != nil {
		return nil, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ?", c.id).Order("kind").Find(&rs).Error
	return rs, wrap("list resources", err)
}

// ListLiveCompanies returns every company that is not archived, across
// tenants (operators' health check only).
func (s Companies) ListLiveCompanies(ctx context.Context, admin AdminScope) ([]models.Company, error) {
	var cs []models.Company
	if err := admin.check("list live companies"); err != nil {
		return nil, err
	}
	err := s.db.WithContext(ctx).Where("status <> ?", models.CompanyArchived).Order("created_at, id").Find(&cs).Error
	return cs, wrap("list live companies", err)
}
