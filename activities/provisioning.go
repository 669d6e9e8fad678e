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
	"holdco/observability"
	"holdco/store"
	"holdco/workflows/contract"
)

// Repositories provisions company code repositories in their one home
// (providers/gitrepo: bare repositories on a volume every worker mounts;
// providers/githubrepo: a hosted git service).
type Repositories interface {
	Ensure(ctx context.Context, companyID, name, idea string, seed bool) (models.RepositoryInfo, error)
	// Status asks the home: Exists false only when the home says the
	// repository is gone; an unreachable home is an error.
	Status(ctx context.Context, companyID string) (models.RepositoryInfo, error)
	Check(ctx context.Context, companyID string) error
}

// Databases provisions company databases (providers/companydb).
type Databases interface {
	Ensure(ctx context.Context, companyID string) (ref string, err error)
	Check(ctx context.Context, companyID string) error
}

// Hosting provisions company sites (providers/statichost locally).
type Hosting interface {
	// Ensure publishes the site and deploys main's head when the
	// repository has one.
	Ensure(ctx context.Context, companyID, handle string) (siteURL string, err error)
	Check(ctx context.Context, companyID, handle string) error
	// PublishHead deploys main's head when the site is published (the
	// repository and the site are made in parallel: whichever comes last
	// deploys).
	PublishHead(ctx context.Context, companyID string) error
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
	c, err := p.Store.Companies().GetCompany(ctx, scope)
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

// ProvisionResource makes one resource exist. It marks the row
// provisioning, calls the idempotent adapter while heartbeating, and
// records ready or failed with the error text, so a failure never leaves
// a half-made resource without a row saying so.
func (p *Provisioning) ProvisionResource(ctx context.Context, in contract.ResourceInput) (_ contract.ResourceResult, err error) {
	defer func() {
		if err != nil && ctx.Err() != nil {
			err = interrupted(ctx, "provision "+string(in.Kind), err)
		}
	}()
	scope, err := p.Store.SystemCompanyScope(ctx, in.CompanyID)
	var c models.Company
	if err == nil {
		c, err = p.Store.Companies().GetCompany(ctx, scope)
	}
	if errors.Is(err, models.ErrNotFound) || err == nil && c.Status == models.CompanyArchived {
		return contract.ResourceResult{}, temporal.NewNonRetryableApplicationError("company is missing or archived", contract.ErrCompanyGone, err)
	}
	if err != nil {
		return contract.ResourceResult{}, err
	}
	if err := p.Store.Companies().SaveResource(ctx, scope, models.CompanyResource{Kind: in.Kind, Status: models.ResourceProvisioning}); err != nil {
		return contract.ResourceResult{}, err
	}
	stop := heartbeat(ctx)
	ref, err := p.ensure(ctx, scope, c, in)
	stop()
	if err != nil && ctx.Err() != nil {
		return contract.ResourceResult{}, err // interrupted: the row stays provisioning for the retry
	}
	if err != nil {
		if serr := p.Store.Companies().SaveResource(ctx, scope, models.CompanyResource{Kind: in.Kind, Status: models.ResourceFailed, LastError: err.Error()}); serr != nil {
			return contract.ResourceResult{}, errors.Join(err, serr)
		}
		observability.Provisioned(string(in.Kind), string(models.ResourceFailed))
		var appErr *temporal.ApplicationError
		if errors.As(err, &appErr) && appErr.NonRetryable() {
			return contract.ResourceResult{}, appErr // a verdict, not retried (ErrRepositoryMismatch)
		}
		return contract.ResourceResult{}, fmt.Errorf("provision %s: %w", in.Kind, err)
	}
	if err := p.Store.Companies().SaveResource(ctx, scope, models.CompanyResource{Kind: in.Kind, Status: models.ResourceReady, Ref: ref}); err != nil {
		return contract.ResourceResult{}, err
	}
	observability.Provisioned(string(in.Kind), string(models.ResourceReady))
	return contract.ResourceResult{Kind: in.Kind, Ref: ref}, nil
}

func (p *Provisioning) ensure(ctx context.Context, scope store.CompanyScope, c models.Company, in contract.ResourceInput) (string, error) {
	switch in.Kind {
	case models.ResourceRepository:
		// The company's record wins over the run's input: a run started
		// with seeding may be retried (heal) after the repository was
		// resumed as an import, and an import is never seeded.
		seed, err := p.Store.Companies().ProvisioningSeedRepo(ctx, scope)
		if err != nil {
			return "", err
		}
		return p.ensureRepository(ctx, scope, c, seed && in.SeedRepo)
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
		return p.checkRepository(ctx, c.ID)
	case models.ResourceDatabase:
		return p.Databases.Check(ctx, c.ID)
	case models.ResourceHosting:
		return p.Hosting.Check(ctx, c.ID, c.Handle)
	}
	return fmt.Errorf("unknown resource kind %q", kind)
}

// ErrRepositoryMismatch: the repository's home holds a repository whose
// first commit is not the recorded one. It is never taken for the
// company's, nor replaced: an operator decides.
const ErrRepositoryMismatch = "RepositoryMismatch"

// ensureRepository makes the company's repository exist in its home, once.
// A repository made before (its first commit recorded) is asked about in
// its home: there, it is kept; gone (the home says so, not just this
// worker's disk), it is recreated and the activity feed says so. An
// unreachable home fails the attempt (retried), never creating a second
// repository. Then main's head is deployed to the site when published.
func (p *Provisioning) ensureRepository(ctx context.Context, scope store.CompanyScope, c models.Company, seed bool) (string, error) {
	rec, err := p.Store.Sites().CompanyRepositoryOf(ctx, c.ID)
	known := err == nil
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return "", err
	}
	var info models.RepositoryInfo
	if known {
		if info, err = p.Repositories.Status(ctx, c.ID); err != nil {
			return "", err
		}
	}
	switch {
	case !known:
		if info, err = p.Repositories.Ensure(ctx, c.ID, c.Name, c.Idea, seed); err != nil {
			return "", err
		}
		err = p.Store.Sites().RecordCompanyRepository(ctx, models.CompanyRepository{CompanyID: c.ID, Home: info.Home, FirstCommit: info.FirstCommit})
	case !info.Exists:
		if info, err = p.Repositories.Ensure(ctx, c.ID, c.Name, c.Idea, seed); err != nil {
			return "", err
		}
		err = p.Store.Sites().RecordRepositoryRecreated(ctx, scope, models.CompanyRepository{CompanyID: c.ID, Home: info.Home, FirstCommit: info.FirstCommit},
			models.ActivityInput{Kind: models.ActivityRepositoryRecreated, Actor: models.ActorSystem, Subject: info.Home,
				Summary: "The code repository was gone from " + info.Home + " and was made again",
				Data:    map[string]any{"home": info.Home, "previous_first_commit": rec.FirstCommit, "first_commit": info.FirstCommit}})
	case rec.FirstCommit != "" && info.FirstCommit != rec.FirstCommit:
		return "", temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s holds a repository whose first commit is %q, not the recorded %q; it is not this company's repository",
			info.Home, info.FirstCommit, rec.FirstCommit), ErrRepositoryMismatch, nil)
	case rec.FirstCommit == "" && info.FirstCommit != "" || rec.Home != info.Home:
		// An import's first push, or a repository moved to a new home.
		err = p.Store.Sites().RecordCompanyRepository(ctx, models.CompanyRepository{CompanyID: c.ID, Home: info.Home, FirstCommit: info.FirstCommit})
	}
	if err != nil {
		return "", err
	}
	if err := p.Hosting.PublishHead(ctx, c.ID); err != nil {
		return "", fmt.Errorf("deploy the site: %w", err)
	}
	return info.Ref, nil
}

