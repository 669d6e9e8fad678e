package models

import "time"

// Domain purchases and the ad campaign (service/growth).

// DomainState is where a domain purchase stands.
type DomainState string

const (
	// DomainAwaitingPayment: the checkout session is open; nothing is paid.
	DomainAwaitingPayment DomainState = "awaiting_payment"
	// DomainOrderPending: paid; the registrar is registering it (the
	// workflow domain:<purchase_id> polls).
	DomainOrderPending DomainState = "order_pending"
	// DomainRegistered: in the pool, attachable.
	DomainRegistered DomainState = "registered"
	// DomainFailed: not registered (the registrar refused, or another
	// purchase took the name first); the money received, if any, was
	// refunded as credits (RefundedCredits).
	DomainFailed DomainState = "failed"
	// DomainExpired: the checkout ended unpaid (ExpiresAt passed); nothing
	// was paid and nothing is refunded.
	DomainExpired DomainState = "expired"
)

// DomainPurchase is a domain of a conglomerate's pool: bought from one of
// its companies, attached to at most one company at a time (none: parked).
type DomainPurchase struct {
	ID             string      `gorm:"primaryKey;size:36"`
	ConglomerateID string      `gorm:"size:36;not null"`
	CompanyID      string      `gorm:"size:36;not null"` // bought from
	Domain         string      `gorm:"size:253;not null"`
	PriceCents     int64       `gorm:"not null"`
	Currency       string      `gorm:"size:3;not null"`
	State          DomainState `gorm:"size:20;not null"`
	// AttachedCompanyID is the company the domain serves; nil: parked.
	AttachedCompanyID *string `gorm:"size:36"`
	// CheckoutID is the payment provider's checkout session (or "local:…").
	CheckoutID string `gorm:"size:255;not null"`
	// OrderID is the registrar's order.
	OrderID string `gorm:"size:255;not null"`
	// WorkflowStarted is set once domain:<id> was started: the row is the
	// outbox of that start (a paid row without it is swept).
	WorkflowStarted bool   `gorm:"not null"`
	FailureReason   string `gorm:"size:500;not null"`
	// RefundedCredits is what was granted back when the purchase failed:
	// the money received (PaidCents) in credits, rounded up; 0 when
	// nothing was paid.
	RefundedCredits int64 `gorm:"not null"`
	// PaidCents is the money actually received for the purchase: the
	// payment provider's amount; 0 for a local confirmation (payments not
	// configured), which takes no money.
	PaidCents int64 `gorm:"not null;default:0"`
	// ExpiresAt is when an unpaid checkout ends (state expired).
	ExpiresAt    *time.Time
	PaidAt       *time.Time
	RegisteredAt *time.Time
	CreatedAt    time.Time `gorm:"not null"`
	UpdatedAt    time.Time `gorm:"not null"`
}

func (DomainPurchase) TableName() string { return "domain_purchases" }

// Parked reports whether a registered domain waits in the pool unattached.
func (d DomainPurchase) Parked() bool {
	return d.State == DomainRegistered && d.AttachedCompanyID == nil
}

// AdState is the ad campaign's state as the panel shows it.
type AdState string

const (
	// AdPaused: cap 0 (or never set).
	AdPaused AdState = "PAUSED"
	// AdPending: a positive cap is saved; the reconciler has not run yet.
	AdPending AdState = "PENDING"
	// AdActive: today's cap is reserved and the campaign runs.
	AdActive AdState = "ACTIVE"
	// AdInsufficientCredits: the balance cannot fund today's cap; a top-up
	// or a new positive cap resumes it.
	AdInsufficientCredits AdState = "INSUFFICIENT_CREDITS"
)

// AdCampaign is a company's one ad campaign: its daily cap (credits), its
// creative and today's figures.
type AdCampaign struct {
	CompanyID      string  `gorm:"primaryKey;size:36"`
	ConglomerateID string  `gorm:"size:36;not null"`
	DailyCap       int64   `gorm:"not null"`
	State          AdState `gorm:"size:24;not null"`
	// ReconcilePending is set with every change the reconciler must see
	// and cleared once it was signalled: the row is the outbox of that
	// signal (a crash in between is swept by the worker).
	ReconcilePending bool `gorm:"not null"`
	// The creative; CreativeVersion 0: none yet.
	CreativeVersion  int64  `gorm:"not null"`
	Headline         string `gorm:"size:200;not null"`
	Body             string `gorm:"size:1000;not null"`
	CallToAction     string `gorm:"size:40;not null"`
	LinkURL          string `gorm:"size:500;not null"`
	RegenerationDay  time.Time
	RegenerationsDay int64 `gorm:"not null"`
	// RegenerationEffectID is the effect id of the call that made the
	// last regeneration (service.EffectID): the same call made again
	// finds it and regenerates nothing more.
	RegenerationEffectID string `gorm:"size:36;not null;default:''"`
	// Today: the UTC day the figures below count.
	Day              time.Time
	ReservedToday    int64 `gorm:"not null"`
	SpentToday       int64 `gorm:"not null"`
	ImpressionsToday int64 `gorm:"not null"`
	ClicksToday      int64 `gorm:"not null"`
	// Lifetime totals of closed days.
	TotalSpent       int64 `gorm:"not null"`
	TotalImpressions int64 `gorm:"not null"`
	TotalClicks      int64 `gorm:"not null"`
	StateChangedAt   time.Time
	CreatedAt        time.Time `gorm:"not null"`
	UpdatedAt        time.Time `gorm:"not null"`
}

func (AdCampaign) TableName() string { return "ad_campaigns" }

// Activity kinds of domains and ads.
const (
	ActivityDomainRegistered ActivityKind = "domain_registered"
	ActivityDomainFailed     ActivityKind = "domain_failed"
	ActivityDomainAttached   ActivityKind = "domain_attached"
	ActivityDomainDetached   ActivityKind = "domain_detached"
	ActivityAdStateChanged   ActivityKind = "ad_state_changed"
)

// DomainAvailability is a registrar's answer for one domain.
type DomainAvailability struct {
	Domain     string
	Available  bool
	PriceCents int64 // first-year price
	Currency   string
	Premium    bool
	// Reason says why an unavailable domain cannot be bought: "taken" or
	// "tld_not_offered".
	Reason string
}

// RegistrarOrderState is where an order stands at the registrar.
type RegistrarOrderState string

const (
	OrderPending    RegistrarOrderState = "pending"
	OrderRegistered RegistrarOrderState = "registered"
	OrderFailed     RegistrarOrderState = "failed"
)

// RegistrarOrder is an order as the registrar reports it.
type RegistrarOrder struct {
	OrderID string
	Domain  string
	State   RegistrarOrderState
	Reason  string
}

// AdCreative is what the ad shows.
type AdCreative struct {
	Version      int64
	Headline     string
	Body         string
	CallToAction string
	LinkURL      string
}

// AdLaunch is the day's campaign handed to the ads provider.
type AdLaunch struct {
	CompanyID string
	Day       time.Time // UTC midnight
	// BudgetCredits is what the day may spend (its reserved cap).
	BudgetCredits int64
	Creative      AdCreative
}

// AdReport is the ads provider's figures for a company's day.
type AdReport struct {
	SpentCredits int64
	Impressions  int64
	Clicks       int64
}
