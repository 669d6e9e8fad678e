package models

import "time"

// CompanyProvisioning is the durable intent to provision a company: it is
// written in the same transaction as the company, so a crash cannot leave a
// company that nobody will provision. StartedAt is set once the
// provisioning workflow is known to exist; until then the worker's sweeper
// starts it.
type CompanyProvisioning struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	// SeedRepo records whether the company's repository may be seeded with
	// a README: true for companies created here, false once provisioning
	// was resumed as an import (never seeded again, not even by heal).
	SeedRepo    bool      `gorm:"not null"`
	RequestedAt time.Time `gorm:"not null"`
	StartedAt   *time.Time
}

// TableName keeps the singular name: one row per company.
func (CompanyProvisioning) TableName() string { return "company_provisioning" }

// PendingProvisioning is a company whose provisioning was asked for but
// not yet started.
type PendingProvisioning struct {
	Company  Company
	SeedRepo bool
}

// CompanyCreateKey remembers which company a POST with an Idempotency-Key
// created, so a client that lost the response can retry safely.
type CompanyCreateKey struct {
	// KeyHash is the SHA-256 of the caller, the conglomerate and the key:
	// the key itself is never stored.
	KeyHash        string `gorm:"primaryKey;size:64"`
	ConglomerateID string `gorm:"size:36;not null"`
	UserID         string `gorm:"size:36;not null"`
	// Fingerprint is the SHA-256 of the request's fields; a retry with
	// other fields under the same key is refused.
	Fingerprint string    `gorm:"size:64;not null"`
	CompanyID   string    `gorm:"size:36;not null"`
	CreatedAt   time.Time `gorm:"not null"`
	ExpiresAt   time.Time `gorm:"not null;index:idx_company_create_keys_expires_at"`
}
