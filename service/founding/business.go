package founding

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/store"
)

// DuplicateWindow is how long a retry of the same idea by the same client
// returns the business the first call created.
const DuplicateWindow = 10 * time.Minute

// createBusinessFingerprint marks create keys of create_business (every
// retry of the same idea is the same request, whatever its other fields).
const createBusinessFingerprint = "create_business"

// CreateBusiness is the connector's create_business: it founds a company
// from an idea and returns at once with the business, whether the welcome
// credits were granted, and the first pass.
//
// Input errors first: the idea (checkIdea), the name, a handle without a
// name, a malformed handle (invalid_argument with field). A retry of the
// same idea by the same user and client within DuplicateWindow returns the
// business the first call created. Then the gates in order: the plan
// (plan_*), the business limit of the account and of the platform
// (business_limit_reached), the credits: at least
// billing.MinCreditsToStart counting the welcome credits the account would
// get now (insufficient_credits with needed). A handle given and taken is
// handle_taken with suggested_handle; without a handle one is derived from
// the name and a free one taken.
//
// The company, its provisioning intent, the duplicate key and the welcome
// credits commit in one transaction: a refused start grants nothing, and
// two concurrent starts grant the welcome credits once. Provisioning is
// started after the commit (the worker's sweeper starts it after a crash).
// A new company is not provisioned yet, so first_pass is provisioning:
// the client calls StartFirstPass once the business is ready.
func (s *Service) CreateBusiness(ctx context.Context, in CreateBusinessInput) (CreateBusinessResult, error) {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return CreateBusinessResult{}, err
	}
	idea, err := s.checkIdea(in.Idea)
	if err != nil {
		return CreateBusinessResult{}, err
	}
	name, err := checkName(in.Name)
	if err != nil {
		return CreateBusinessResult{}, err
	}
	if in.Handle != "" && name == "" {
		return CreateBusinessResult{}, models.Errorf(models.CodeInvalidArgument, "A handle can be given only with a name.").WithField("handle")
	}
	if in.Handle != "" && !models.ValidHandle(in.Handle) {
		return CreateBusinessResult{}, models.Errorf(models.CodeInvalidArgument,
			"A handle is 1 to %d lower-case letters, digits or inner hyphens.", models.MaxHandleLen).WithField("handle")
	}
	v, err := s.core.AuthorizeConglomerate(ctx, p.ConglomerateID)
	if err != nil {
		return CreateBusinessResult{}, err
	}
	now := s.now()
	key := s.createBusinessKey(p, idea, now)
	if c, err := s.store.CompanyCreateKeyCompany(ctx, v.Scope, key.KeyHash, now); err == nil {
		return s.replayed(ctx, c)
	} else if !errors.Is(err, models.ErrNotFound) {
		return CreateBusinessResult{}, err
	}
	if err := s.gates(ctx, v); err != nil {
		return CreateBusinessResult{}, err
	}
	if name == "" {
		name = SuggestName(idea)
	}
	c := models.Company{Name: name, Handle: in.Handle, Idea: idea, Status: models.CompanyActive}
	if in.Paused {
		c.Status = models.CompanyPaused
	}
	created, welcome, err := s.createWithWelcome(ctx, v, c, in.Handle != "", &key)
	if errors.Is(err, store.ErrCreateKeyUsed) {
		// A concurrent retry of the same idea won: answer its business.
		c, rerr := s.store.CompanyCreateKeyCompany(ctx, v.Scope, key.KeyHash, now)
		if rerr != nil {
			return CreateBusinessResult{}, rerr
		}
		return s.replayed(ctx, c)
	}
	if err != nil {
		return CreateBusinessResult{}, err
	}
	return CreateBusinessResult{Business: created, WelcomeCreditsGranted: welcome, FirstPass: FirstPass{
		Status: FirstPassProvisioning,
		Detail: "The business is being set up (about a minute). Poll get_business until ready is true, then call start_first_pass.",
	}}, nil
}

// createBusinessKey is the duplicate key of create_business: the user, the
// OAuth client and the idea's hash; only hashes are stored.
func (s *Service) createBusinessKey(p service.Principal, idea string, now time.Time) models.CompanyCreateKey {
	ideaSum := sha256.Sum256([]byte(idea))
	sum := sha256.Sum256([]byte("create_business\x00" + p.UserID + "\x00" + p.ClientID + "\x00" + hex.EncodeToString(ideaSum[:])))
	return models.CompanyCreateKey{KeyHash: hex.EncodeToString(sum[:]), ConglomerateID: p.ConglomerateID, UserID: p.UserID,
		Fingerprint: createBusinessFingerprint, CreatedAt: now, ExpiresAt: now.Add(DuplicateWindow)}
}

