package billing

import (
	"context"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// PlanAction is what a plan decision is asked about.
type PlanAction string

const (
	// ActionStartBusiness: found a company (Founder plan or live trial).
	ActionStartBusiness PlanAction = "start_business"
	// ActionAgentWork: run an agent turn or any other AI work.
	ActionAgentWork PlanAction = "agent_work"
)

// PlanInfo is the plan state of an account at a moment.
type PlanInfo struct {
	Plan          models.Plan
	Status        string
	RenewsAt      *time.Time
	TrialEndsAt   time.Time
	TrialActive   bool
	Blocked       bool
	BlockedReason string
}

// planInfo reads the plan state of a conglomerate at now.
func planInfo(c models.Conglomerate, now time.Time) PlanInfo {
	ends := c.TrialStartedAt.Add(service.TrialLength)
	return PlanInfo{Plan: c.Billing.Plan, Status: c.Billing.PlanStatus, RenewsAt: c.Billing.PlanRenewsAt, TrialEndsAt: ends,
		TrialActive: now.Before(ends), Blocked: c.Billing.BlockedAt != nil, BlockedReason: c.Billing.BlockedReason}
}

// subscriptionOK reports whether a paid plan's subscription is in good
// standing.
func subscriptionOK(status string) bool {
	return status == models.SubscriptionActive || status == models.SubscriptionTrialing
}

// subscriptionOwing reports whether a paid plan waits for a payment.
func subscriptionOwing(status string) bool {
	switch status {
	case models.SubscriptionPastDue, models.SubscriptionUnpaid, models.SubscriptionIncomplete, "paused":
		return true
	}
	return false
}

// PlanDecision is the one place that decides whether the account's plan
// allows an action now. In order: a blocked account (plan_blocked); a paid
// plan waiting for a payment (payment_required); the Hosting plan, which
// runs no agents (plan_no_ai); the Founder plan in good standing (allowed);
// otherwise the 3-day trial: allowed while it runs, plan_expired after.
func (s *Service) PlanDecision(c models.Conglomerate, action PlanAction) *models.Error {
	p := planInfo(c, s.now())
	paid := p.Plan == models.PlanFounder || p.Plan == models.PlanHosting
	var e *models.Error
	switch {
	case p.Blocked:
		e = models.Errorf(models.CodePlanBlocked, "Paid work is blocked on this account (%s). Contact support to lift the block.", p.BlockedReason)
	case paid && subscriptionOwing(p.Status):
		e = models.Errorf(models.CodePaymentRequired, "The %s plan's last payment did not go through (subscription %s); update the payment method in the billing portal.", p.Plan, p.Status)
	case p.Plan == models.PlanHosting && subscriptionOK(p.Status):
		e = models.Errorf(models.CodePlanNoAI, "The Hosting plan keeps sites and data online but runs no agents; upgrade to the Founder plan to %s.", actionText(action))
	case p.Plan == models.PlanFounder && subscriptionOK(p.Status):
		return nil
	case p.TrialActive:
		return nil
	default:
		e = models.Errorf(models.CodePlanExpired, "The 3-day free trial ended on %s; subscribe to the Founder plan to %s.", p.TrialEndsAt.Format(time.RFC3339), actionText(action))
	}
	e = e.With("plan", string(p.Plan))
	links, reasons := s.linkSet(c, 0)
	e = e.With("links", links)
	for k, v := range reasons {
		e = e.With(k, v)
	}
	return e
}

func actionText(a PlanAction) string {
	if a == ActionStartBusiness {
		return "start a business"
	}
	return "run agents"
}

// BeginBusiness is the credits' part of a business start, on the start's
// transaction (tx from store.InTx, after the account's lock): the balance,
// counting the welcome credits the account would get now, must reach
// MinCreditsToStart (insufficient_credits with the numbers and the links
// otherwise); then the welcome credits are granted unless the account had
// them. welcomeGranted says whether this start granted them. A start that
// fails later rolls the grant back with the rest, so a refused start never
// consumes them, and concurrent starts grant them once (a unique index
// decides). The plan, the business limit and the platform's cap are
// checked before it (companies.StartBusiness).
func (s *Service) BeginBusiness(ctx context.Context, tx *store.Store, v service.ConglomerateView) (welcomeGranted bool, err error) {
	granted, err := tx.Founding().WelcomeGranted(ctx, v.Scope)
	if err != nil {
		return false, err
	}
	bal, err := tx.Billing().CreditBalance(ctx, v.Scope, dayStart(s.now()))
	if err != nil {
		return false, err
	}
	balance := bal.Balance
	if !granted {
		balance += WelcomeCredits
	}
	if balance < MinCreditsToStart {
		return false, s.InsufficientCredits(v.Conglomerate, bal.Balance, MinCreditsToStart)
	}
	if granted {
		return false, nil
	}
	return s.GrantWelcomeCreditsIn(ctx, tx, v.Scope)
}

// InsufficientCredits is the one insufficient_credits answer of REST and
// the connector: the exact numbers and the links to fix it. A link the
// account cannot use is null with a reason key beside it.
func (s *Service) InsufficientCredits(cong models.Conglomerate, balance, needed int64) *models.Error {
	e := models.Errorf(models.CodeInsufficientCredits, "This needs %d credits but the account has %d; add at least %d credits or upgrade the plan.",
		needed, balance, needed-balance).With("balance", balance).With("needed", needed)
	links, reasons := s.linkSet(cong, needed-balance)
	e = e.With("links", links)
	for k, v := range reasons {
		e = e.With(k, v)
	}
	return e
}

// Reasons a billing link is null.
const (
	reasonPaymentsNotConfigured = "payments_not_configured"
	reasonAlreadyOnPlan         = "already_on_plan"
	reasonPlanNotForSale        = "plan_not_for_sale"
	reasonNoBillingAccount      = "no_billing_account_yet"
)

// billingLinkActions are the actions a billing link can open.
const (
	linkTopUp   = "top_up"
	linkUpgrade = "upgrade"
	linkPortal  = "customer_portal"
)

// linkSet builds the four billing links of an account: signed links that
// open a checkout (a top-up of at least shortfall credits, or the Founder
// plan) or the customer portal when followed, and the dashboard. A link
// the account cannot use is nil, with "<name>_unavailable" giving why.
// Building them calls no provider.
func (s *Service) linkSet(c models.Conglomerate, shortfall int64) (map[string]any, map[string]string) {
	links := map[string]any{"dashboard": s.DashboardURL(c.ID)}
	reasons := map[string]string{}
	unavailable := func(name, reason string) {
		links[name] = nil
		reasons[name+"_unavailable"] = reason
	}
	if s.payments == nil {
		for _, n := range []string{linkTopUp, linkUpgrade, linkPortal} {
			unavailable(n, reasonPaymentsNotConfigured)
		}
		return links, reasons
	}
	credits := max(int64(DefaultTopUpCredits), shortfall)
	links[linkTopUp] = s.billingLink(c.ID, linkTopUp, min(credits, MaxTopUpCredits))
	switch {
	case c.Billing.Plan == models.PlanFounder && subscriptionOK(c.Billing.PlanStatus):
		unavailable(linkUpgrade, reasonAlreadyOnPlan)
	case s.payments.PlanPriceID(models.PlanFounder) == "":
		unavailable(linkUpgrade, reasonPlanNotForSale)
	default:
		links[linkUpgrade] = s.billingLink(c.ID, linkUpgrade, 0)
	}
	if c.Billing.CustomerID == nil {
		unavailable(linkPortal, reasonNoBillingAccount)
	} else {
		links[linkPortal] = s.billingLink(c.ID, linkPortal, 0)
	}
	return links, reasons
}
