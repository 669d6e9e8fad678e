package contract

import (
	"time"

	"holdco/models"
)

// DiagnoseWorkflowName is the admin health check: it checks provisioned
// resources against reality on the worker, where the providers live, so
// the API process never runs git, database or site checks itself.
const DiagnoseWorkflowName = "Diagnose"

// DiagnoseWorkflowID names one diagnosis; requestID is fresh per request
// (a UUID), so concurrent health checks never join each other's results.
func DiagnoseWorkflowID(requestID string) string { return "diagnose:" + requestID }

// DiagnoseTimeout bounds a whole diagnosis: the workflow's execution
// timeout, and how long a request waits for its result.
const DiagnoseTimeout = time.Minute

// DiagnoseInput lists the resources to check, per company.
type DiagnoseInput struct {
	Companies []CompanyCheck
}

// CompanyCheck is the resources of one company to check.
type CompanyCheck struct {
	CompanyID string
	// Handle names the company's site (the hosting check needs it).
	Handle string
	Kinds  []models.ResourceKind
}

// DiagnoseResult holds one CompanyCheckResult per CompanyCheck, in order.
type DiagnoseResult struct {
	Companies []CompanyCheckResult
}

// CompanyCheckResult is the outcome of one company's checks: the error
// text of each resource whose check failed; a checked resource missing
// from Problems is healthy.
type CompanyCheckResult struct {
	CompanyID string
	Problems  map[models.ResourceKind]string
}
