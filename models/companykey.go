package models

import (
	"time"

	"gorm.io/gorm"
)

// CompanyAPIKey is a company's permanent API key (svc_c_v1_…). Unlike user
// credentials it is shown again on every read (GET /companies/{id}/api-key),
// so besides the SHA-256 hash used to authenticate, the raw value is kept
// sealed (AES-GCM under the instance key). Rotation revokes the old row and
// adds a new one.
type CompanyAPIKey struct {
	ID        string `gorm:"primaryKey;size:36"`
	CompanyID string `gorm:"size:36;not null;index:idx_company_api_keys_company_id"`
	TokenHash string `gorm:"size:64;not null;uniqueIndex:idx_company_api_keys_token_hash"`
	Sealed    []byte `gorm:"not null"`
	CreatedAt time.Time
	RevokedAt *time.Time
}

func (k *CompanyAPIKey) BeforeCreate(*gorm.DB) error { ensureID(&k.ID); return nil }
