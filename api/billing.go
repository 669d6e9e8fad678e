package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/billing"
	"holdco/service/paymentevents"
)

// PlanResponse is the account's plan at the moment of the request.
type PlanResponse struct {
	Plan          string     `json:"plan" enum:"free,founder,hosting" doc:"free until a plan is bought; the trial is a window of free."`
	Status        string     `json:"status" doc:"The subscription's state (active, trialing, past_due, unpaid, incomplete, canceled); empty on free."`
	RenewsAt      *time.Time `json:"renews_at"`
	TrialEndsAt   time.Time  `json:"trial_ends_at"`
	TrialActive   bool       `json:"trial_active"`
	Blocked       bool       `json:"blocked"`
	BlockedReason string     `json:"blocked_reason,omitempty"`
}

// AutoTopUpSettings buys credits when a spend leaves the balance below the
// threshold.
type AutoTopUpSettings struct {
	Enabled   bool  `json:"enabled"`
	Threshold int64 `json:"threshold" minimum:"0" maximum:"1000000" doc:"Buy when a spend leaves fewer credits than this."`
	Credits   int64 `json:"credits" minimum:"0" maximum:"100000" doc:"Credits each auto top-up buys (10 to 100000 when enabled)."`
}

// BillingResponse is the account's billing page.
type BillingResponse struct {
	ConglomerateID     string            `json:"conglomerate_id" format:"uuid"`
	Plan               PlanResponse      `json:"plan"`
	Balance            int64             `json:"balance"`
	SpentToday         int64             `json:"spent_today" doc:"Credits spent since midnight UTC."`
	DailyCreditCap     *int64            `json:"daily_credit_cap"`
	MinCreditsToStart  int64             `json:"min_credits_to_start"`
	CreditPriceCents   int64             `json:"credit_price_cents" doc:"Price of one credit in US cents."`
	PaymentsConfigured bool              `json:"payments_configured"`
	AutoTopUp          AutoTopUpSettings `json:"auto_top_up"`
	CanStartBusiness   bool              `json:"can_start_business" doc:"Whether the plan lets the account start a business now: exactly what POST /conglomerates/{id}/companies decides."`
	// EnoughCreditsToStart is the credit side of starting through the connector.
	EnoughCreditsToStart bool `json:"enough_credits_to_start" doc:"balance >= min_credits_to_start: the connector's create_business and a first turn need it besides the plan; POST /companies does not."`
	// StartBlockedBy is the error a business start would get now.
	StartBlockedBy *string           `json:"start_blocked_by,omitempty" doc:"Why can_start_business is false: plan_blocked, plan_expired, plan_no_ai or payment_required."`
	Links          map[string]any    `json:"links" doc:"top_up, upgrade, customer_portal (signed links valid 24 hours; null when unusable) and dashboard."`
	LinkReasons    map[string]string `json:"link_reasons" doc:"<link>_unavailable: why a link is null (payments_not_configured, already_on_plan, plan_not_for_sale, no_billing_account_yet)."`
}

// CheckoutSessionRequest buys credits or the Founder plan.
type CheckoutSessionRequest struct {
	Kind    string `json:"kind" enum:"top_up,founder"`
	Credits int64  `json:"credits,omitempty" minimum:"10" maximum:"100000" doc:"Credits to buy: required for top_up; omit it for founder."`
}

// CheckoutSessionResponse is a hosted checkout page to send the user to.
type CheckoutSessionResponse struct {
	ID        string    `json:"id"`
	URL       string    `json:"url" format:"uri"`
	ExpiresAt time.Time `json:"expires_at"`
}

// PortalSessionResponse is the customer portal page.
type PortalSessionResponse struct {
	URL string `json:"url" format:"uri"`
}

// ConnectStatusResponse is the payout (Connect) onboarding state.
type ConnectStatusResponse struct {
	ConglomerateID     string   `json:"conglomerate_id" format:"uuid"`
	State              string   `json:"state" enum:"not_configured,not_started,pending,restricted,complete"`
	AccountID          *string  `json:"account_id"`
	ChargesEnabled     bool     `json:"charges_enabled"`
	PayoutsEnabled     bool     `json:"payouts_enabled"`
	DetailsSubmitted   bool     `json:"details_submitted"`
	Requirements       []string `json:"requirements" doc:"What the provider still needs before payouts."`
	PaymentsConfigured bool     `json:"payments_configured"`
}