// replayed answers a duplicate create_business: the business as it is now
// and its first pass as start_first_pass answers it (welcome_credits_granted
// is false: this call granted nothing).
func (s *Service) replayed(ctx context.Context, c models.Company) (CreateBusinessResult, error) {
	ac, err := s.core.AuthorizeCompany(ctx, c.ID, false)
	if err != nil {
		return CreateBusinessResult{}, err
	}
	fp, err := s.firstPassState(ctx, ac)
	if err == nil && fp.Status == "" {
		fp, err = s.startFirstPass(ctx, ac, firstPassBrief(ac.Company, false))
	}
	return CreateBusinessResult{Business: ac.Company, FirstPass: fp}, err
}

// gates are the checks before a business starts, in order: the plan, the
// account's business limit, the platform's company cap, the credits
// (counting the welcome credits the account would get now).
func (s *Service) gates(ctx context.Context, v service.ConglomerateView) error {
	if e := s.billing.PlanDecision(v.Conglomerate, billing.ActionStartBusiness); e != nil {
		return e
	}
	if err := s.businessLimit(ctx, v); err != nil {
		return err
	}
	// Whether the welcome credits were granted is read before the balance:
	// a concurrent start that grants them in between then shows in the
	// balance, rather than being missed by both reads.
	granted, err := s.store.WelcomeGranted(ctx, v.Scope)
	if err != nil {
		return err
	}
	bal, err := s.store.CreditBalance(ctx, v.Scope, s.now().UTC().Truncate(24*time.Hour))
	if err != nil {
		return err
	}
	balance := bal.Balance
	if !granted {
		balance += billing.WelcomeCredits
	}
	if balance < billing.MinCreditsToStart {
		return s.billing.InsufficientCredits(v.Conglomerate, bal.Balance, billing.MinCreditsToStart)
	}
	return nil
}

// businessLimit refuses a new business when the account or the platform
// has reached its number of live companies.
func (s *Service) businessLimit(ctx context.Context, v service.ConglomerateView) error {
	n, err := s.store.CountLiveCompanies(ctx, v.Scope)
	if err != nil {
		return err
	}
	if n >= s.limits.BusinessLimit {
		return models.Errorf(models.CodeBusinessLimitReached, "This account has %d businesses and may have at most %d; archive one to start another.",
			n, s.limits.BusinessLimit).With("limit", s.limits.BusinessLimit).With("count", n).With("scope", "account")
	}
	all, err := s.store.CountPlatformLiveCompanies(ctx)
	if err != nil {
		return err
	}
	if all >= s.limits.PlatformCompanies {
		return models.Errorf(models.CodeBusinessLimitReached, "The service is not taking new businesses right now; try again later.").With("scope", "platform")
	}
	return nil
}

// createWithWelcome creates the company with its provisioning intent (and
// key), grants the welcome credits unless the account had them, and checks
// the balance reaches MinCreditsToStart, all in one transaction; then it
// starts provisioning. An explicit handle that is taken is handle_taken;
// a derived one takes a free suggestion.
func (s *Service) createWithWelcome(ctx context.Context, v service.ConglomerateView, c models.Company, explicit bool, key *models.CompanyCreateKey) (models.Company, bool, error) {
	if c.Handle == "" {
		c.Handle = companies.Slugify(c.Name)
	}
	for attempt := 0; ; attempt++ {
		var created models.Company
		var scope store.CompanyScope
		var welcome bool
		err := s.store.InTx(ctx, func(tx *store.Store) error {
			var err error
			if created, scope, err = tx.CreateCompanyToProvision(ctx, v.Scope, c, true, key); err != nil {
				return err
			}
			if welcome, err = s.billing.GrantWelcomeCreditsIn(ctx, tx, v.Scope); err != nil {
				return err
			}
			bal, err := tx.CreditBalance(ctx, v.Scope, s.now().UTC().Truncate(24*time.Hour))
			if err != nil {
				return err
			}
			if bal.Balance < billing.MinCreditsToStart {
				return s.billing.InsufficientCredits(v.Conglomerate, bal.Balance, billing.MinCreditsToStart)
			}
			return nil
		})
		if err == nil {
			s.startProvisioning(ctx, scope, created)
			return created, welcome, nil
		}
		if !errors.Is(err, models.ErrDuplicate) {
			return models.Company{}, false, err
		}
		suggestion, serr := s.companies.SuggestHandle(ctx, c.Handle)
		if serr != nil {
			return models.Company{}, false, serr
		}
		if explicit || attempt >= 3 {
			return models.Company{}, false, models.Errorf(models.CodeHandleTaken, "The handle %q is taken; %q is free.", c.Handle, suggestion).
				WithField("handle").With("suggested_handle", suggestion)
		}
		c.Handle = suggestion
	}
}

