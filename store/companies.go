package store

import (
	"context"
	"fmt"

	"holdco/models"
)

// CreateCompany creates a company in the conglomerate; the scope's
// conglomerate wins over company.ConglomerateID. The id and status (active) are
// filled when empty. A taken handle gives models.ErrDuplicate, an unknown
// conglomerate models.ErrNotFound, and a malformed handle or status an
// invalid_argument *models.Error.
func (s Companies) CreateCompany(ctx context.Context, cong ConglomerateScope, company models.Company) (models.Company, error) {
	if err := cong.check("create company"); err != nil {
		return models.Company{}, err
	}
	company.ConglomerateID = cong.id
	if !models.ValidHandle(company.Handle) {
		return models.Company{}, fmt.Errorf("store: create company: %w", models.Errorf(models.CodeInvalidArgument,
			"A handle is 1 to %d lower-case letters, digits or inner hyphens.", models.MaxHandleLen).WithField("handle"))
	}
	if company.Status != "" && !company.Status.Valid() {
		return models.Company{}, fmt.Errorf("store: create company: %w", models.Errorf(models.CodeInvalidArgument,
			"Unknown company status %q.", company.Status).WithField("status"))
	}
	err := s.store().InTx(ctx, func(tx *Store) error {
		if err := tx.db.WithContext(ctx).Create(&company).Error; err != nil {
			return wrap("create company", err)
		}
		return tx.createAnalyticsKey(ctx, company.ID)
	})
	if err != nil {
		return models.Company{}, err
	}
	return company, nil
}

// GetCompany reads the scope's company (archived or not), or
// models.ErrNotFound.
func (s Companies) GetCompany(ctx context.Context, c CompanyScope) (models.Company, error) {
	if err := c.check("get company"); err != nil {
		return models.Company{}, err
	}
	return s.store().getCompany(ctx, c.id)
}

// getCompany returns a company by id whoever asks: only the authorization
// step and the system producers use it.
func (s *Store) getCompany(ctx context.Context, id string) (models.Company, error) {
	var c models.Company
	if err := s.db.WithContext(ctx).Where("id = ?", id).Take(&c).Error; err != nil {
		return models.Company{}, wrap("get company", err)
	}
	return c, nil
}

// ListCompanies returns the conglomerate's companies, oldest first;
// archived ones only when includeArchived is set.
func (s Companies) ListCompanies(ctx context.Context, cong ConglomerateScope, includeArchived bool) ([]models.Company, error) {
	if err := cong.check("list companies"); err != nil {
		return nil, err
	}
	q := s.db.WithContext(ctx).Where("conglomerate_id = ?", cong.id)
	if !includeArchived {
		q = q.Where("status <> ?", models.CompanyArchived)
	}
	companies := []models.Company{}
	if err := q.Order("created_at, id").Find(&companies).Error; err != nil {
		return nil, wrap("list companies", err)
	}
	return companies, nil
}

// SiteOnline reports whether a company's site may be served: the company
// exists and is not archived (archiving, also by deleting the account,
// takes its pages offline; its resources are kept).
func (s Companies) SiteOnline(ctx context.Context, companyID string) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.Company{}).
		Where("id = ? AND status <> ?", companyID, models.CompanyArchived).Count(&n).Error
	return n > 0, wrap("site online", err)
}
