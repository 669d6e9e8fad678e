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
// business the first call created. Then companies.StartBusiness, the one
// business start: the gates in order (plan_*, business_limit_reached for
// the account's limit and the platform's cap, insufficient_credits with
// needed), the company with its provisioning intent, the duplicate key and
// the welcome credits in one transaction (a refused start grants nothing;
// two concurrent starts grant the welcome credits once), provisioning
// after the commit. A handle given and taken is handle_taken with
// suggested_handle; without a handle one is derived from the name (itself
// drawn from the idea when not given). A new company is not provisioned
// yet, so first_pass is provisioning: the client calls StartFirstPass once
// the business is ready.
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
	if c, err := s.store.Founding().CompanyCreateKeyCompany(ctx, v.Scope, key.KeyHash, now); err == nil {
		return s.replayed(ctx, c)
	} else if !errors.Is(err, models.ErrNotFound) {
		return CreateBusinessResult{}, err
	}
	if name == "" {
		name = SuggestName(idea)
	}
	started, err := s.companies.StartBusiness(ctx, v, companies.StartBusinessInput{Name: name, Handle: in.Handle, HandleChosen: in.Handle != "",
		Idea: idea, Paused: in.Paused, Key: &key})
	if errors.Is(err, store.ErrCreateKeyUsed) {
		// A concurrent retry of the same idea won: answer its business.
		c, rerr := s.store.Founding().CompanyCreateKeyCompany(ctx, v.Scope, key.KeyHash, now)
		if rerr != nil {
			return CreateBusinessResult{}, rerr
		}
		return s.replayed(ctx, c)
	}
	if err != nil {
		return CreateBusinessResult{}, err
	}
	return CreateBusinessResult{Business: started.Company, WelcomeCreditsGranted: started.WelcomeCreditsGranted, FirstPass: FirstPass{
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
		fp, err = s.startFirstPass(ctx, ac, firstPassBrief(ac.Company, ""))
	}
	return CreateBusinessResult{Business: ac.Company, FirstPass: fp}, err
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
	return s.startFirstPass(ctx, ac, firstPassBrief(ac.Company, ""))
}

// firstPassState is the first pass of a business when nothing needs
// starting: skipped with a founding plan, provisioning before it is ready;
// the zero FirstPass when a first pass may start.
func (s *Service) firstPassState(ctx context.Context, ac service.AuthorizedCompany) (FirstPass, error) {
	if _, err := s.store.Companies().GetDocument(ctx, ac.Scope, models.DocFoundingPlan); err == nil {
		return FirstPass{Status: FirstPassSkipped, Detail: "The business already has its founding plan; nothing to start."}, nil
	} else if !errors.Is(err, models.ErrNotFound) {
		return FirstPass{}, err
	}
	ready, err := s.store.Turns().CompanyReady(ctx, ac.Scope)
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

// firstPassBrief is the first turn's message. A business founded (or
// switched to the current generation) by the web interview has its
// founding plan: the agent starts on it. Otherwise (kind "") the agent
// writes it first ("First pass:" is what the scripted model reads as
// writing the founding plan).
func firstPassBrief(c models.Company, kind models.FoundingKind) string {
	var b strings.Builder
	switch kind {
	case models.FoundingNew:
		fmt.Fprintf(&b, "First pass on the founding plan: you run %s (handle %s), founded just now.\n\n", c.Name, c.Handle)
	case models.FoundingV3Upgrade:
		fmt.Fprintf(&b, "First pass on the new founding plan: you run %s (handle %s), switched to generation %d just now.\n\n",
			c.Name, c.Handle, models.CurrentCompanyGeneration)
	default:
		fmt.Fprintf(&b, "First pass: you run %s (handle %s), founded just now.\n\n", c.Name, c.Handle)
	}
	fmt.Fprintf(&b, "Idea:\n%s\n", c.Idea)
	if c.Mission != "" {
		fmt.Fprintf(&b, "\nMission: %s\n", c.Mission)
	}
	if kind != "" {
		b.WriteString("\nRead the document founding_plan, create the first tasks from it and start on the most important one.")
	} else {
		b.WriteString("\nWrite the founding plan as the document founding_plan (what to build first, for whom, how it earns its first dollar), " +
			"then create the first tasks and start on the most important one.")
	}
	return b.String()
}