// startProvisioning starts the provisioning the company's creation
// recorded; a failure is left to the worker's sweeper.
func (s *Service) startProvisioning(ctx context.Context, scope store.CompanyScope, c models.Company) {
	if s.outbox == nil {
		return
	}
	if _, err := s.outbox.Start(ctx, scope, c, true); err != nil {
		s.logger.WarnContext(ctx, "provisioning not started; the worker's sweeper will start it", "company", c.ID, "error", err)
	}
}

// StartFirstPass is the connector's start_first_pass: it starts the first
// turn of a business the caller may reach. The answer is always a
// FirstPass: skipped when the business has its founding plan,
// provisioning while it is being set up, started with the turn's id, or
// not_started with the reason (error conflict with the running turn's id;
// insufficient_credits with needed; the plan's codes). A business that is
// missing, archived or another account's is an error (not_found,
// forbidden).
func (s *Service) StartFirstPass(ctx context.Context, companyID string) (FirstPass, error) {
	if _, err := service.RequireUser(ctx); err != nil {
		return FirstPass{}, err
	}
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return FirstPass{}, err
	}
	fp, err := s.firstPassState(ctx, ac)
	if err != nil || fp.Status != "" {
		return fp, err
	}
	return s.startFirstPass(ctx, ac, firstPassBrief(ac.Company, false))
}

// firstPassState is the first pass of a business when nothing needs
// starting: skipped with a founding plan, provisioning before it is ready;
// the zero FirstPass when a first pass may start.
func (s *Service) firstPassState(ctx context.Context, ac service.AuthorizedCompany) (FirstPass, error) {
	if _, err := s.store.GetDocument(ctx, ac.Scope, models.DocFoundingPlan); err == nil {
		return FirstPass{Status: FirstPassSkipped, Detail: "The business already has its founding plan; nothing to start."}, nil
	} else if !errors.Is(err, models.ErrNotFound) {
		return FirstPass{}, err
	}
	ready, err := s.store.CompanyReady(ctx, ac.Scope)
	if err != nil {
		return FirstPass{}, err
	}
	if !ready {
		return FirstPass{Status: FirstPassProvisioning,
			Detail: "The business is being set up (about a minute). Poll get_business until ready is true, then call start_first_pass."}, nil
	}
	return FirstPass{}, nil
}

// startFirstPass starts the first turn and reports it as a FirstPass; a
// refusal of the service is not_started with its case.
func (s *Service) startFirstPass(ctx context.Context, ac service.AuthorizedCompany, brief string) (FirstPass, error) {
	st, err := s.turns.StartFirstPass(ctx, ac, brief)
	if err == nil {
		return FirstPass{Status: FirstPassStarted, TurnID: st.TurnID, Detail: "The first turn started; poll get_turn with turn_id."}, nil
	}
	var de *models.Error
	if !errors.As(err, &de) {
		return FirstPass{}, err
	}
	fp := FirstPass{Status: FirstPassNotStarted, Error: de.Code, Detail: de.Detail}
	switch de.Code {
	case models.CodeConflict:
		if id, ok := de.Extra["turn_id"].(string); ok {
			fp.TurnID = id
		}
		fp.Detail = "A turn is already running; poll get_turn with turn_id."
	case models.CodeInsufficientCredits:
		if n, ok := de.Extra["needed"].(int64); ok {
			needed := float64(n)
			fp.Needed = &needed
		}
	case models.CodeBusinessNotActive:
		fp.Status = FirstPassProvisioning
		fp.Error = ""
	}
	return fp, nil
}

// firstPassBrief is the first turn's message. A business founded by the
// web interview has its founding plan: the agent starts on it. Otherwise
// the agent writes it first ("First pass:" is what the scripted model
// reads as writing the founding plan).
func firstPassBrief(c models.Company, planReady bool) string {
	var b strings.Builder
	if planReady {
		fmt.Fprintf(&b, "First pass on the founding plan: you run %s (handle %s), founded just now.\n\n", c.Name, c.Handle)
	} else {
		fmt.Fprintf(&b, "First pass: you run %s (handle %s), founded just now.\n\n", c.Name, c.Handle)
	}
	fmt.Fprintf(&b, "Idea:\n%s\n", c.Idea)
	if c.Mission != "" {
		fmt.Fprintf(&b, "\nMission: %s\n", c.Mission)
	}
	if planReady {
		b.WriteString("\nRead the document founding_plan, create the first tasks from it and start on the most important one.")
	} else {
		b.WriteString("\nWrite the founding plan as the document founding_plan (what to build first, for whom, how it earns its first dollar), " +
			"then create the first tasks and start on the most important one.")
	}
	return b.String()
}