// ConnectOnboardingResponse is a single-use onboarding link.
type ConnectOnboardingResponse struct {
	URL    string                `json:"url" format:"uri"`
	Status ConnectStatusResponse `json:"status"`
}

// WebhookResponse acknowledges a payment event.
type WebhookResponse struct {
	Received  bool   `json:"received"`
	EventID   string `json:"event_id"`
	Duplicate bool   `json:"duplicate" doc:"The event was handled before; nothing was done again."`
	Ignored   bool   `json:"ignored" doc:"holdco does not act on this event type."`
}

// StripeHealthResponse is the payment provider probe.
type StripeHealthResponse struct {
	OK                bool                     `json:"ok"`
	Livemode          bool                     `json:"livemode"`
	APIVersion        string                   `json:"api_version" doc:"The API version holdco is pinned to."`
	PlatformAccountID string                   `json:"platform_account_id"`
	ConnectAccountID  string                   `json:"connect_account_id"`
	AccountsDistinct  bool                     `json:"accounts_distinct"`
	WebhookEndpoints  []WebhookEndpointSummary `json:"webhook_endpoints"`
	Problems          []string                 `json:"problems"`
}

// WebhookEndpointSummary is one webhook endpoint registered at the provider.
type WebhookEndpointSummary struct {
	ID         string `json:"id"`
	URL        string `json:"url"`
	APIVersion string `json:"api_version"`
	Pinned     bool   `json:"pinned"`
}

type billingHandlers struct {
	svc *billing.Service
	// events applies the payment webhook's events (credits, plans and
	// domain payments alike).
	events *paymentevents.Service
}

func registerBillingRoutes(api huma.API, h *billingHandlers) {
	tags := []string{"billing"}
	huma.Register(api, huma.Operation{OperationID: "get-billing", Method: http.MethodGet, Path: "/conglomerates/{conglomerate_id}/billing",
		Tags: tags, Summary: "Plan, balance, auto top-up and payment links", Security: bearerSecurity}, h.get)
	huma.Register(api, huma.Operation{OperationID: "create-checkout-session", Method: http.MethodPost, Path: "/conglomerates/{conglomerate_id}/billing/checkout-session",
		Tags: tags, Summary: "Open a checkout for credits or the Founder plan", Security: bearerSecurity,
		Description: "Owner only. 409 when payments are not configured, the Founder plan is not for sale or already held; 502 when the provider fails."}, h.checkout)
	huma.Register(api, huma.Operation{OperationID: "create-portal-session", Method: http.MethodPost, Path: "/conglomerates/{conglomerate_id}/billing/portal-session",
		Tags: tags, Summary: "Open the customer portal", Security: bearerSecurity,
		Description: "Owner only. 409 before the first purchase (no billing account yet)."}, h.portal)
	huma.Register(api, huma.Operation{OperationID: "set-auto-top-up", Method: http.MethodPut, Path: "/conglomerates/{conglomerate_id}/billing/auto-top-up",
		Tags: tags, Summary: "Set auto top-up", Security: bearerSecurity,
		Description: "Owner only. Enabling needs payments and an earlier purchase (its card is charged off-session)."}, h.setAutoTopUp)
	huma.Register(api, huma.Operation{OperationID: "connect-status", Method: http.MethodGet, Path: "/conglomerates/me/connect-status",
		Tags: tags, Summary: "Payout onboarding state", Security: bearerSecurity}, h.connectStatus)
	huma.Register(api, huma.Operation{OperationID: "connect-onboarding", Method: http.MethodPost, Path: "/conglomerates/me/connect-onboarding",
		Tags: tags, Summary: "Start or resume payout onboarding", Security: bearerSecurity,
		Description: "Owner only. Creates the payout account on first use; the link is single-use."}, h.connectOnboarding)
	huma.Register(api, huma.Operation{OperationID: "follow-billing-link", Method: http.MethodGet, Path: billing.BillingLinkPath,
		Tags: tags, Summary: "Follow a billing link", DefaultStatus: http.StatusFound,
		Description: "The signed link of insufficient_credits and billing answers: opens the checkout or portal and redirects there. 404 when invalid or expired."}, h.follow)
	huma.Register(api, huma.Operation{OperationID: "stripe-webhook", Method: http.MethodPost, Path: "/webhooks/stripe",
		Tags: tags, Summary: "Payment provider events", MaxBodyBytes: webhookBodyLimit,
		Description: "Verified by the Stripe-Signature header (400 and nothing recorded when it does not verify). Idempotent by event id; unknown event types are acknowledged and ignored."}, h.webhook)
	huma.Register(api, huma.Operation{OperationID: "stripe-health", Method: http.MethodGet, Path: "/health/stripe",
		Tags: []string{"admin"}, Summary: "Probe the payment provider", Security: bearerSecurity, Metadata: map[string]any{adminOnly: true},
		Description: "Checks that the platform and Connect keys reach two distinct accounts and that every webhook endpoint is pinned to holdco's API version. Live calls; for manual use."}, h.health)
}

