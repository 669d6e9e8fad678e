package companies

import (
	"context"
	"errors"
	"strings"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/store"
)

// Limits are the numbers of the business start's gates
// (HOLDCO_BUSINESS_LIMIT, HOLDCO_PLATFORM_COMPANY_CAP).
type Limits struct {
	// BusinessLimit is how many companies (not archived) one account may
	// have; a new business beyond it is business_limit_reached.
	BusinessLimit int64
	// PlatformCompanies is how many companies (not archived) the platform
	// runs in all; beyond it no business starts (business_limit_reached,
	// scope platform).
	PlatformCompanies int64
}

// Default limits.
const (
	DefaultBusinessLimit     = 10
	DefaultPlatformCompanies = 100_000
)

func (l Limits) withDefaults() Limits {
	if l.BusinessLimit <= 0 {
		l.BusinessLimit = DefaultBusinessLimit
	}
	if l.PlatformCompanies <= 0 {
		l.PlatformCompanies = DefaultPlatformCompanies
	}
	return l
}

// StartBusinessInput is a new business: what the REST API, the
// connector's create_business and the founding interview pass to
// StartBusiness once they have checked their own input.
type StartBusinessInput struct {
	// Name is required (trimmed; blank is invalid_argument).
	Name string
	// Handle is the wanted handle; empty derives one from Name.
	Handle string
	// HandleChosen: the caller chose Handle, so a taken one is
	// handle_taken with suggested_handle. Otherwise (derived, or an
	// interview's proposal) a taken handle is replaced once by the next
	// free one.
	HandleChosen bool
	Idea         string
	Mission      string
	// Paused creates the company without its schedule of agent runs.
	Paused bool
	// Key is a duplicate key stored with the company (REST's
	// Idempotency-Key, create_business's retry window); nil: none. When a
	// concurrent start stored it first, StartBusiness answers
	// store.ErrCreateKeyUsed and nothing is created.
	Key *models.CompanyCreateKey
	// With runs on the company's transaction once the company exists (the
	// interview writes its founding plan and its end there); an error
	// rolls the whole start back and is returned as it is.
	With func(tx *store.Store, sc store.CompanyScope, c models.Company) error
}

// StartedBusiness is a business StartBusiness started.
type StartedBusiness struct {
	Company models.Company
	Scope   store.CompanyScope
	// WelcomeCreditsGranted: this start granted the account its welcome
	// credits.
	WelcomeCreditsGranted bool
}

// StartBusiness is the one way a business starts, for an account the
// caller was authorized for (v). After the input (a blank name, a handle
// that is not one: invalid_argument), the gates in order: the plan
// (plan_*), the account's business limit and the platform's company cap
// (business_limit_reached), the credits: at least
// billing.MinCreditsToStart counting the welcome credits the account
// would get now (insufficient_credits with the numbers and links).
//
// The limits and the credits are checked on the company's transaction
// under the account's lock, so concurrent starts of one account cannot
// pass them on the same count. That transaction holds the company, its
// provisioning intent, the duplicate key, the welcome credits (unless the
// account had them) and in.With's writes: a refused start commits
// nothing. A taken handle is retried once with the next free one unless
// the caller chose it (handle_taken with suggested_handle). Provisioning
// starts after the commit; when it cannot (Temporal unreachable, a crash)
// the worker's sweeper starts it from the recorded intent.
func (s *Service) StartBusiness(ctx context.Context, v service.ConglomerateView, in StartBusinessInput) (StartedBusiness, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return StartedBusiness{}, models.Errorf(models.CodeInvalidArgument, "The name must not be blank.").WithField("name")
	}
	handle := in.Handle
	if handle == "" {
		handle, in.HandleChosen = Slugify(name), false
	}
	if !models.ValidHandle(handle) {
		return StartedBusiness{}, models.Errorf(models.CodeInvalidArgument,
			"A handle is 1 to %d lower-case letters, digits or inner hyphens.", models.MaxHandleLen).WithField("handle")
	}
	if e := s.billing.PlanDecision(v.Conglomerate, billing.ActionStartBusiness); e != nil {
		return StartedBusiness{}, e
	}
	c := models.Company{Name: name, Handle: handle, Idea: in.Idea, Mission: in.Mission, Status: models.CompanyActive}
	if in.Paused {
		c.Status = models.CompanyPaused
	}
	for retried := false; ; retried = true {
		out, err := s.startIn(ctx, v, c, in)
		if err == nil {
			s.startProvisioning(ctx, out.Scope, out.Company)
			return out, nil
		}
		if !errors.Is(err, models.ErrDuplicate) {
			return StartedBusiness{}, err
		}
		if in.Key != nil {
			// A concurrent start of the same request may have taken the
			// handle with its key: the caller answers with that start.
			if _, kerr := s.store.Companies().CompanyCreateKey(ctx, in.Key.KeyHash, in.Key.CreatedAt); kerr == nil {
				return StartedBusiness{}, store.ErrCreateKeyUsed
			}
		}
		suggestion, serr := s.SuggestHandle(ctx, c.Handle)
		if serr != nil {
			return StartedBusiness{}, serr
		}
		if in.HandleChosen || retried {
			return StartedBusiness{}, models.Errorf(models.CodeHandleTaken, "The handle %q is taken; %q is free.", c.Handle, suggestion).
				WithField("handle").With("suggested_handle", suggestion)
		}
		c.Handle = suggestion
	}
}

