package models

import "time"

// CompanyOIDCClient is the OpenID client a company's own app uses to sign
// its users in. It has no foreign key to companies on purpose: a revocation
// (RevokedAt, RevokedReason, RevokedConglomerateID) must outlive archiving
// or deleting the company row. Provisioning creates it and never clears a
// revocation; only the operator's `holdco admin user-auth enable` does.
type CompanyOIDCClient struct {
	CompanyID             string `gorm:"primaryKey;size:36"`
	ClientID              string `gorm:"size:64;not null;uniqueIndex:idx_company_oidc_clients_client_id"`
	SecretHash            string `gorm:"size:64;not null"`
	CreatedAt             time.Time
	RevokedAt             *time.Time
	RevokedReason         string `gorm:"size:500;not null"`
	RevokedConglomerateID string `gorm:"size:36;not null"`
}

// TableName pins the table name (gorm would derive company_o_id_c_clients).
func (CompanyOIDCClient) TableName() string { return "company_oidc_clients" }