func toBillingResponse(id string, st billing.BillingState, creditPrice int64) BillingResponse {
	r := BillingResponse{ConglomerateID: id, Balance: st.Credits.Balance, SpentToday: st.Credits.SpentToday, DailyCreditCap: st.Credits.DailyCreditCap,
		MinCreditsToStart: billing.MinCreditsToStart, CreditPriceCents: creditPrice, PaymentsConfigured: st.PaymentsConfigured,
		AutoTopUp: AutoTopUpSettings(st.AutoTopUp), CanStartBusiness: st.StartBusiness == nil, EnoughCreditsToStart: st.EnoughCreditsToStart, Links: st.Links, LinkReasons: st.LinkReasons,
		Plan: PlanResponse{Plan: string(st.Plan.Plan), Status: st.Plan.Status, RenewsAt: st.Plan.RenewsAt, TrialEndsAt: st.Plan.TrialEndsAt,
			TrialActive: st.Plan.TrialActive, Blocked: st.Plan.Blocked, BlockedReason: st.Plan.BlockedReason}}
	if st.StartBusiness != nil {
		code := string(st.StartBusiness.Code)
		r.StartBlockedBy = &code
	}
	return r
}

type billingOutput struct{ Body BillingResponse }

func (h *billingHandlers) get(ctx context.Context, in *conglomerateIDInput) (*billingOutput, error) {
	st, err := h.svc.Billing(ctx, in.ConglomerateID)
	if err != nil {
		return nil, err
	}
	return &billingOutput{Body: toBillingResponse(in.ConglomerateID, st, h.svc.CreditPriceCents())}, nil
}

type checkoutInput struct {
	ConglomerateID string `path:"conglomerate_id" format:"uuid"`
	Body           CheckoutSessionRequest
}

type checkoutOutput struct{ Body CheckoutSessionResponse }

func (h *billingHandlers) checkout(ctx context.Context, in *checkoutInput) (*checkoutOutput, error) {
	kind := models.CheckoutTopUp
	if in.Body.Kind == "founder" {
		kind = models.CheckoutPlan
	}
	cs, err := h.svc.CheckoutSession(ctx, in.ConglomerateID, kind, in.Body.Credits)
	if err != nil {
		return nil, err
	}
	return &checkoutOutput{Body: CheckoutSessionResponse{ID: cs.ID, URL: cs.URL, ExpiresAt: cs.ExpiresAt}}, nil
}

type portalOutput struct{ Body PortalSessionResponse }

func (h *billingHandlers) portal(ctx context.Context, in *conglomerateIDInput) (*portalOutput, error) {
	u, err := h.svc.PortalSession(ctx, in.ConglomerateID)
	if err != nil {
		return nil, err
	}
	return &portalOutput{Body: PortalSessionResponse{URL: u}}, nil
}

type autoTopUpInput struct {
	ConglomerateID string `path:"conglomerate_id" format:"uuid"`
	Body           AutoTopUpSettings
}

