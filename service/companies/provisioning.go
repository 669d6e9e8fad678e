package companies

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"holdco/models"
	"holdco/observability"
	"holdco/service"
	"holdco/store"
	"holdco/workflows/contract"
)

// ProvisionTrigger identifies the provisioning workflow run a request
// started or joined.
type ProvisionTrigger struct {
	WorkflowID string
	RunID      string
}

// provisionOptions starts or joins the company's one provisioning
// workflow: a running provisioning is joined, never doubled; a finished one
// may run again.
func provisionOptions(c models.Company) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:                       contract.ProvisionWorkflowID(c.ID),
		TaskQueue:                contract.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			contract.CompanyIDKey.ValueSet(c.ID),
			contract.ConglomerateIDKey.ValueSet(c.ConglomerateID),
			contract.ProvisioningStateKey.ValueSet(contract.ProvisioningStateProvisioning),
		),
	}
}

// requestProvisioning sends the heal signal to the company's provisioning
// workflow, starting a run when none is running (signal-with-start). A
// run parked with failed resources retries them at once; a run still
// working is joined (it answers the signal by retrying whatever it ends
// up failing); with no run, a new one ensures every resource. The
// repository is seeded only when the company's record allows it.
func (s *Service) requestProvisioning(ctx context.Context, scope store.CompanyScope, c models.Company) (ProvisionTrigger, error) {
	if s.temporal == nil {
		return ProvisionTrigger{}, models.Errorf(models.CodeUpstreamUnavailable, "Provisioning is not available on this server.")
	}
	seed, err := s.store.Companies().ProvisioningSeedRepo(ctx, scope)
	if err != nil {
		return ProvisionTrigger{}, err
	}
	run, err := s.temporal.SignalWithStartWorkflow(ctx, contract.ProvisionWorkflowID(c.ID), contract.SignalHeal, nil, provisionOptions(c),
		contract.ProvisionWorkflowName, contract.ProvisionInput{CompanyID: c.ID, ConglomerateID: c.ConglomerateID, SeedRepo: seed})
	if err != nil {
		return ProvisionTrigger{}, models.Errorf(models.CodeUpstreamUnavailable, "Provisioning could not be started; retry shortly.").Wrap(err)
	}
	if err := s.store.Companies().MarkProvisioningStarted(ctx, scope, s.now()); err != nil {
		return ProvisionTrigger{}, err
	}
	return ProvisionTrigger{WorkflowID: run.GetID(), RunID: run.GetRunID()}, nil
}

// ProvisionCompany (re)starts provisioning of a company, whatever its
// status (a paused or imported company can be provisioned): failed
// resources are retried, a run still working is joined. seedRepo false is
// an import resume: the company's repository is never seeded from then on,
// not even by a later heal.
func (s *Service) ProvisionCompany(ctx context.Context, companyID string, seedRepo bool) (ProvisionTrigger, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return ProvisionTrigger{}, err
	}
	if !seedRepo {
		if err := s.store.Companies().RecordImportResume(ctx, c.Scope, s.now()); err != nil {
			return ProvisionTrigger{}, err
		}
	}
	return s.requestProvisioning(ctx, c.Scope, c.Company)
}

// ResourceView is one resource's recorded state.
type ResourceView struct {
	Kind   models.ResourceKind
	Status models.ResourceStatus
	Ref    string
	// ErrorClass is the short class of LastError (ErrorClass* constants).
	ErrorClass string
	// LastError is the raw error; operators only (tenantView clears it).
	LastError string
	Attempts  int
	UpdatedAt *time.Time
}

// CompanyResources reports the repository, database and hosting project;
// a resource without a row is not_provisioned.
func (s *Service) CompanyResources(ctx context.Context, companyID string) ([]ResourceView, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return nil, err
	}
	views, err := s.resourceViews(ctx, c.Scope)
	for i := range views {
		views[i] = tenantView(views[i])
	}
	return views, err
}

func (s *Service) resourceViews(ctx context.Context, c store.CompanyScope) ([]ResourceView, error) {
	rows, err := s.store.Companies().ListResources(ctx, c)
	if err != nil {
		return nil, err
	}
	return resourceViewsOf(rows), nil
}

// resourceViewsOf is the view of each kind of models.ResourceKinds from
// the company's resource rows: a kind without a row is not provisioned.
func resourceViewsOf(rows []models.CompanyResource) []ResourceView {
	byKind := map[models.ResourceKind]models.CompanyResource{}
	for _, r := range rows {
		byKind[r.Kind] = r
	}
	out := make([]ResourceView, 0, len(models.ResourceKinds))
	for _, kind := range models.ResourceKinds {
		r, ok := byKind[kind]
		if !ok {
			out = append(out, ResourceView{Kind: kind, Status: models.ResourceNotProvisioned})
			continue
		}
		at := r.UpdatedAt
		out = append(out, ResourceView{Kind: kind, Status: r.Status, Ref: r.Ref, ErrorClass: errorClass(r.Status, r.LastError),
			LastError: r.LastError, Attempts: r.Attempts, UpdatedAt: &at})
	}
	return out
}

// ResourceDiagnosis compares a resource's row with reality.
type ResourceDiagnosis struct {
	ResourceView
	Healthy bool
	Problem string // why it is not healthy
}

// CompanyDiagnosis is the health of one company's resources.
type CompanyDiagnosis struct {
	CompanyID, ConglomerateID, Handle string
	Healthy                           bool
	Resources                         []ResourceDiagnosis
}