// startIn is one attempt of a start: the gates after the plan and every
// write, in one transaction.
func (s *Service) startIn(ctx context.Context, v service.ConglomerateView, c models.Company, in StartBusinessInput) (StartedBusiness, error) {
	var out StartedBusiness
	err := s.store.InTx(ctx, func(tx *store.Store) error {
		if err := tx.Founding().LockAccountForStart(ctx, v.Scope); err != nil {
			return err
		}
		if err := s.businessLimit(ctx, tx, v); err != nil {
			return err
		}
		var err error
		if out.WelcomeCreditsGranted, err = s.billing.BeginBusiness(ctx, tx, v); err != nil {
			return err
		}
		if out.Company, out.Scope, err = tx.Companies().CreateCompanyToProvision(ctx, v.Scope, c, true, in.Key); err != nil {
			return err
		}
		if in.With != nil {
			return in.With(tx, out.Scope, out.Company)
		}
		return nil
	})
	if err != nil {
		return StartedBusiness{}, err
	}
	return out, nil
}

// CheckBusinessLimit refuses a new business when the account or the
// platform has reached its number of live companies
// (business_limit_reached; scope account with limit and count, or scope
// platform). Opening a founding interview asks it too.
func (s *Service) CheckBusinessLimit(ctx context.Context, v service.ConglomerateView) error {
	return s.businessLimit(ctx, s.store, v)
}

func (s *Service) businessLimit(ctx context.Context, st *store.Store, v service.ConglomerateView) error {
	n, err := st.Founding().CountLiveCompanies(ctx, v.Scope)
	if err != nil {
		return err
	}
	if n >= s.limits.BusinessLimit {
		return models.Errorf(models.CodeBusinessLimitReached, "This account has %d businesses and may have at most %d; archive one to start another.",
			n, s.limits.BusinessLimit).With("limit", s.limits.BusinessLimit).With("count", n).With("scope", "account")
	}
	all, err := st.Founding().CountPlatformLiveCompanies(ctx)
	if err != nil {
		return err
	}
	if all >= s.limits.PlatformCompanies {
		return models.Errorf(models.CodeBusinessLimitReached, "The service is not taking new businesses right now; try again later.").With("scope", "platform")
	}
	return nil
}

// startProvisioning starts the provisioning the company's creation
// recorded; a failure is left to the worker's sweeper.
func (s *Service) startProvisioning(ctx context.Context, scope store.CompanyScope, c models.Company) {
	if s.temporal == nil {
		return
	}
	if _, err := s.outbox.Start(ctx, scope, c, true); err != nil {
		s.logger.WarnContext(ctx, "provisioning not started; the worker's sweeper will start it", "company", c.ID, "error", err)
	}
}
