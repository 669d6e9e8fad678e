package billing

import (
	"context"
	"errors"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// CheckoutSession opens a hosted checkout for a top-up of credits or for
// the Founder plan.
func (s *Service) CheckoutSession(ctx context.Context, conglomerateID string, kind models.CheckoutKind, credits int64) (models.CheckoutSession, error) {
	v, err := s.billingOwner(ctx, conglomerateID)
	if err != nil {
		return models.CheckoutSession{}, err
	}
	return s.checkout(ctx, v, kind, credits)
}

func (s *Service) checkout(ctx context.Context, v service.ConglomerateView, kind models.CheckoutKind, credits int64) (models.CheckoutSession, error) {
	if err := s.requirePayments(); err != nil {
		return models.CheckoutSession{}, err
	}
	c := v.Conglomerate
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
	if req.CustomerID, err = s.ensureCustomer(ctx, v); err != nil {
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
func (s *Service) ensureCustomer(ctx context.Context, v service.ConglomerateView) (string, error) {
	c := v.Conglomerate
	if c.Billing.CustomerID != nil {
		return *c.Billing.CustomerID, nil
	}
	owner, err := s.store.Identity().GetUser(ctx, c.OwnerUserID)
	if err != nil {
		return "", err
	}
	id, err := s.payments.EnsureCustomer(ctx, models.CustomerRequest{ConglomerateID: c.ID, Email: owner.Email, Name: c.Name})
	if err != nil {
		return "", upstream("The payment provider could not create the billing account; retry shortly.", err)
	}
	if err := s.store.Billing().SetCustomerID(ctx, v.Scope, id); err != nil && !errors.Is(err, models.ErrDuplicate) {
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
	_, st, err := s.AuthorizedState(ctx, conglomerateID)
	return st, err
}

// AuthorizedState applies the authorization step to the conglomerate and
// reports its billing state, the conglomerate's row and the balance read
// in one statement (the balance fresh from the database).
func (s *Service) AuthorizedState(ctx context.Context, conglomerateID string) (service.ConglomerateView, BillingState, error) {
	v, bal, err := s.core.AuthorizeConglomerateCredits(ctx, conglomerateID, dayStart(s.now()))
	if err != nil {
		return service.ConglomerateView{}, BillingState{}, err
	}
	return v, s.stateWith(v, bal), nil
}

// StateOf is Billing for a conglomerate the caller authorized already (the
// connector authorizes once per tool call).
func (s *Service) StateOf(ctx context.Context, v service.ConglomerateView) (BillingState, error) {
	return s.billingState(ctx, v)
}

func (s *Service) billingState(ctx context.Context, v service.ConglomerateView) (BillingState, error) {
	bal, err := s.store.Billing().CreditBalance(ctx, v.Scope, dayStart(s.now()))
	if err != nil {
		return BillingState{}, err
	}
	return s.stateWith(v, bal), nil
}

// stateWith is the billing state of an authorized conglomerate with its
// credit state as just read.
func (s *Service) stateWith(v service.ConglomerateView, bal store.CreditOutcome) BillingState {
	c := v.Conglomerate
	st := BillingState{Plan: planInfo(c, s.now()), PaymentsConfigured: s.payments != nil,
		Credits:   CreditState{Balance: bal.Balance, SpentToday: bal.SpentToday, DailyCreditCap: c.DailyCreditCap},
		AutoTopUp: AutoTopUp{Enabled: c.Billing.AutoTopUpEnabled, Threshold: c.Billing.AutoTopUpThreshold, Credits: c.Billing.AutoTopUpCredits}}
	st.StartBusiness = s.PlanDecision(c, ActionStartBusiness)
	st.EnoughCreditsToStart = bal.Balance >= MinCreditsToStart
	st.Links, st.LinkReasons = s.linkSet(c, 0)
	return st
}

// SetAutoTopUp changes the auto top-up settings. Enabling it needs
// payments and a billing account (a first purchase saves the card).
func (s *Service) SetAutoTopUp(ctx context.Context, conglomerateID string, a AutoTopUp) (BillingState, error) {
	v, err := s.core.AuthorizeOwner(ctx, conglomerateID)
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
	if err := s.store.Billing().SetAutoTopUp(ctx, v.Scope, a.Enabled, a.Threshold, a.Credits); err != nil {
		return BillingState{}, err
	}
	c, err := s.store.Identity().GetConglomerate(ctx, v.ID)
	if err != nil {
		return BillingState{}, err
	}
	v.Conglomerate = c
	return s.billingState(ctx, v)
}

// StopAccountPayments cancels the accounts' subscriptions and deactivates
// their companies' payment objects. Test-mode failures are logged and
// passed over (those objects take no real money); live-mode ones stop the
// deletion.
func (s *Service) StopAccountPayments(ctx context.Context, owned []models.Conglomerate) error {
	if s.payments == nil {
		return nil
	}
	fail := func(what string, err error) error {
		if !s.payments.Livemode() {
			s.logger.WarnContext(ctx, "delete account: test-mode payment objects not stopped", "what", what, "error", err)
			return nil
		}
		return models.Errorf(models.CodeUpstreamUnavailable, "The payment provider could not stop this account's live %s; nothing was deleted. Retry shortly.", what).Wrap(err)
	}
	for _, c := range owned {
		if sub := c.Billing.SubscriptionID; sub != nil && *sub != "" && c.Billing.PlanStatus != models.SubscriptionCanceled {
			if err := s.payments.CancelSubscription(ctx, *sub); err != nil {
				if err := fail("subscription", err); err != nil {
					return err
				}
			}
		}
		v, err := s.core.AuthorizeConglomerate(ctx, c.ID)
		if err != nil {
			return err
		}
		companies, err := s.store.Companies().ListCompanies(ctx, v.Scope, false)
		if err != nil {
			return err
		}
		for _, co := range companies {
			if err := s.payments.DeactivateCompany(ctx, co.ID); err != nil {
				if err := fail("payment objects", err); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
