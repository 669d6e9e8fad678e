package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"holdco/models"
)

// LiveCompanyKey returns the company's live API key, or models.ErrNotFound.
func (s Identity) LiveCompanyKey(ctx context.Context, c CompanyScope) (models.CompanyAPIKey, error) {
	var k models.CompanyAPIKey
	if err := c.check("get company key"); err != nil {
		return k, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ? AND revoked_at IS NULL", c.id).Take(&k).Error
	return k, wrap("get company key", err)
}

// CreateCompanyKeyIfNone stores k as the scope's company key unless a live
// one exists, and returns the live key either way (two first reads racing
// end with one key). The scope's company wins over k.CompanyID.
func (s Identity) CreateCompanyKeyIfNone(ctx context.Context, c CompanyScope, k models.CompanyAPIKey) (models.CompanyAPIKey, error) {
	if err := c.check("create company key"); err != nil {
		return k, err
	}
	k.CompanyID, k.CreatedAt = c.id, now()
	err := s.db.WithContext(ctx).Create(&k).Error
	if err != nil && isUniqueViolation(err) {
		return s.LiveCompanyKey(ctx, c)
	}
	return k, wrap("create company key", err)
}

// RotateCompanyKey revokes the scope's company's live key (if any) and
// stores k for it, in one transaction.
func (s Identity) RotateCompanyKey(ctx context.Context, c CompanyScope, k models.CompanyAPIKey, at time.Time) (models.CompanyAPIKey, error) {
	if err := c.check("rotate company key"); err != nil {
		return k, err
	}
	k.CompanyID, k.CreatedAt = c.id, now()
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&models.CompanyAPIKey{}).Where("company_id = ? AND revoked_at IS NULL", k.CompanyID).
			Update("revoked_at", at).Error; err != nil {
			return err
		}
		return tx.Create(&k).Error
	})
	return k, wrap("rotate company key", err)
}

// CompanyKeyByHash finds a company key by the hash of its raw value,
// revoked or not, with its company (archived or not): how a company key's
// principal is found.
func (s Identity) CompanyKeyByHash(ctx context.Context, hash string) (models.CompanyAPIKey, models.Company, error) {
	var k models.CompanyAPIKey
	if err := s.db.WithContext(ctx).Where("token_hash = ?", hash).Take(&k).Error; err != nil {
		return k, models.Company{}, wrap("get company key by hash", err)
	}
	c, err := s.store().getCompany(ctx, k.CompanyID)
	return k, c, err
}