// checkRepository asks the repository's home about it and compares its
// first commit with the recorded one, then reads it.
func (p *Provisioning) checkRepository(ctx context.Context, companyID string) error {
	info, err := p.Repositories.Status(ctx, companyID)
	if err != nil {
		return err
	}
	if !info.Exists {
		return fmt.Errorf("the repository is gone from %s", info.Home)
	}
	if rec, err := p.Store.Sites().CompanyRepositoryOf(ctx, companyID); err == nil && rec.FirstCommit != "" && rec.FirstCommit != info.FirstCommit {
		return fmt.Errorf("%s holds a repository whose first commit is %q, not the recorded %q", info.Home, info.FirstCommit, rec.FirstCommit)
	} else if err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	return p.Repositories.Check(ctx, companyID)
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

func interrupted(ctx context.Context, op string, err error) error {
	return temporal.NewApplicationErrorWithOptions(fmt.Sprintf("%s: interrupted (%v)", op, context.Cause(ctx)), contract.ErrInterrupted,
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
	c, err := p.Store.OAuth().EnsureCompanyOIDCClient(ctx, scope, models.CompanyOIDCClient{
		ClientID: "co_" + hex.EncodeToString(id), SecretHash: hex.EncodeToString(sum[:]),
	})
	if err != nil {
		return "", err
	}
	return c.ClientID, nil
}