// DiagnoseCompanies checks every resource of every company that is not
// archived against reality (operators only).
func (s *Service) DiagnoseCompanies(ctx context.Context) ([]CompanyDiagnosis, error) {
	admin, err := service.RequireAdmin(ctx)
	if err != nil {
		return nil, err
	}
	companies, err := s.store.Companies().ListLiveCompanies(ctx, admin)
	if err != nil {
		return nil, err
	}
	return s.diagnose(ctx, admin, companies)
}

// diagnose compares each company's rows with reality. Failed and missing
// resources are unhealthy from their rows alone; the others are checked by
// the Diagnose workflow on the worker, where the providers are.
func (s *Service) diagnose(ctx context.Context, admin store.AdminScope, companies []models.Company) ([]CompanyDiagnosis, error) {
	out := make([]CompanyDiagnosis, 0, len(companies))
	var checks []contract.CompanyCheck
	for _, c := range companies {
		views, err := s.resourceViews(ctx, admin.CompanyScope(c))
		if err != nil {
			return nil, err
		}
		d := CompanyDiagnosis{CompanyID: c.ID, ConglomerateID: c.ConglomerateID, Handle: c.Handle}
		check := contract.CompanyCheck{CompanyID: c.ID, Handle: c.Handle}
		for _, v := range views {
			rd := ResourceDiagnosis{ResourceView: v}
			switch v.Status {
			case models.ResourceNotProvisioned:
				rd.Problem = "never provisioned"
			case models.ResourceFailed:
				rd.Problem = "provisioning failed: " + v.LastError
			default:
				check.Kinds = append(check.Kinds, v.Kind)
			}
			d.Resources = append(d.Resources, rd)
		}
		if len(check.Kinds) > 0 {
			checks = append(checks, check)
		}
		out = append(out, d)
	}
	problems, checked, err := s.checkResources(ctx, checks)
	if err != nil {
		return nil, err
	}
	for i := range out {
		d := &out[i]
		d.Healthy = true
		for j := range d.Resources {
			rd := &d.Resources[j]
			if rd.Problem == "" {
				if problem, failed := problems[d.CompanyID][rd.Kind]; !checked {
					rd.Problem = "resources cannot be checked on this server"
				} else if failed {
					rd.Problem = "check failed: " + problem
				}
			}
			rd.Healthy = rd.Problem == ""
			d.Healthy = d.Healthy && rd.Healthy
		}
	}
	return out, nil
}

// checkResources runs the Diagnose workflow and waits for it, at most
// contract.DiagnoseTimeout; the problems are by company and kind. checked
// is false when this server has no Temporal client to run checks with.
func (s *Service) checkResources(ctx context.Context, checks []contract.CompanyCheck) (problems map[string]map[models.ResourceKind]string, checked bool, err error) {
	if len(checks) == 0 {
		return nil, true, nil
	}
	if s.temporal == nil {
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, contract.DiagnoseTimeout)
	defer cancel()
	run, err := s.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       contract.DiagnoseWorkflowID(uuid.NewString()),
		TaskQueue:                contract.TaskQueue,
		WorkflowExecutionTimeout: contract.DiagnoseTimeout,
	}, contract.DiagnoseWorkflowName, contract.DiagnoseInput{Companies: checks})
	if err != nil {
		return nil, false, models.Errorf(models.CodeUpstreamUnavailable, "Resource checks could not be started; retry shortly.").Wrap(err)
	}
	var res contract.DiagnoseResult
	if err := run.Get(ctx, &res); err != nil {
		return nil, false, models.Errorf(models.CodeUpstreamUnavailable, "Resource checks did not finish; retry shortly.").Wrap(err)
	}
	problems = make(map[string]map[models.ResourceKind]string, len(res.Companies))
	for _, r := range res.Companies {
		problems[r.CompanyID] = r.Problems
	}
	return problems, true, nil
}

// HealResult is a diagnosis and whether provisioning was asked to heal.
type HealResult struct {
	CompanyDiagnosis
	HealRequested bool
	WorkflowID    string
}

// HealCompany diagnoses a company and, when something is failed or
// missing, re-provisions it through the same workflow (signal-with-start:
// a run waiting for heal retries its failed resources, otherwise a new run
// ensures every resource again). A recreated repository is seeded only
// when the company was created with seeding.
func (s *Service) HealCompany(ctx context.Context, companyID string) (HealResult, error) {
	admin, err := service.RequireAdmin(ctx)
	if err != nil {
		return HealResult{}, err
	}
	scope, c, err := s.store.AdminCompany(ctx, admin, companyID)
	if errors.Is(err, models.ErrNotFound) || err == nil && c.Status == models.CompanyArchived {
		return HealResult{}, models.Errorf(models.CodeNotFound, "Company %s does not exist.", companyID)
	}
	if err != nil {
		return HealResult{}, err
	}
	ds, err := s.diagnose(ctx, admin, []models.Company{c})
	if err != nil {
		return HealResult{}, err
	}
	d := ds[0]
	res := HealResult{CompanyDiagnosis: d, WorkflowID: contract.ProvisionWorkflowID(c.ID)}
	if d.Healthy {
		observability.Healed(false)
		return res, nil
	}
	if _, err := s.requestProvisioning(ctx, scope, c); err != nil {
		return res, err
	}
	res.HealRequested = true
	observability.Healed(true)
	return res, nil
}
