package connector

import (
	"context"
	"errors"
	"math"
	"time"

	"holdco/models"
	"holdco/service/billing"
	"holdco/store"
)

// Limits of get_billing_links per account, counted in the database so
// every replica sees the same calls.
var billingLinkWindows = []store.RateWindow{
	{Name: "billing_links/1h", Every: time.Hour, Limit: 30},
	{Name: "billing_links/24h", Every: 24 * time.Hour, Limit: 200},
}

// Plan is an account's plan as the connector shows it.
type Plan struct {
	Plan        string `json:"plan"`
	Status      string `json:"status,omitempty"`
	TrialActive bool   `json:"trial_active"`
	TrialEndsAt string `json:"trial_ends_at"`
	Blocked     bool   `json:"blocked"`
}

func planOf(p billing.PlanInfo) Plan {
	return Plan{Plan: string(p.Plan), Status: p.Status, TrialActive: p.TrialActive, TrialEndsAt: p.TrialEndsAt.UTC().Format(timeLayout), Blocked: p.Blocked}
}

// BillingLinks is get_billing_links's answer. A link the account cannot
// use is null, with the reason under "<link>_unavailable" in Reasons.
type BillingLinks struct {
	Balance int64             `json:"balance"`
	Plan    Plan              `json:"plan"`
	Links   map[string]any    `json:"links"`
	Reasons map[string]string `json:"reasons,omitempty"`
}

// GetBillingLinks returns the account's balance, plan and the links to top
// up, upgrade and open the billing portal; nothing is charged. At most 30
// calls an hour and 200 a day per account (rate_limited beyond, with the
// seconds until the window ends).
func (s *Service) GetBillingLinks(ctx context.Context) (BillingLinks, error) {
	v, err := s.account(ctx)
	if err != nil {
		return BillingLinks{}, err
	}
	wait, err := s.store.Companies().CountCall(ctx, v.Scope, s.now(), billingLinkWindows)
	if errors.Is(err, store.ErrRateLimited) {
		secs := int64(math.Ceil(wait.Seconds()))
		return BillingLinks{}, models.Errorf(models.CodeRateLimited,
			"get_billing_links is limited to 30 calls an hour and 200 a day per account; try again in %d seconds.", secs).
			With("retry_after_seconds", secs)
	}
	if err != nil {
		return BillingLinks{}, err
	}
	st, err := s.Billing.StateOf(ctx, v)
	if err != nil {
		return BillingLinks{}, err
	}
	return BillingLinks{Balance: st.Credits.Balance, Plan: planOf(st.Plan), Links: st.Links, Reasons: st.LinkReasons}, nil
}

// Credits is get_credits's answer.
type Credits struct {
	Balance        int64  `json:"balance"`
	SpentToday     int64  `json:"spent_today"`
	DailyCreditCap *int64 `json:"daily_credit_cap"`
	// MinToStartTurn is the balance a message (a turn) needs to start;
	// MinToStartBusiness what create_business needs.
	MinToStartTurn     int64 `json:"min_to_start_turn"`
	MinToStartBusiness int64 `json:"min_to_start_business"`
	Plan               Plan  `json:"plan"`
}

// GetCredits reports the account's balance, today's spend, the minimum to
// start a turn and the plan.
//
// One statement for a principal resolved from a credential: the account's
// row and its balance together (billing.AuthorizedState; the membership
// was checked when the credential was resolved).
func (s *Service) GetCredits(ctx context.Context) (Credits, error) {
	id, err := s.accountID(ctx)
	if err != nil {
		return Credits{}, err
	}
	_, st, err := s.Billing.AuthorizedState(ctx, id)
	if err != nil {
		return Credits{}, err
	}
	return Credits{Balance: st.Credits.Balance, SpentToday: st.Credits.SpentToday, DailyCreditCap: st.Credits.DailyCreditCap,
		MinToStartTurn: billing.MinCreditsToStartTurn, MinToStartBusiness: billing.MinCreditsToStart, Plan: planOf(st.Plan)}, nil
}
