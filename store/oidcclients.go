package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm/clause"

	"holdco/models"
)

// EnsureCompanyOIDCClient creates the company's client unless one exists
// (revoked or not) and returns the stored row: provisioning can run any
// number of times without minting a second client or clearing a
// revocation.
func (s OAuth) EnsureCompanyOIDCClient(ctx context.Context, sc CompanyScope, c models.CompanyOIDCClient) (models.CompanyOIDCClient, error) {
	if err := sc.check("ensure company oidc client"); err != nil {
		return c, err
	}
	c.CompanyID, c.CreatedAt = sc.id, now()
	db := s.db.WithContext(ctx)
	if err := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&c).Error; err != nil {
		return c, wrap("ensure company oidc client", err)
	}
	return s.GetCompanyOIDCClient(ctx, sc)
}

// GetCompanyOIDCClient returns the scope's company's client, or
// models.ErrNotFound.
func (s OAuth) GetCompanyOIDCClient(ctx context.Context, sc CompanyScope) (models.CompanyOIDCClient, error) {
	var c models.CompanyOIDCClient
	if err := sc.check("get company oidc client"); err != nil {
		return c, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ?", sc.id).Take(&c).Error
	return c, wrap("get company oidc client", err)
}

// RevokeCompanyOIDCClient stamps the revocation on the company's client,
// creating a revoked placeholder when none exists yet, so a later
// provisioning finds it revoked. A second revocation keeps the first time.
// It is an operator's action: admin authorizes it; sc names the company
// (the operator reaches any), whose conglomerate is recorded.
func (s OAuth) RevokeCompanyOIDCClient(ctx context.Context, admin AdminScope, sc CompanyScope, placeholder models.CompanyOIDCClient, reason string, at time.Time) (models.CompanyOIDCClient, error) {
	if err := errors.Join(admin.check("revoke company oidc client"), sc.check("revoke company oidc client")); err != nil {
		return placeholder, err
	}
	conglomerateID := sc.conglomerateID
	placeholder.CompanyID = sc.id
	placeholder.CreatedAt, placeholder.RevokedAt = now(), &at
	placeholder.RevokedReason, placeholder.RevokedConglomerateID = reason, conglomerateID
	db := s.db.WithContext(ctx)
	err := db.Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "company_id"}},
		DoUpdates: clause.Assignments(map[string]any{
			"revoked_reason": reason, "revoked_conglomerate_id": conglomerateID,
			"revoked_at": clause.Expr{SQL: "COALESCE(" + s.store().existing("company_oidc_clients", "revoked_at") + ", ?)", Vars: []any{at}},
		}),
	}).Create(&placeholder).Error
	if err != nil {
		return placeholder, wrap("revoke company oidc client", err)
	}
	return s.GetCompanyOIDCClient(ctx, sc)
}

// EnableCompanyOIDCClient clears a revocation (the operator's un-revoke).
func (s OAuth) EnableCompanyOIDCClient(ctx context.Context, admin AdminScope, companyID string) error {
	if err := admin.check("enable company oidc client"); err != nil {
		return err
	}
	res := s.db.WithContext(ctx).Model(&models.CompanyOIDCClient{}).Where("company_id = ?", companyID).
		Updates(map[string]any{"revoked_at": nil, "revoked_reason": "", "revoked_conglomerate_id": ""})
	if res.Error == nil && res.RowsAffected == 0 {
		return wrap("enable company oidc client", models.ErrNotFound)
	}
	return wrap("enable company oidc client", res.Error)
}
