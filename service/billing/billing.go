// Package billing holds the credit and plan rules and the payments use
// cases: spending credits under the daily cap, grants, the
// insufficient_credits answer with its links, plan decisions, checkout,
// the customer portal, payouts (Connect), payment webhooks and auto
// top-up. It imports only the service core, the store, models and the
// workflow contract, so an activity spends credits through the same rule
// as a request; what follows a spend or a grant is a workflow signal
// through the Temporal client it is built with (followups.go).
package billing

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// Service is the billing use cases.
type Service struct {
	core     *service.Core
	cfg      service.Config
	store    *store.Store
	logger   *slog.Logger
	now      func() time.Time
	sign     service.Signer
	payments Payments
	temporal client.Client
}

// Options are billing's providers.
type Options struct {
	// Payments nil: payments are not configured, and every payment link
	// is null with a reason.
	Payments Payments
	// Temporal signals the workflows billing's rules follow up on: a
	// spend under the account's threshold starts (or joins) its auto
	// top-up, a grant signals the ad reconcilers of the campaigns it woke.
	// nil (an operator command): no auto top-up is started, and the woken
	// campaigns' marks wait for the growth sweeper.
	Temporal client.Client
}

// New builds the billing use cases on core with everything they call.
func New(core *service.Core, opts Options) *Service {
	return &Service{core: core, cfg: core.Config(), store: core.Store(), logger: core.Logger(), now: core.Clock(), sign: core.Signer(),
		payments: opts.Payments, temporal: opts.Temporal}
}

// Now is the service clock (UTC).
func (s *Service) Now() time.Time { return s.now() }

// Payments is the payment provider (providers/stripepay). nil in New:
// payments are not configured, every payment link is null with a reason.
type Payments interface {
	// DeactivateCompany deactivates a company's live-mode payment objects.
	DeactivateCompany(ctx context.Context, companyID string) error
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

// PaymentsConfigured reports whether a payment provider is configured.
func (s *Service) PaymentsConfigured() bool { return s.payments != nil }
