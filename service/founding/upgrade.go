package founding

import (
	"context"
	"errors"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
)

// Reasons a company is not eligible for the v3 upgrade.
const (
	IneligibleCurrent     = "current_generation"
	IneligibleInterview   = "interview_open"
	IneligibleStanding    = "account_standing"
	StandingGood          = "good"
	upgradeIneligibleText = "This company cannot switch now: "
)

// V3UpgradeInput opens a v3 upgrade interview.
type V3UpgradeInput struct {
	AnalyticsSessionID string
	ClientMobile       *bool
}

// V3UpgradeStatus is whether a company may switch to the current
// generation, and its latest switch interview.
type V3UpgradeStatus struct {
	Company models.Company
	// Eligible: the company may open a switch interview now; otherwise
	// Reason is current_generation, interview_open or account_standing.
	Eligible bool
	Reason   string
	// Standing is the account's standing for founding: good, or the plan's
	// refusal (plan_expired, plan_blocked, payment_required, plan_no_ai).
	Standing string
	// Interview is the company's latest switch interview (nil: none).
	Interview *Interview
}

// V3Upgrade reports a company's upgrade eligibility, the account's
// standing and its latest switch interview.
func (s *Service) V3Upgrade(ctx context.Context, companyID string) (V3UpgradeStatus, error) {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return V3UpgradeStatus{}, err
	}
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return V3UpgradeStatus{}, err
	}
	return s.upgradeStatus(ctx, p, ac)
}

func (s *Service) upgradeStatus(ctx context.Context, p service.Principal, ac service.AuthorizedCompany) (V3UpgradeStatus, error) {
	st := V3UpgradeStatus{Company: ac.Company, Standing: StandingGood}
	cong, err := s.core.AuthorizeConglomerate(ctx, ac.ConglomerateID)
	if err != nil {
		return st, err
	}
	if e := s.billing.PlanDecision(cong.Conglomerate, billing.ActionStartBusiness); e != nil {
		st.Standing = string(e.Code)
	}
	if f, err := s.store.Founding().LatestCompanyInterview(ctx, ac.Scope, models.FoundingV3Upgrade); err == nil {
		iv := s.view(f)
		st.Interview = &iv
	} else if !errors.Is(err, models.ErrNotFound) {
		return st, err
	}
	_, openErr := s.store.Founding().OpenFoundingInterview(ctx, cong.Scope, p.UserID)
	switch {
	case ac.Generation >= models.CurrentCompanyGeneration:
		st.Reason = IneligibleCurrent
	case openErr == nil:
		st.Reason = IneligibleInterview
	case !errors.Is(openErr, models.ErrNotFound):
		return st, openErr
	case st.Standing != StandingGood:
		st.Reason = IneligibleStanding
	default:
		st.Eligible = true
	}
	return st, nil
}

// StartV3Upgrade opens a switch interview for an older-generation company
// the caller may reach: the interview (founding:<user_id>, like a
// founding) ends founded by renaming the company, setting its mission,
// replacing its founding plan and moving it to the current generation.
// Refusals: a company already current or an open interview (conflict with
// reason), the plan (plan_*).
func (s *Service) StartV3Upgrade(ctx context.Context, companyID string, in V3UpgradeInput) (Interview, error) {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return Interview{}, err
	}
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Interview{}, err
	}
	if err := checkClient(in.AnalyticsSessionID); err != nil {
		return Interview{}, err
	}
	st, err := s.upgradeStatus(ctx, p, ac)
	if err != nil {
		return Interview{}, err
	}
	v, err := s.core.AuthorizeConglomerate(ctx, ac.ConglomerateID)
	if err != nil {
		return Interview{}, err
	}
	switch st.Reason {
	case IneligibleCurrent:
		return Interview{}, models.Errorf(models.CodeConflict, upgradeIneligibleText+"it is already generation %d.", ac.Generation).With("reason", st.Reason)
	case IneligibleInterview:
		return Interview{}, models.Errorf(models.CodeConflict, upgradeIneligibleText+"a founding interview is open; finish or withdraw it first.").With("reason", st.Reason)
	case IneligibleStanding:
		return Interview{}, s.billing.PlanDecision(v.Conglomerate, billing.ActionStartBusiness)
	}
	idea := ac.Idea
	if idea == "" {
		idea = ac.Name
	}
	id := ac.ID
	return s.open(ctx, p, v, models.FoundingInterview{Kind: models.FoundingV3Upgrade, Idea: idea, CompanyID: &id,
		AnalyticsSessionID: in.AnalyticsSessionID, ClientMobile: in.ClientMobile}, ideaLine(models.FoundingV3Upgrade, &ac.Company, idea))
}
