// Package activities holds the side effects of holdco's workflows, as
// methods on structs that carry their dependencies.
package activities

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"holdco/models"
	"holdco/store"
)

// Repositories provisions company code repositories (providers/gitrepo
// locally, a hosted git service in production).
type Repositories interface {
	Ensure(ctx context.Context, companyID, name, idea string, seed bool) (ref string, err error)
	Check(ctx context.Context, companyID string) error
}

// Databases provisions company databases (providers/companydb).
type Databases interface {
	Ensure(ctx context.Context, companyID string) (ref string, err error)
	Check(ctx context.Context, companyID string) error
}

// Hosting provisions company sites (providers/statichost locally).
type Hosting interface {
	Ensure(ctx context.Context, companyID, handle string) (siteURL string, err error)
	Check(ctx context.Context, companyID, handle string) error
}

// Schedules keeps companies' schedules of agent runs (service/turns).
type Schedules interface {
	Ensure(ctx context.Context, companyID, conglomerateID string, paused bool) error
}

// Provisioning is the activity set of the provisioning workflow.
type Provisioning struct {
	Store        *store.Store
	Repositories Repositories
	Databases    Databases
	Hosting      Hosting
	// Schedules nil: no scheduled runs.
	Schedules Schedules
	// FirstPasses nil: founded companies get no first pass.
	FirstPasses FirstPasses
}

// FirstPasses starts the first pass of a company founded by an interview
// once it is provisioned (service/founding).
type FirstPasses interface {
	StartPendingFirstPass(ctx context.Context, cong store.ConglomerateScope, company store.CompanyScope) error
}

// StartPendingFirstPass starts the first turn of a company whose founding
// interview asked for one, once (a company without one is left alone).
func (p *Provisioning) StartPendingFirstPass(ctx context.Context, companyID string) error {
	if p.FirstPasses == nil {
		return nil
	}
	scope, err := p.Store.SystemCompanyScope(ctx, companyID)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return p.FirstPasses.StartPendingFirstPass(ctx, p.Store.SystemConglomerateScope(scope.ConglomerateID()), scope)
}

// EnsureSchedule gives a provisioned company its schedule of agent runs
// (none while the company is paused or archived: activating a paused
// company makes it).
func (p *Provisioning) EnsureSchedule(ctx context.Context, companyID string) error {
	if p.Schedules == nil {
		return nil
	}
	scope, err := p.Store.SystemCompanyScope(ctx, companyID)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	c, err := p.Store.GetCompany(ctx, scope)
	if err != nil || c.Status == models.CompanyArchived {
		return err
	}
	if c.Status == models.CompanyPaused {
		// A paused company has no schedule (pause_business, create_business
		// with paused); activating it creates one (Schedules.Resume).
		return nil
	}
	return p.Schedules.Ensure(ctx, c.ID, c.ConglomerateID, false)
}

// ResourceInput names one resource of one company.
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

// ProvisionResource makes one resource exist. It marks the row
// provisioning, calls the idempotent adapter while heartbeating, and
// records ready or failed with the error text, so a failure never leaves
// a half-made resource without a row saying so.
func (p *Provisioning) ProvisionResource(ctx context.Context, in ResourceInput) (_ ResourceResult, err error) {
	defer func() {
		if err != nil && ctx.Err() != nil {
			err = interrupted(ctx, "provision "+string(in.Kind), err)
		}
	}()
	scope, err := p.Store.SystemCompanyScope(ctx, in.CompanyID)
	var c models.Company
	if err == nil {
		c, err = p.Store.GetCompany(ctx, scope)
	}
	if errors.Is(err, models.ErrNotFound) || err == nil && c.Status == models.CompanyArchived {
		return ResourceResult{}, temporal.NewNonRetryableApplicationError("company is missing or archived", ErrCompanyGone, err)
	}
	if err != nil {
		return ResourceResult{}, err
	}
	if err := p.Store.SaveResource(ctx, scope, models.CompanyResource{Kind: in.Kind, Status: models.ResourceProvisioning}); err != nil {
		return ResourceResult{}, err
	}
	stop := heartbeat(ctx)
	ref, err := p.ensure(ctx, scope, c, in)
	stop()
	if err != nil && ctx.Err() != nil {
		return ResourceResult{}, err // interrupted: the row stays provisioning for the retry
	}
	if err != nil {
		if serr := p.Store.SaveResource(ctx, scope, models.CompanyResource{Kind: in.Kind, Status: models.ResourceFailed, LastError: err.Error()}); serr != nil {
			return ResourceResult{}, errors.Join(err, serr)
		}
		return ResourceResult{}, fmt.Errorf("provision %s: %w", in.Kind, err)
	}
	if err := p.Store.SaveResource(ctx, scope, models.CompanyResource{Kind: in.Kind, Status: models.ResourceReady, Ref: ref}); err != nil {
		return ResourceResult{}, err
	}
	return ResourceResult{Kind: in.Kind, Ref: ref}, nil
}

