package contract

import "holdco/models"

// Names of the provisioning workflow and its messages.
const (
	ProvisionWorkflowName = "Provision"
	// SignalHeal re-provisions resources that failed (or, sent with
	// signal-with-start to a finished workflow, checks all of them again).
	SignalHeal = "heal"
	// QueryResources answers the status of each resource in this run
	// (map[models.ResourceKind]models.ResourceStatus).
	QueryResources = "resources"
)

// ProvisionWorkflowID is the one workflow id per company, so a duplicate
// start joins the running workflow instead of starting a second.
func ProvisionWorkflowID(companyID string) string { return "provision:" + companyID }

// ProvisionInput starts provisioning of a company.
type ProvisionInput struct {
	CompanyID      string
	ConglomerateID string
	// SeedRepo false is an import resume: never seed the repository.
	SeedRepo bool
}

// ProvisionResult locates the provisioned resources.
type ProvisionResult struct {
	Refs map[models.ResourceKind]string
}

// ResourceInput names one resource of one company (the ProvisionResource
// activity).
type ResourceInput struct {
	CompanyID string
	Kind      models.ResourceKind
	// SeedRepo false is an import resume: the repository is not seeded.
	SeedRepo bool
}

// ResourceResult is a provisioned resource.
type ResourceResult struct {
	Kind models.ResourceKind
	Ref  string
}

// ErrCompanyGone stops provisioning of a company that no longer exists or
// was archived; it is not retried.
const ErrCompanyGone = "CompanyGone"
