package companies

import (
	"context"
	"errors"

	"holdco/models"
	"holdco/service"
)

// DiagnoseCompany checks one company's resources against reality, as
// DiagnoseCompanies does for all (operators only; `holdco admin health
// COMPANY`). An archived or missing company is not_found.
func (s *Service) DiagnoseCompany(ctx context.Context, companyID string) (CompanyDiagnosis, error) {
	admin, err := service.RequireAdmin(ctx)
	if err != nil {
		return CompanyDiagnosis{}, err
	}
	_, c, err := s.store.AdminCompany(ctx, admin, companyID)
	if errors.Is(err, models.ErrNotFound) || err == nil && c.Status == models.CompanyArchived {
		return CompanyDiagnosis{}, models.Errorf(models.CodeNotFound, "Company %s does not exist.", companyID)
	}
	if err != nil {
		return CompanyDiagnosis{}, err
	}
	ds, err := s.diagnose(ctx, admin, []models.Company{c})
	if err != nil {
		return CompanyDiagnosis{}, err
	}
	return ds[0], nil
}

// EnableUserAuth clears the revocation of a company's app sign-in client
// (operators only; `holdco admin user-auth enable`): the undo of
// DisableUserAuth. The client outlives its company, so a deleted
// company's client is enabled too (answered with its company id only). A
// company without a client is not_found.
func (s *Service) EnableUserAuth(ctx context.Context, companyID string) (models.CompanyOIDCClient, error) {
	admin, err := service.RequireAdmin(ctx)
	if err != nil {
		return models.CompanyOIDCClient{}, err
	}
	err = s.store.OAuth().EnableCompanyOIDCClient(ctx, admin, companyID)
	if errors.Is(err, models.ErrNotFound) {
		return models.CompanyOIDCClient{}, models.Errorf(models.CodeNotFound, "Company %s has no app sign-in client.", companyID)
	}
	if err != nil {
		return models.CompanyOIDCClient{}, err
	}
	scope, _, err := s.store.AdminCompany(ctx, admin, companyID)
	if errors.Is(err, models.ErrNotFound) {
		return models.CompanyOIDCClient{CompanyID: companyID}, nil
	}
	if err != nil {
		return models.CompanyOIDCClient{}, err
	}
	return s.store.OAuth().GetCompanyOIDCClient(ctx, scope)
}
