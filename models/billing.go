package models

import (
	"errors"
	"time"
)

// Plan is the paid tier of an account. Every account is on PlanFree until
// it subscribes; the free trial is a window of PlanFree, not a plan.
type Plan string

const (
	PlanFree    Plan = "free"
	PlanFounder Plan = "founder"
	// PlanHosting keeps sites, data and domains online without agents: its
	// accounts get plan_no_ai for AI work.
	PlanHosting Plan = "hosting"
)

// Subscription states as the payment provider reports them.
const (
	SubscriptionActive     = "active"
	SubscriptionTrialing   = "trialing"
	SubscriptionPastDue    = "past_due"
	SubscriptionUnpaid     = "unpaid"
	SubscriptionIncomplete = "incomplete"
	SubscriptionCanceled   = "canceled"
)

// Billing is the payment state of a conglomerate, stored on its row.
type Billing struct {
	Plan Plan `gorm:"size:16;not null;default:free"`
	// PlanStatus is the subscription's state; empty on PlanFree.
	PlanStatus   string `gorm:"size:24;not null;default:''"`
	PlanRenewsAt *time.Time
	// Payment-provider ids of the account's customer and subscription.
	CustomerID     *string `gorm:"size:64"`
	SubscriptionID *string `gorm:"size:64"`
	// BlockedAt stops all paid work (plan_blocked), for example while a
	// payment is disputed.
	BlockedAt     *time.Time
	BlockedReason string `gorm:"size:200;not null;default:''"`
	// Auto top-up buys AutoTopUpCredits when a spend leaves the balance
	// below AutoTopUpThreshold.
	AutoTopUpEnabled   bool  `gorm:"not null;default:false"`
	AutoTopUpThreshold int64 `gorm:"not null;default:0"`
	AutoTopUpCredits   int64 `gorm:"not null;default:0"`
	// Connect: the account's payout (connected) account and its state.
	ConnectAccountID        *string `gorm:"size:64"`
	ConnectChargesEnabled   bool    `gorm:"not null;default:false"`
	ConnectPayoutsEnabled   bool    `gorm:"not null;default:false"`
	ConnectDetailsSubmitted bool    `gorm:"not null;default:false"`
	// ConnectRequirements lists what the provider still needs, comma
	// separated (for example "individual.verification.document").
	ConnectRequirements string `gorm:"size:1000;not null;default:''"`
}

// PaymentEvent is a verified payment-provider event, reduced to what holdco
// acts on. Kind says which of the fields are set.
type PaymentEvent struct {
	ID       string
	Type     string // the provider's event type
	Livemode bool
	Kind     PaymentEventKind

	ConglomerateID string // from metadata, when holdco created the object
	CustomerID     string

	// Credits to grant (KindCredits), with Reference making the grant
	// idempotent (a checkout session, payment or invoice id).
	Credits   int64
	EntryType LedgerEntryType
	Reference string

	// Subscription state (KindSubscription).
	SubscriptionID string
	Plan           Plan
	PlanStatus     string
	PlanRenewsAt   *time.Time

	// Connect account state (KindConnectAccount).
	Connect ConnectState

	// Domain purchase paid (EventDomainPaid), with the money received.
	PurchaseID  string
	AmountCents int64

	// Dispute (KindDispute): Blocked true blocks, false unblocks.
	Blocked bool
	Reason  string
}

// PaymentEventKind is what a payment event means to holdco.
type PaymentEventKind string

const (
	EventIgnored        PaymentEventKind = "ignored"
	EventCredits        PaymentEventKind = "credits"
	EventSubscription   PaymentEventKind = "subscription"
	EventConnectAccount PaymentEventKind = "connect_account"
	EventDispute        PaymentEventKind = "dispute"
	// EventDomainPaid: a domain purchase's checkout was paid (PurchaseID,
	// Reference is the checkout session).
	EventDomainPaid PaymentEventKind = "domain_paid"
)

// ConnectState is a connected (payout) account as the provider reports it.
type ConnectState struct {
	AccountID        string
	ChargesEnabled   bool
	PayoutsEnabled   bool
	DetailsSubmitted bool
	Requirements     []string
}

// ProcessedPaymentEvent records a handled event id, so a replayed event is
// acknowledged without acting twice.
type ProcessedPaymentEvent struct {
	ID          string    `gorm:"primaryKey;size:255"`
	Type        string    `gorm:"size:100;not null"`
	Livemode    bool      `gorm:"not null"`
	ProcessedAt time.Time `gorm:"not null"`
}

func (ProcessedPaymentEvent) TableName() string { return "payment_events" }

// CheckoutKind is what a checkout session sells.
type CheckoutKind string

const (
	CheckoutTopUp CheckoutKind = "top_up"
	CheckoutPlan  CheckoutKind = "plan"
	// CheckoutDomain pays a domain purchase (service/growth).
	CheckoutDomain CheckoutKind = "domain"
)

// CheckoutRequest asks the payment provider for a hosted checkout page.
type CheckoutRequest struct {
	Kind           CheckoutKind
	ConglomerateID string
	CustomerID     string
	// Top-ups: Credits at UnitAmountCents each.
	Credits         int64
	UnitAmountCents int64
	// Plans: the provider's recurring price.
	Plan                  Plan
	PriceID               string
	SuccessURL, CancelURL string
	// Domains: the purchase, its domain and first-year price.
	PurchaseID  string
	Domain      string
	AmountCents int64
}

// CheckoutSession is a hosted checkout page.
type CheckoutSession struct {
	ID        string
	URL       string
	ExpiresAt time.Time
}

// CustomerRequest creates (once per conglomerate) the paying customer.
type CustomerRequest struct {
	ConglomerateID string
	Email, Name    string
}

// ConnectOnboardingRequest opens payout onboarding; AccountID empty
// creates the connected account first.
type ConnectOnboardingRequest struct {
	AccountID             string
	ConglomerateID        string
	Email                 string
	RefreshURL, ReturnURL string
}

// ChargeRequest charges the customer's saved payment method off-session
// (auto top-up).
type ChargeRequest struct {
	ConglomerateID  string
	CustomerID      string
	Credits         int64
	UnitAmountCents int64
	IdempotencyKey  string
}

// ChargeResult is the payment an off-session charge made.
type ChargeResult struct {
	ID        string
	Status    string
	Succeeded bool
}

// PaymentHealth is what GET /health/stripe reports.
type PaymentHealth struct {
	OK                bool
	Livemode          bool
	APIVersion        string
	PlatformAccountID string
	ConnectAccountID  string
	AccountsDistinct  bool
	WebhookEndpoints  []WebhookEndpointHealth
	Problems          []string
}

// WebhookEndpointHealth is one registered webhook endpoint.
type WebhookEndpointHealth struct {
	ID         string
	URL        string
	APIVersion string
	Pinned     bool
}

// ErrBadSignature: a payment webhook is not signed with the configured
// secret (or its timestamp is outside the tolerance).
var ErrBadSignature = errors.New("webhook signature verification failed")
