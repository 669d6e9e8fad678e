package service

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"holdco/models"
)

// Payments is the payment provider (providers/stripepay). nil in Options:
// payments are not configured, every payment link is null with a reason.
type Payments interface {
	PaymentObjects
	Livemode() bool
	// PlanPriceID is the provider's recurring price of a plan; "" when the
	// plan is not sold.
	PlanPriceID(models.Plan) string
	EnsureCustomer(context.Context, models.CustomerRequest) (string, error)
	Checkout(context.Context, models.CheckoutRequest) (models.CheckoutSession, error)
	Portal(ctx context.Context, customerID, returnURL string) (string, error)
	ConnectOnboarding(context.Context, models.ConnectOnboardingRequest) (accountID, url string, err error)
	ConnectAccount(ctx context.Context, accountID string) (models.ConnectState, error)
	ChargeTopUp(context.Context, models.ChargeRequest) (models.ChargeResult, error)
	// CancelSubscription cancels a platform subscription at once; one
	// that is already cancelled or gone is not an error.
	CancelSubscription(ctx context.Context, subscriptionID string) error
	// ParseWebhook verifies a webhook's signature (models.ErrBadSignature)
	// and reduces the event to what holdco acts on.
	ParseWebhook(ctx context.Context, payload []byte, signature string) (models.PaymentEvent, error)
	Health(context.Context) (models.PaymentHealth, error)
}

