package companies

import (
	"context"
	"errors"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"holdco/models"
	"holdco/service"
	"holdco/workflows"
)

// ResourceChecker really checks a company resource (activities.Provisioning).
type ResourceChecker interface {
	CheckResource(ctx context.Context, c models.Company, kind models.ResourceKind) error
}

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
		ID:                       workflows.ProvisionWorkflowID(c.ID),
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			workflows.CompanyIDKey.ValueSet(c.ID),
			workflows.ConglomerateIDKey.ValueSet(c.ConglomerateID),
			workflows.ProvisioningStateKey.ValueSet("provisioning"),
		),
	}
}

// requestProvisioning sends the heal signal to the company's provisioning
// workflow, starting a run when none is running (signal-with-start). A
// run parked with failed resources retries them at once; a run still
// working is joined (it answers the signal by retrying whatever it ends
// up failing); with no run, a new one ensures every resource. The
// repository is seeded only when the company's record allows it.
func (s *Service) requestProvisioning(ctx context.Context, c models.Company) (ProvisionTrigger, error) {
	if s.temporal == nil {
		return ProvisionTrigger{}, models.Errorf(models.CodeUpstreamUnavailable, "Provisioning is not available on this server.")
	}
	seed, err := s.store.ProvisioningSeedRepo(ctx, c.ID)
	if err != nil {
		return ProvisionTrigger{}, err
	}
	run, err := s.temporal.SignalWithStartWorkflow(ctx, workflows.ProvisionWorkflowID(c.ID), workflows.SignalHeal, nil, provisionOptions(c),
		workflows.ProvisionWorkflowName, workflows.ProvisionInput{CompanyID: c.ID, ConglomerateID: c.ConglomerateID, SeedRepo: seed})
	if err != nil {
		return ProvisionTrigger{}, models.Errorf(models.CodeUpstreamUnavailable, "Provisioning could not be started; retry shortly.").Wrap(err)
	}
	if err := s.store.MarkProvisioningStarted(ctx, c.ID, s.now()); err != nil {
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
		if err := s.store.RecordImportResume(ctx, c.ID, s.now()); err != nil {
			return ProvisionTrigger{}, err
		}
	}
	return s.requestProvisioning(ctx, c)
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
	views, err := s.resourceViews(ctx, c.ID)
	for i := range views {
		views[i] = tenantView(views[i])
	}
	return views, err
}

func (s *Service) resourceViews(ctx context.Context, companyID string) ([]ResourceView, error) {
	rows, err := s.store.ListResources(ctx, companyID)
	if err != nil {
		return nil, err
	}
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
	return out, nil
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
	if err := service.RequireAdmin(ctx); err != nil {
		return nil, err
	}
	companies, err := s.store.ListLiveCompanies(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]CompanyDiagnosis, len(companies))
	errs := make([]error, len(companies))
	sem := make(chan struct{}, 8) // bounded: checks touch disks, databases and sites
	var wg sync.WaitGroup
	for i, c := range companies {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = s.diagnose(ctx, c)
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

func (s *Service) diagnose(ctx context.Context, c models.Company) (CompanyDiagnosis, error) {
	views, err := s.resourceViews(ctx, c.ID)
	if err != nil {
		return CompanyDiagnosis{}, err
	}
	d := CompanyDiagnosis{CompanyID: c.ID, ConglomerateID: c.ConglomerateID, Handle: c.Handle, Healthy: true}
	for _, v := range views {
		rd := ResourceDiagnosis{ResourceView: v, Healthy: true}
		switch {
		case v.Status == models.ResourceNotProvisioned:
			rd.Healthy, rd.Problem = false, "never provisioned"
		case v.Status == models.ResourceFailed:
			rd.Healthy, rd.Problem = false, "provisioning failed: "+v.LastError
		case s.checker == nil:
			rd.Healthy, rd.Problem = false, "resources cannot be checked on this server"
		default:
			checkCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := s.checker.CheckResource(checkCtx, c, v.Kind); err != nil {
				rd.Healthy, rd.Problem = false, "check failed: "+err.Error()
			}
			cancel()
		}
		d.Healthy = d.Healthy && rd.Healthy
		d.Resources = append(d.Resources, rd)
	}
	return d, nil
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
	if err := service.RequireAdmin(ctx); err != nil {
		return HealResult{}, err
	}
	c, err := s.store.GetCompany(ctx, companyID)
	if errors.Is(err, models.ErrNotFound) || err == nil && c.Status == models.CompanyArchived {
		return HealResult{}, models.Errorf(models.CodeNotFound, "Company %s does not exist.", companyID)
	}
	if err != nil {
		return HealResult{}, err
	}
	d, err := s.diagnose(ctx, c)
	if err != nil {
		return HealResult{}, err
	}
	res := HealResult{CompanyDiagnosis: d, WorkflowID: workflows.ProvisionWorkflowID(c.ID)}
	if d.Healthy {
		return res, nil
	}
	if _, err := s.requestProvisioning(ctx, c); err != nil {
		return res, err
	}
	res.HealRequested = true
	return res, nil
}
