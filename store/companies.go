package store

import (
	"context"
	"fmt"
	"strings"

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
	rows, err := rows(ctx, s.db, getCompanySQL, id)
	if err != nil {
		return models.Company{}, wrap("get company", err)
	}
	defer func() { _ = rows.Close() }()
	if !rows.Next() {
		err := rows.Err()
		if err == nil {
			err = models.ErrNotFound
		}
		return models.Company{}, wrap("get company", err)
	}
	if err := rows.Scan(companyDest(&c)...); err != nil {
		return models.Company{}, wrap("get company", err)
	}
	return c, wrap("get company", rows.Close())
}

// companyColumns are the companies table's columns in the order of
// companyDest (a test checks them against the model's). getCompany runs
// for every request that names a company (the authorization step); it
// scans with database/sql directly, without GORM's reflection per column.
var companyColumns = []string{"id", "conglomerate_id", "name", "handle", "status", "idea", "mission", "chat_disabled",
	"generation", "archived_at", "created_at", "updated_at"}

var getCompanySQL = newFixedSQL("SELECT " + strings.Join(companyColumns, ", ") + " FROM companies WHERE id = ?")

// companyDest are c's fields as Scan's destinations, in companyColumns's
// order; a NULL conglomerate (deleted with its account) reads as "", as
// GORM reads it.
func companyDest(c *models.Company) []any {
	return []any{&c.ID, emptyIfNull{&c.ConglomerateID}, &c.Name, &c.Handle, &c.Status, &c.Idea, &c.Mission, &c.ChatDisabled,
		&c.Generation, &c.ArchivedAt, &c.CreatedAt, &c.UpdatedAt}
}

// emptyIfNull scans a nullable text column into a string, NULL as "".
type emptyIfNull struct{ s *string }

func (e emptyIfNull) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*e.s = ""
	case string:
		*e.s = v
	case []byte:
		*e.s = string(v)
	default:
		return fmt.Errorf("store: a text column holds %T", v)
	}
	return nil
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