// Billing rules.
const (
	// DefaultCreditPriceCents is the price of one credit in US cents.
	DefaultCreditPriceCents = 10
	MinTopUpCredits         = 10
	MaxTopUpCredits         = 100_000
	// DefaultTopUpCredits is the pack a billing link offers.
	DefaultTopUpCredits = 100
	MaxAutoTopUpTrigger = 1_000_000
	// billingLinkTTL is how long a billing link (a signed capability to
	// open a checkout or the portal for one account) works.
	billingLinkTTL = 24 * time.Hour
	// BillingLinkPath serves billing links: it creates the checkout or
	// portal session when the link is opened and redirects to it.
	BillingLinkPath = "/billing/go"
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
	ends := c.TrialStartedAt.Add(TrialLength)
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

// BusinessStart is the outcome of the gate before a business is founded.
type BusinessStart struct {
	WelcomeGranted bool
	Balance        int64
}

// BeginBusiness is the gate before a business starts: the plan must allow
// it; then, with grantWelcome (the connector's first business), the
// welcome credits are granted unless the account already had them (a start
// the plan refuses keeps them ungranted); then the balance must hold at
// least MinCreditsToStart.
func (s *Service) BeginBusiness(ctx context.Context, conglomerateID string, grantWelcome bool) (BusinessStart, error) {
	v, err := s.authorizeConglomerate(ctx, conglomerateID)
	if err != nil {
		return BusinessStart{}, err
	}
	var out BusinessStart
	if e := s.PlanDecision(v.Conglomerate, ActionStartBusiness); e != nil {
		return out, e
	}
	if grantWelcome {
		if out.WelcomeGranted, err = s.GrantWelcomeCredits(ctx, v.ID); err != nil {
			return out, err
		}
	}
	bal, err := s.store.CreditBalance(ctx, v.ID, dayStart(s.now()))
	if err != nil {
		return out, err
	}
	out.Balance = bal.Balance
	if bal.Balance < MinCreditsToStart {
		return out, s.InsufficientCredits(v.Conglomerate, bal.Balance, MinCreditsToStart)
	}
	return out, nil
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

// DashboardPath is the web app's page for an account (billing, payouts,
// companies), opened with ?conglomerate_id=<id>. The frontend serves it;
// without a frontend, holdco's own minimal pages answer it with HTML. It
// is never a REST route, so a browser following a dashboard link, or
// coming back from checkout or the billing portal, gets a page, not JSON.
const DashboardPath = "/dashboard"

// DashboardURL is the web app's page for the account.
func (s *Service) DashboardURL(conglomerateID string) string {
	return s.cfg.FrontendURL + DashboardPath + "?conglomerate_id=" + url.QueryEscape(conglomerateID)
}

// billingLinkClaims is the signed payload of a billing link.
type billingLinkClaims struct {
	ConglomerateID string `json:"c"`
	Action         string `json:"a"`
	Credits        int64  `json:"n,omitempty"`
	expiring
}

const billingLinkPurpose = "billing-link"

func (s *Service) billingLink(conglomerateID, action string, credits int64) string {
	tok, _ := s.sign.Seal(billingLinkPurpose, billingLinkClaims{ConglomerateID: conglomerateID, Action: action, Credits: credits,
		expiring: expiring{Exp: s.now().Add(billingLinkTTL).Unix()}})
	return s.cfg.PublicURL + BillingLinkPath + "?t=" + url.QueryEscape(tok)
}

// FollowBillingLink opens what a billing link names (a checkout session or
// the customer portal) and returns the provider's page to redirect to. The
// link itself is the credential: it was handed to the account's user and
// can only start a payment for that account or show its billing.
func (s *Service) FollowBillingLink(ctx context.Context, token string) (string, error) {
	var cl billingLinkClaims
	if err := s.sign.Open(billingLinkPurpose, token, &cl); err != nil {
		return "", models.Errorf(models.CodeNotFound, "This billing link is not valid.")
	}
	if cl.expired(s.now()) {
		return "", models.Errorf(models.CodeNotFound, "This billing link has expired; ask for a new one.")
	}
	c, err := s.store.GetConglomerate(ctx, cl.ConglomerateID)
	if errors.Is(err, models.ErrNotFound) {
		return "", models.Errorf(models.CodeNotFound, "The account of this billing link no longer exists.")
	}
	if err != nil {
		return "", err
	}
	switch cl.Action {
	case linkTopUp:
		cs, err := s.checkout(ctx, c, models.CheckoutTopUp, cl.Credits)
		return cs.URL, err
	case linkUpgrade:
		cs, err := s.checkout(ctx, c, models.CheckoutPlan, 0)
		return cs.URL, err
	case linkPortal:
		return s.portal(ctx, c)
	}
	return "", models.Errorf(models.CodeNotFound, "This billing link is not valid.")
}

// requirePayments answers when payments are not configured.
func (s *Service) requirePayments() error {
	if s.payments == nil {
		return models.Errorf(models.CodeConflict, "Payments are not configured on this server.").With("reason", reasonPaymentsNotConfigured)
	}
	return nil
}

// billingOwner authorizes a payment action: only the account's owner pays.
func (s *Service) billingOwner(ctx context.Context, conglomerateID string) (ConglomerateView, error) {
	v, err := s.authorizeOwner(ctx, conglomerateID)
	if err != nil {
		return v, err
	}
	return v, s.requirePayments()
}

// authorizeOwner is authorizeConglomerate for billing changes: members
// read, only the owner changes.
func (s *Service) authorizeOwner(ctx context.Context, conglomerateID string) (ConglomerateView, error) {
	v, err := s.authorizeConglomerate(ctx, conglomerateID)
	if err == nil && v.Role != models.RoleOwner {
		err = models.Errorf(models.CodeForbidden, "Only the account's owner manages its billing.")
	}
	return v, err
}

// CheckoutSession opens a hosted checkout for a top-up of credits or for
// the Founder plan.
func (s *Service) CheckoutSession(ctx context.Context, conglomerateID string, kind models.CheckoutKind, credits int64) (models.CheckoutSession, error) {
	v, err := s.billingOwner(ctx, conglomerateID)
	if err != nil {
		return models.CheckoutSession{}, err
	}
	return s.checkout(ctx, v.Conglomerate, kind, credits)
}

func (s *Service) checkout(ctx context.Context, c models.Conglomerate, kind models.CheckoutKind, credits int64) (models.CheckoutSession, error) {
	if err := s.requirePayments(); err != nil {
		return models.CheckoutSession{}, err
	}
	back := s.DashboardURL(c.ID)
	req := models.CheckoutRequest{Kind: kind, ConglomerateID: c.ID, SuccessURL: back + "&checkout=success", CancelURL: back + "&checkout=cancelled"}
	switch kind {
	case models.CheckoutTopUp:
		if credits < MinTopUpCredits || credits > MaxTopUpCredits {
			return models.CheckoutSession{}, models.Errorf(models.CodeInvalidArgument, "A top-up is from %d to %d credits.", MinTopUpCredits, MaxTopUpCredits).WithField("credits")
		}
		req.Credits, req.UnitAmountCents = credits, s.creditPrice()
	case models.CheckoutPlan:
		if c.Billing.Plan == models.PlanFounder && subscriptionOK(c.Billing.PlanStatus) {
			return models.CheckoutSession{}, models.Errorf(models.CodeConflict, "The account is already on the Founder plan; manage it in the billing portal.").With("reason", reasonAlreadyOnPlan)
		}
		if req.PriceID = s.payments.PlanPriceID(models.PlanFounder); req.PriceID == "" {
			return models.CheckoutSession{}, models.Errorf(models.CodeConflict, "The Founder plan is not for sale on this server.").With("reason", reasonPlanNotForSale)
		}
		req.Plan = models.PlanFounder
	default:
		return models.CheckoutSession{}, models.Errorf(models.CodeInvalidArgument, "kind must be top_up or founder.").WithField("kind")
	}
	var err error
	if req.CustomerID, err = s.ensureCustomer(ctx, c); err != nil {
		return models.CheckoutSession{}, err
	}
	cs, err := s.payments.Checkout(ctx, req)
	if err != nil {
		return cs, upstream("The payment provider could not open a checkout; retry shortly.", err)
	}
	return cs, nil
}

// CreditPriceCents is the price of one credit in US cents.
func (s *Service) CreditPriceCents() int64 { return s.creditPrice() }

func (s *Service) creditPrice() int64 {
	if s.cfg.CreditPriceCents > 0 {
		return s.cfg.CreditPriceCents
	}
	return DefaultCreditPriceCents
}

func upstream(detail string, err error) *models.Error {
	return models.Errorf(models.CodeUpstreamUnavailable, "%s", detail).Wrap(err)
}

// ensureCustomer returns the account's customer id, creating the customer
// on the first purchase (the provider's idempotency key makes concurrent
// first purchases share one).
func (s *Service) ensureCustomer(ctx context.Context, c models.Conglomerate) (string, error) {
	if c.Billing.CustomerID != nil {
		return *c.Billing.CustomerID, nil
	}
	owner, err := s.store.GetUser(ctx, c.OwnerUserID)
	if err != nil {
		return "", err
	}
	id, err := s.payments.EnsureCustomer(ctx, models.CustomerRequest{ConglomerateID: c.ID, Email: owner.Email, Name: c.Name})
	if err != nil {
		return "", upstream("The payment provider could not create the billing account; retry shortly.", err)
	}
	if err := s.store.SetCustomerID(ctx, c.ID, id); err != nil && !errors.Is(err, models.ErrDuplicate) {
		return "", err
	}
	return id, nil
}

// PortalSession opens the customer portal (cards, invoices, plan).
func (s *Service) PortalSession(ctx context.Context, conglomerateID string) (string, error) {
	v, err := s.billingOwner(ctx, conglomerateID)
	if err != nil {
		return "", err
	}
	return s.portal(ctx, v.Conglomerate)
}

func (s *Service) portal(ctx context.Context, c models.Conglomerate) (string, error) {
	if err := s.requirePayments(); err != nil {
		return "", err
	}
	if c.Billing.CustomerID == nil {
		return "", models.Errorf(models.CodeConflict, "The account has no billing account yet: buy credits or subscribe first.").With("reason", reasonNoBillingAccount)
	}
	u, err := s.payments.Portal(ctx, *c.Billing.CustomerID, s.DashboardURL(c.ID))
	if err != nil {
		return "", upstream("The payment provider could not open the billing portal; retry shortly.", err)
	}
	return u, nil
}

// BillingState is what the billing page shows.
type BillingState struct {
	Plan               PlanInfo
	Credits            CreditState
	PaymentsConfigured bool
	AutoTopUp          AutoTopUp
	// StartBusiness is nil when the plan lets the account start a business
	// now — the very decision POST /conglomerates/{id}/companies makes —
	// else why not.
	StartBusiness *models.Error
	// EnoughCreditsToStart: the balance holds MinCreditsToStart, which the
	// connector's create_business (BeginBusiness) and a first turn need on
	// top of the plan; creating a company through REST does not.
	EnoughCreditsToStart bool
	Links                map[string]any
	LinkReasons          map[string]string
}

// AutoTopUp buys Credits when a spend leaves the balance below Threshold.
type AutoTopUp struct {
	Enabled   bool
	Threshold int64
	Credits   int64
}

// Billing reports the plan, balance, auto top-up and links of an account.
func (s *Service) Billing(ctx context.Context, conglomerateID string) (BillingState, error) {
	v, err := s.authorizeConglomerate(ctx, conglomerateID)
	if err != nil {
		return BillingState{}, err
	}
	return s.billingState(ctx, v.Conglomerate)
}

func (s *Service) billingState(ctx context.Context, c models.Conglomerate) (BillingState, error) {
	bal, err := s.store.CreditBalance(ctx, c.ID, dayStart(s.now()))
	if err != nil {
		return BillingState{}, err
	}
	st := BillingState{Plan: planInfo(c, s.now()), PaymentsConfigured: s.payments != nil,
		Credits:   CreditState{Balance: bal.Balance, SpentToday: bal.SpentToday, DailyCreditCap: c.DailyCreditCap},
		AutoTopUp: AutoTopUp{Enabled: c.Billing.AutoTopUpEnabled, Threshold: c.Billing.AutoTopUpThreshold, Credits: c.Billing.AutoTopUpCredits}}
	st.StartBusiness = s.PlanDecision(c, ActionStartBusiness)
	st.EnoughCreditsToStart = bal.Balance >= MinCreditsToStart
	st.Links, st.LinkReasons = s.linkSet(c, 0)
	return st, nil
}

// SetAutoTopUp changes the auto top-up settings. Enabling it needs
// payments and a billing account (a first purchase saves the card).
func (s *Service) SetAutoTopUp(ctx context.Context, conglomerateID string, a AutoTopUp) (BillingState, error) {
	v, err := s.authorizeOwner(ctx, conglomerateID)
	if err != nil {
		return BillingState{}, err
	}
	if a.Threshold < 0 || a.Threshold > MaxAutoTopUpTrigger {
		return BillingState{}, models.Errorf(models.CodeInvalidArgument, "threshold must be from 0 to %d credits.", MaxAutoTopUpTrigger).WithField("threshold")
	}
	if a.Enabled || a.Credits != 0 {
		if a.Credits < MinTopUpCredits || a.Credits > MaxTopUpCredits {
			return BillingState{}, models.Errorf(models.CodeInvalidArgument, "credits must be from %d to %d.", MinTopUpCredits, MaxTopUpCredits).WithField("credits")
		}
	}
	if a.Enabled {
		if err := s.requirePayments(); err != nil {
			return BillingState{}, err
		}
		if v.Billing.CustomerID == nil {
			return BillingState{}, models.Errorf(models.CodeConflict, "Auto top-up charges the card of an earlier purchase: buy credits once first.").With("reason", reasonNoBillingAccount)
		}
	}
	if err := s.store.SetAutoTopUp(ctx, v.ID, a.Enabled, a.Threshold, a.Credits); err != nil {
		return BillingState{}, err
	}
	c, err := s.store.GetConglomerate(ctx, v.ID)
	if err != nil {
		return BillingState{}, err
	}
	return s.billingState(ctx, c)
}

// ConnectStatus is the payout onboarding state of the caller's account.
type ConnectStatus struct {
	ConglomerateID string
	// State: not_configured (no payments here), not_started, pending
	// (details missing), restricted (submitted, payouts not enabled yet),
	// complete.
	State              string
	AccountID          string
	ChargesEnabled     bool
	PayoutsEnabled     bool
	DetailsSubmitted   bool
	Requirements       []string
	PaymentsConfigured bool
}

func connectStatusOf(c models.Conglomerate, configured bool) ConnectStatus {
	b := c.Billing
	st := ConnectStatus{ConglomerateID: c.ID, PaymentsConfigured: configured, ChargesEnabled: b.ConnectChargesEnabled,
		PayoutsEnabled: b.ConnectPayoutsEnabled, DetailsSubmitted: b.ConnectDetailsSubmitted, Requirements: splitList(b.ConnectRequirements)}
	if b.ConnectAccountID != nil {
		st.AccountID = *b.ConnectAccountID
	}
	switch {
	case !configured:
		st.State = "not_configured"
	case st.AccountID == "":
		st.State = "not_started"
	case st.PayoutsEnabled && st.ChargesEnabled:
		st.State = "complete"
	case st.DetailsSubmitted:
		st.State = "restricted"
	default:
		st.State = "pending"
	}
	return st
}

// MyConnectStatus reports the payout onboarding of the caller's account,
// refreshed from the provider when onboarding has started (a provider
// failure falls back to the last state the webhooks stored).
func (s *Service) MyConnectStatus(ctx context.Context) (ConnectStatus, error) {
	p, err := requireUser(ctx)
	if err != nil {
		return ConnectStatus{}, err
	}
	v, err := s.authorizeConglomerate(ctx, p.ConglomerateID)
	if err != nil {
		return ConnectStatus{}, err
	}
	c := v.Conglomerate
	if s.payments != nil && c.Billing.ConnectAccountID != nil {
		live, err := s.payments.ConnectAccount(ctx, *c.Billing.ConnectAccountID)
		if err != nil {
			s.logger.WarnContext(ctx, "connect status: provider unavailable, answering the stored state", "error", err)
		} else if err := s.store.UpdateConnectState(ctx, live); err != nil {
			return ConnectStatus{}, err
		} else {
			b := &c.Billing
			b.ConnectChargesEnabled, b.ConnectPayoutsEnabled, b.ConnectDetailsSubmitted = live.ChargesEnabled, live.PayoutsEnabled, live.DetailsSubmitted
			b.ConnectRequirements = strings.Join(live.Requirements, ",")
		}
	}
	return connectStatusOf(c, s.payments != nil), nil
}

// StartConnectOnboarding creates the payout account on first use and
// returns a single-use onboarding link.
func (s *Service) StartConnectOnboarding(ctx context.Context) (string, ConnectStatus, error) {
	p, err := requireUser(ctx)
	if err != nil {
		return "", ConnectStatus{}, err
	}
	v, err := s.billingOwner(ctx, p.ConglomerateID)
	if err != nil {
		return "", ConnectStatus{}, err
	}
	owner, err := s.store.GetUser(ctx, v.OwnerUserID)
	if err != nil {
		return "", ConnectStatus{}, err
	}
	req := models.ConnectOnboardingRequest{ConglomerateID: v.ID, Email: owner.Email,
		RefreshURL: s.DashboardURL(v.ID) + "&onboarding=refresh",
		ReturnURL:  s.DashboardURL(v.ID) + "&onboarding=done"}
	if v.Billing.ConnectAccountID != nil {
		req.AccountID = *v.Billing.ConnectAccountID
	}
	id, link, err := s.payments.ConnectOnboarding(ctx, req)
	if id != "" && req.AccountID == "" {
		if serr := s.store.SetConnectAccount(ctx, v.ID, id); serr != nil {
			return "", ConnectStatus{}, serr
		}
		v.Billing.ConnectAccountID = &id
	}
	if err != nil {
		return "", ConnectStatus{}, upstream("The payment provider could not start payout onboarding; retry shortly.", err)
	}
	return link, connectStatusOf(v.Conglomerate, true), nil
}

// WebhookResult says what a payment webhook did.
type WebhookResult struct {
	EventID   string
	Duplicate bool
	Ignored   bool
}

// HandlePaymentWebhook verifies and applies a payment event once. A bad
// signature is refused (bad_request) with nothing recorded; an event seen
// before is acknowledged without acting; an event holdco does not act on
// is acknowledged and ignored. Every effect is idempotent on its own too
// (credits are unique by reference), so two deliveries racing each other
// still credit once. A failure to apply answers an error so the provider
// delivers the event again.
func (s *Service) HandlePaymentWebhook(ctx context.Context, payload []byte, signature string) (WebhookResult, error) {
	if s.payments == nil {
		return WebhookResult{}, models.Errorf(models.CodeNotFound, "Payments are not configured on this server.")
	}
	ev, err := s.payments.ParseWebhook(ctx, payload, signature)
	if errors.Is(err, models.ErrBadSignature) {
		return WebhookResult{}, models.Errorf(models.CodeBadRequest, "The webhook signature does not verify.").Wrap(err)
	}
	if err != nil {
		return WebhookResult{}, upstream("The event could not be read; it will be delivered again.", err)
	}
	res := WebhookResult{EventID: ev.ID, Ignored: ev.Kind == models.EventIgnored}
	if res.Duplicate, err = s.store.PaymentEventProcessed(ctx, ev.ID); err != nil || res.Duplicate {
		return res, err
	}
	if err := s.applyPaymentEvent(ctx, ev); err != nil {
		return res, err
	}
	return res, s.store.RecordPaymentEvent(ctx, models.ProcessedPaymentEvent{ID: ev.ID, Type: ev.Type, Livemode: ev.Livemode, ProcessedAt: s.now()})
}

func (s *Service) applyPaymentEvent(ctx context.Context, ev models.PaymentEvent) error {
	log := s.logger.With("event", ev.ID, "type", ev.Type)
	congID, err := s.eventConglomerate(ctx, ev)
	if err != nil {
		return err
	}
	switch ev.Kind {
	case models.EventCredits:
		if congID == "" {
			log.WarnContext(ctx, "payment event for no known account: ignored")
			return nil
		}
		_, err := s.store.ApplyCreditEntry(ctx, models.CreditLedgerEntry{ConglomerateID: congID, Type: ev.EntryType, Amount: ev.Credits,
			Reference: ev.Reference, CreatedAt: s.now()}, nil, dayStart(s.now()))
		if errors.Is(err, models.ErrDuplicate) {
			return nil // credited by an earlier event of the same payment
		}
		return err
	case models.EventSubscription:
		if congID == "" {
			log.WarnContext(ctx, "subscription event for no known account: ignored")
			return nil
		}
		plan, status := ev.Plan, ev.PlanStatus
		if status == models.SubscriptionCanceled || status == "incomplete_expired" {
			plan = models.PlanFree
		}
		err := s.store.SetSubscription(ctx, congID, ev.CustomerID, ev.SubscriptionID, plan, status, ev.PlanRenewsAt)
		if errors.Is(err, models.ErrDuplicate) { // the customer id belongs to another account
			log.WarnContext(ctx, "subscription event: customer linked to another account; ignored", "customer", ev.CustomerID)
			return nil
		}
		return ignoreMissing(err)
	case models.EventConnectAccount:
		return ignoreMissing(s.store.UpdateConnectState(ctx, ev.Connect))
	case models.EventDispute:
		if congID == "" {
			return nil
		}
		var at *time.Time
		if ev.Blocked {
			t := s.now()
			at = &t
		}
		return ignoreMissing(s.store.SetBlocked(ctx, congID, "", at, ev.Reason))
	}
	return nil
}

// eventConglomerate finds the account an event is about: the id holdco
// put in the object's metadata, or the customer's account. "" when none.
func (s *Service) eventConglomerate(ctx context.Context, ev models.PaymentEvent) (string, error) {
	if ev.ConglomerateID != "" {
		if _, err := s.store.GetConglomerate(ctx, ev.ConglomerateID); err == nil {
			return ev.ConglomerateID, nil
		} else if !errors.Is(err, models.ErrNotFound) {
			return "", err
		}
	}
	if ev.CustomerID == "" {
		return "", nil
	}
	id, err := s.store.ConglomerateIDByCustomer(ctx, ev.CustomerID)
	return id, ignoreMissing(err)
}

// ignoreMissing: an event about a deleted account changes nothing.
func ignoreMissing(err error) error {
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	return err
}

// PaymentHealth probes the payment provider (admin only; live calls).
func (s *Service) PaymentHealth(ctx context.Context) (models.PaymentHealth, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok || !p.IsAdmin() {
		return models.PaymentHealth{}, models.Errorf(models.CodeForbidden, "Only an operator may probe the payment provider.")
	}
	if err := s.requirePayments(); err != nil {
		return models.PaymentHealth{}, err
	}
	h, err := s.payments.Health(ctx)
	if err != nil {
		return h, upstream(fmt.Sprintf("The payment provider could not be probed: %v", err), err)
	}
	return h, nil
}

func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}
