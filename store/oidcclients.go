package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"

	"holdco/models"
)

// EnsureCompanyOIDCClient creates the company's client unless one exists
// (revoked or not) and returns the stored row: provisioning can run any
// number of times without minting a second client or clearing a
// revocation.
func (s *Store) EnsureCompanyOIDCClient(ctx context.Context, c models.CompanyOIDCClient) (models.CompanyOIDCClient, error) {
	c.CreatedAt = now()
	db := s.db.WithContext(ctx)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&c).Error; err != nil {
		return c, wrap("ensure company oidc client", err)
	}
	return s.GetCompanyOIDCClient(ctx, c.CompanyID)
}

// GetCompanyOIDCClient returns the company's client, or models.ErrNotFound.
func (s *Store) GetCompanyOIDCClient(ctx context.Context, companyID string) (models.CompanyOIDCClient, error) {
	var c models.CompanyOIDCClient
	err := s.db.WithContext(ctx).Where("company_id = ?", companyID).Take(&c).Error
	return c, wrap("get company oidc client", err)
}

// RevokeCompanyOIDCClient stamps the revocation on the company's client,
// creating a revoked placeholder when none exists yet, so a later
// provisioning finds it revoked. A second revocation keeps the first time.
func (s *Store) RevokeCompanyOIDCClient(ctx context.Context, placeholder models.CompanyOIDCClient, reason, conglomerateID string, at time.Time) (models.CompanyOIDCClient, error) {
	placeholder.CreatedAt, placeholder.RevokedAt = now(), &at
	placeholder.RevokedReason, placeholder.RevokedConglomerateID = reason, conglomerateID
	db := s.db.WithContext(ctx)
	err := db.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "company_id"}},
		DoUpdates: clause.Assignments(map[string]any{
			"revoked_reason": reason, "revoked_conglomerate_id": conglomerateID,
			"revoked_at": clause.Expr{SQL: "COALESCE(" + s.existing("company_oidc_clients", "revoked_at") + ", ?)", Vars: []any{at}},
		}),
	}).Create(&placeholder).Error
	if err != nil {
		return placeholder, wrap("revoke company oidc client", err)
	}
	return s.GetCompanyOIDCClient(ctx, placeholder.CompanyID)
}

// EnableCompanyOIDCClient clears a revocation (the operator's un-revoke).
func (s *Store) EnableCompanyOIDCClient(ctx context.Context, companyID string) error {
	res := s.db.WithContext(ctx).Model(&models.CompanyOIDCClient{}).Where("company_id = ?", companyID).
		Updates(map[string]any{"revoked_at": nil, "revoked_reason": "", "revoked_conglomerate_id": ""})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("enable company oidc client", models.ErrNotFound)
	}
	return wrap("enable company oidc client", res.Error)
}