func (p *Provisioning) ensure(ctx context.Context, scope store.CompanyScope, c models.Company, in ResourceInput) (string, error) {
	switch in.Kind {
	case models.ResourceRepository:
		// The company's record wins over the run's input: a run started
		// with seeding may be retried (heal) after the repository was
		// resumed as an import, and an import is never seeded.
		seed, err := p.Store.ProvisioningSeedRepo(ctx, scope)
		if err != nil {
			return "", err
		}
		return p.Repositories.Ensure(ctx, c.ID, c.Name, c.Idea, seed && in.SeedRepo)
	case models.ResourceDatabase:
		return p.Databases.Ensure(ctx, c.ID)
	case models.ResourceHosting:
		return p.Hosting.Ensure(ctx, c.ID, c.Handle)
	}
	return "", temporal.NewNonRetryableApplicationError("unknown resource kind "+string(in.Kind), "UnknownKind", nil)
}

// CheckResource really checks that a resource exists and works (the
// repository reads, the database accepts a connection, the site answers).
func (p *Provisioning) CheckResource(ctx context.Context, c models.Company, kind models.ResourceKind) error {
	switch kind {
	case models.ResourceRepository:
		return p.Repositories.Check(ctx, c.ID)
	case models.ResourceDatabase:
		return p.Databases.Check(ctx, c.ID)
	case models.ResourceHosting:
		return p.Hosting.Check(ctx, c.ID, c.Handle)
	}
	return fmt.Errorf("unknown resource kind %q", kind)
}

// heartbeatEvery is how often a running activity reports liveness (well
// within the workflow's heartbeat timeout).
const heartbeatEvery = 2 * time.Second

// heartbeat reports liveness every few seconds until stopped, so a worker
// that dies mid-provisioning is noticed within the heartbeat timeout and
// the activity is retried on another worker. stop waits until no heartbeat
// is in flight: one still running when the activity completes is cut off
// with "context canceled" and logged as a warning. A short activity sends
// no heartbeat at all.
func heartbeat(ctx context.Context) (stop func()) { return heartbeatWith(ctx, heartbeatEvery, nil) }

// heartbeatWith is heartbeat every interval, calling also (when not nil)
// after each heartbeat: a claim in a row renewed with Temporal's.
func heartbeatWith(ctx context.Context, every time.Duration, also func()) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			select {
			case <-done: // stop and a tick raced: stop wins
				return
			default:
			}
			activity.RecordHeartbeat(ctx)
			if also != nil {
				also()
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// ErrInterrupted is the type of the error of an activity whose context
// ended (the worker shuts down, or the activity was cancelled or timed
// out): expected, retried, and logged by the SDK as benign, not as an
// error.
const ErrInterrupted = "Interrupted"

func interrupted(ctx context.Context, op string, err error) error {
	return temporal.NewApplicationErrorWithOptions(fmt.Sprintf("%s: interrupted (%v)", op, context.Cause(ctx)), ErrInterrupted,
		temporal.ApplicationErrorOptions{Cause: err, Category: temporal.ApplicationErrorCategoryBenign})
}

// EnsureOIDCClient creates the OpenID client the company's own app signs
// its users in with, unless one exists; an existing client (revoked or
// not) is kept as it is, so provisioning never un-revokes it.
func (p *Provisioning) EnsureOIDCClient(ctx context.Context, companyID string) (clientID string, err error) {
	defer func() {
		if err != nil && ctx.Err() != nil {
			err = interrupted(ctx, "oidc client", err)
		}
	}()
	secret := make([]byte, 32)
	id := make([]byte, 12)
	_, _ = rand.Read(secret)
	_, _ = rand.Read(id)
	sum := sha256.Sum256([]byte(hex.EncodeToString(secret)))
	scope, err := p.Store.SystemCompanyScope(ctx, companyID)
	if err != nil {
		return "", err
	}
	c, err := p.Store.EnsureCompanyOIDCClient(ctx, scope, models.CompanyOIDCClient{
		ClientID: "co_" + hex.EncodeToString(id), SecretHash: hex.EncodeToString(sum[:]),
	})
	if err != nil {
		return "", err
	}
	return c.ClientID, nil
}
