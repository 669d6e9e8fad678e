package models

import "time"

// ResourceKind names a piece of a company's provisioned infrastructure.
type ResourceKind string

const (
	ResourceRepository ResourceKind = "repository"
	ResourceDatabase   ResourceKind = "database"
	ResourceHosting    ResourceKind = "hosting"
)

// ResourceKinds lists every kind, in provisioning order.
var ResourceKinds = []ResourceKind{ResourceRepository, ResourceDatabase, ResourceHosting}

// ResourceStatus is a resource's provisioning state. A resource without a
// row is reported as not_provisioned.
type ResourceStatus string

const (
	ResourceNotProvisioned ResourceStatus = "not_provisioned"
	ResourceProvisioning   ResourceStatus = "provisioning"
	ResourceReady          ResourceStatus = "ready"
	ResourceFailed         ResourceStatus = "failed"
)

// CompanyResource is the current state of one resource of a company, kept
// by the provisioning activities.
type CompanyResource struct {
	CompanyID string         `gorm:"primaryKey;size:36"`
	Kind      ResourceKind   `gorm:"primaryKey;size:16"`
	Status    ResourceStatus `gorm:"size:16;not null"`
	// Ref locates the resource (repository path, database name, site URL);
	// never a secret.
	Ref       string `gorm:"size:500;not null"`
	LastError string `gorm:"type:text;not null"`
	Attempts  int    `gorm:"not null"`
	UpdatedAt time.Time
}
