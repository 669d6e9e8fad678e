package store

import (
	"context"
	"time"

	"gorm.io/gorm"

	"holdco/models"
)

// LiveCompanyKey returns the company's live API key, or models.ErrNotFound.
func (s *Store) LiveCompanyKey(ctx context.Context, companyID string) (models.CompanyAPIKey, error) {
	var k models.CompanyAPIKey
	err := s.db.WithContext(ctx).Where("company_id = ? AND revoked_at IS NULL", companyID).Take(&k).Error
	return k, wrap("get company key", err)
}

// CreateCompanyKeyIfNone stores k as the company's key unless a live one
// exists, and returns the live key either way (two first reads racing end
// with one key).
func (s *Store) CreateCompanyKeyIfNone(ctx context.Context, k models.CompanyAPIKey) (models.CompanyAPIKey, error) {
	k.CreatedAt = now()
	err := s.db.WithContext(ctx).Create(&k).Error
	if err != nil && isUniqueViolation(err) {
		return s.LiveCompanyKey(ctx, k.CompanyID)
	}
	return k, wrap("create company key", err)
}

// RotateCompanyKey revokes the live key (if any) and stores k, in one
// transaction.
func (s *Store) RotateCompanyKey(ctx context.Context, k models.CompanyAPIKey, at time.Time) (models.CompanyAPIKey, error) {
	k.CreatedAt = now()
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
// revoked or not.
func (s *Store) CompanyKeyByHash(ctx context.Context, hash string) (models.CompanyAPIKey, error) {
	var k models.CompanyAPIKey
	err := s.db.WithContext(ctx).Where("token_hash = ?", hash).Take(&k).Error
	return k, wrap("get company key by hash", err)
}
