package billing

import (
	"context"
	"holdco/models"
	"holdco/service"
	"strings"
)

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
	p, err := service.RequireUser(ctx)
	if err != nil {
		return ConnectStatus{}, err
	}
	v, err := s.core.AuthorizeConglomerate(ctx, p.ConglomerateID)
	if err != nil {
		return ConnectStatus{}, err
	}
	c := v.Conglomerate
	if s.payments != nil && c.Billing.ConnectAccountID != nil {
		live, err := s.payments.ConnectAccount(ctx, *c.Billing.ConnectAccountID)
		if err != nil {
			s.logger.WarnContext(ctx, "connect status: provider unavailable, answering the stored state", "error", err)
		} else if err := s.store.Billing().UpdateConnectState(ctx, live); err != nil {
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
	p, err := service.RequireUser(ctx)
	if err != nil {
		return "", ConnectStatus{}, err
	}
	v, err := s.billingOwner(ctx, p.ConglomerateID)
	if err != nil {
		return "", ConnectStatus{}, err
	}
	owner, err := s.store.Identity().GetUser(ctx, v.OwnerUserID)
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
		if serr := s.store.Billing().SetConnectAccount(ctx, v.Scope, id); serr != nil {
			return "", ConnectStatus{}, serr
		}
		v.Billing.ConnectAccountID = &id
	}
	if err != nil {
		return "", ConnectStatus{}, upstream("The payment provider could not start payout onboarding; retry shortly.", err)
	}
	return link, connectStatusOf(v.Conglomerate, true), nil
}

func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' })
}