func (h *billingHandlers) setAutoTopUp(ctx context.Context, in *autoTopUpInput) (*billingOutput, error) {
	st, err := h.svc.SetAutoTopUp(ctx, in.ConglomerateID, billing.AutoTopUp(in.Body))
	if err != nil {
		return nil, err
	}
	return &billingOutput{Body: toBillingResponse(in.ConglomerateID, st, h.svc.CreditPriceCents())}, nil
}

func toConnectStatus(st billing.ConnectStatus) ConnectStatusResponse {
	r := ConnectStatusResponse{ConglomerateID: st.ConglomerateID, State: st.State, ChargesEnabled: st.ChargesEnabled, PayoutsEnabled: st.PayoutsEnabled,
		DetailsSubmitted: st.DetailsSubmitted, Requirements: st.Requirements, PaymentsConfigured: st.PaymentsConfigured}
	if st.AccountID != "" {
		r.AccountID = &st.AccountID
	}
	if r.Requirements == nil {
		r.Requirements = []string{}
	}
	return r
}

type connectStatusOutput struct{ Body ConnectStatusResponse }

func (h *billingHandlers) connectStatus(ctx context.Context, _ *struct{}) (*connectStatusOutput, error) {
	st, err := h.svc.MyConnectStatus(ctx)
	if err != nil {
		return nil, err
	}
	return &connectStatusOutput{Body: toConnectStatus(st)}, nil
}

type connectOnboardingOutput struct{ Body ConnectOnboardingResponse }

func (h *billingHandlers) connectOnboarding(ctx context.Context, _ *struct{}) (*connectOnboardingOutput, error) {
	u, st, err := h.svc.StartConnectOnboarding(ctx)
	if err != nil {
		return nil, err
	}
	return &connectOnboardingOutput{Body: ConnectOnboardingResponse{URL: u, Status: toConnectStatus(st)}}, nil
}

type followInput struct {
	Token string `query:"t" required:"true" minLength:"1" maxLength:"2048"`
}

type followOutput struct {
	Location     string `header:"Location"`
	CacheControl string `header:"Cache-Control"`
}

func (h *billingHandlers) follow(ctx context.Context, in *followInput) (*followOutput, error) {
	u, err := h.svc.FollowBillingLink(ctx, in.Token)
	if err != nil {
		return nil, err
	}
	return &followOutput{Location: u, CacheControl: "no-store"}, nil
}

// webhookBodyLimit bounds a payment provider's event (Stripe's are a few
// kilobytes; an invoice with many lines stays far below it). huma applies
// its default limit only to operations with a Body field: a RawBody one
// read without end until this was set (TestEveryRouteBoundsItsBody).
const webhookBodyLimit = 2 << 20

type webhookInput struct {
	Signature string `header:"Stripe-Signature"`
	RawBody   []byte
}

type webhookOutput struct{ Body WebhookResponse }

func (h *billingHandlers) webhook(ctx context.Context, in *webhookInput) (*webhookOutput, error) {
	res, err := h.events.HandlePaymentWebhook(ctx, in.RawBody, in.Signature)
	if err != nil {
		return nil, err
	}
	return &webhookOutput{Body: WebhookResponse{Received: true, EventID: res.EventID, Duplicate: res.Duplicate, Ignored: res.Ignored}}, nil
}

type stripeHealthOutput struct{ Body StripeHealthResponse }

func (h *billingHandlers) health(ctx context.Context, _ *struct{}) (*stripeHealthOutput, error) {
	r, err := h.svc.PaymentHealth(ctx)
	if err != nil {
		return nil, err
	}
	out := StripeHealthResponse{OK: r.OK, Livemode: r.Livemode, APIVersion: r.APIVersion, PlatformAccountID: r.PlatformAccountID,
		ConnectAccountID: r.ConnectAccountID, AccountsDistinct: r.AccountsDistinct, Problems: r.Problems, WebhookEndpoints: []WebhookEndpointSummary{}}
	if out.Problems == nil {
		out.Problems = []string{}
	}
	for _, e := range r.WebhookEndpoints {
		out.WebhookEndpoints = append(out.WebhookEndpoints, WebhookEndpointSummary(e))
	}
	return &stripeHealthOutput{Body: out}, nil
}
