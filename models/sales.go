package models

import (
	"time"

	"gorm.io/gorm"
)

// A company's own sales: products its customers buy, their payments and
// subscriptions, and the revenue they make. Payments go to the connected
// (payout) account of the company's conglomerate; holdco attributes each
// to a company by the company_id it puts in the metadata of every object.

// SalesCurrency is the one currency companies sell in for now: balances are
// whole cents of it. Payments recorded in another currency (a provider's
// currency conversion) are listed but not added to the balance.
const SalesCurrency = "usd"

// BillingInterval is how often a product's price is charged: once ("") or
// every month or year (a subscription).
type BillingInterval string

const (
	IntervalOnce  BillingInterval = ""
	IntervalMonth BillingInterval = "month"
	IntervalYear  BillingInterval = "year"
)

// Recurring reports whether the price is a subscription.
func (i BillingInterval) Recurring() bool { return i == IntervalMonth || i == IntervalYear }

// Product is something a company sells, with its one price, created on the
// connected account of the company's conglomerate.
type Product struct {
	ID                string          `gorm:"primaryKey;size:36"`
	CompanyID         string          `gorm:"size:36;not null"`
	ConglomerateID    string          `gorm:"size:36;not null"`
	ProviderAccountID string          `gorm:"size:64;not null"`
	ProviderProductID string          `gorm:"size:64;not null"`
	ProviderPriceID   string          `gorm:"size:64;not null"`
	Name              string          `gorm:"size:200;not null"`
	Description       string          `gorm:"type:text;not null"`
	PriceCents        int64           `gorm:"not null"`
	Currency          string          `gorm:"size:3;not null"`
	Interval          BillingInterval `gorm:"size:8;not null"`
	Active            bool            `gorm:"not null"`
	// Pending: written before the provider created the product (the
	// provider's objects are keyed by ID), not finished yet; not listed,
	// not sold. A create of the same product resumes it.
	Pending   bool      `gorm:"not null;default:false"`
	CreatedAt time.Time `gorm:"not null"`
}

func (Product) TableName() string { return "company_products" }

// BeforeCreate gives a new product its UUID.
func (p *Product) BeforeCreate(*gorm.DB) error { ensureID(&p.ID); return nil }

// CompanyPayment is one payment a company's customer made: a one-time
// purchase or one paid invoice of a subscription. ProviderPaymentID (the
// payment intent) is unique, so a payment is recorded once whichever event
// reports it and however often. RefundedCents is the total refunded so far.
type CompanyPayment struct {
	ID                string    `gorm:"primaryKey;size:36"`
	CompanyID         string    `gorm:"size:36;not null"`
	ConglomerateID    string    `gorm:"size:36;not null"`
	ProviderAccountID string    `gorm:"size:64;not null"`
	ProviderPaymentID string    `gorm:"size:255;not null"`
	ProductID         string    `gorm:"size:36;not null"`
	SubscriptionID    string    `gorm:"size:64;not null"` // the provider's, "" for one-time purchases
	AmountCents       int64     `gorm:"not null"`
	RefundedCents     int64     `gorm:"not null"`
	Currency          string    `gorm:"size:3;not null"`
	PaidAt            time.Time `gorm:"not null"`
	CreatedAt         time.Time `gorm:"not null"`
}

func (CompanyPayment) TableName() string { return "company_payments" }

// BeforeCreate gives a new payment its UUID.
func (p *CompanyPayment) BeforeCreate(*gorm.DB) error { ensureID(&p.ID); return nil }

// CustomerSubscription is a subscription one of a company's customers
// bought, as the provider last reported it.
type CustomerSubscription struct {
	ID                     string `gorm:"primaryKey;size:36"`
	CompanyID              string `gorm:"size:36;not null"`
	ConglomerateID         string `gorm:"size:36;not null"`
	ProviderAccountID      string `gorm:"size:64;not null"`
	ProviderSubscriptionID string `gorm:"size:64;not null"`
	ProductID              string `gorm:"size:36;not null"`
	Status                 string `gorm:"size:24;not null"`
	CurrentPeriodEnd       *time.Time
	CancelAtPeriodEnd      bool `gorm:"not null"`
	// StartedAt is when it was first active (or trialing), CanceledAt when
	// it was first seen canceled: each is set once, so the activity events
	// of both are written once.
	StartedAt  *time.Time
	CanceledAt *time.Time
	// ProviderUpdatedAt is the time of the newest event applied; an older
	// event delivered late changes nothing.
	ProviderUpdatedAt time.Time `gorm:"not null"`
	CreatedAt         time.Time `gorm:"not null"`
	UpdatedAt         time.Time `gorm:"not null"`
}

func (CustomerSubscription) TableName() string { return "company_subscriptions" }

// BeforeCreate gives a new subscription row its UUID.
func (s *CustomerSubscription) BeforeCreate(*gorm.DB) error { ensureID(&s.ID); return nil }

// Revenue is what a company has earned, in cents of SalesCurrency.
type Revenue struct {
	Currency string
	// GrossCents is every payment; RefundedCents what was given back.
	GrossCents    int64
	RefundedCents int64
	// LifetimeEarningsCents is GrossCents net of refunds.
	LifetimeEarningsCents int64
	// WithdrawnCents is always 0: there are no withdrawals yet.
	WithdrawnCents int64
	// BalanceCents is LifetimeEarningsCents minus WithdrawnCents.
	BalanceCents int64
	Payments     int64
}

// NewRevenue completes a revenue from its sums.
func NewRevenue(gross, refunded, withdrawn, payments int64) Revenue {
	r := Revenue{Currency: SalesCurrency, GrossCents: gross, RefundedCents: refunded, WithdrawnCents: withdrawn, Payments: payments}
	r.LifetimeEarningsCents = gross - refunded
	r.BalanceCents = r.LifetimeEarningsCents - withdrawn
	return r
}

// ProductRequest creates a product and its price on a connected account.
type ProductRequest struct {
	AccountID   string // the conglomerate's connected account
	CompanyID   string
	ProductID   string // holdco's id, also the idempotency key
	Name        string
	Description string
	PriceCents  int64
	Currency    string
	Interval    BillingInterval
}

// ProviderProduct is the provider's product and price.
type ProviderProduct struct {
	ProductID string
	PriceID   string
}

// PaymentLinkRequest opens a reusable checkout page for one product.
type PaymentLinkRequest struct {
	AccountID string
	CompanyID string
	ProductID string // holdco's
	PriceID   string // the provider's
	Recurring bool
	// SuccessURL is where the customer lands after paying; "" keeps the
	// provider's confirmation page.
	SuccessURL string
	// IdempotencyKey names the request at the provider: the same key
	// sent again answers the link the first request made.
	IdempotencyKey string
}

// PaymentLink is a checkout page the company's customers pay at.
type PaymentLink struct {
	ID  string
	URL string
}

// SalesEventKind is what an event of a connected account means to holdco.
type SalesEventKind string

const (
	SalesEventIgnored      SalesEventKind = "ignored"
	SalesEventPayment      SalesEventKind = "payment"
	SalesEventRefund       SalesEventKind = "refund"
	SalesEventSubscription SalesEventKind = "subscription"
)

// SalesEvent is a verified event of a connected account, reduced to what
// holdco records. Kind says which part is set.
type SalesEvent struct {
	ID       string
	Type     string
	Livemode bool
	// Account is the connected account the event happened on.
	Account   string
	Kind      SalesEventKind
	CreatedAt time.Time
	// CompanyID is from the object's metadata ("" when holdco did not
	// create it); refunds name their payment instead.
	CompanyID    string
	Payment      SalesPayment
	Refund       SalesRefund
	Subscription SalesSubscription
}

// SalesPayment is a succeeded payment.
type SalesPayment struct {
	ProviderPaymentID string
	AmountCents       int64
	Currency          string
	ProductID         string
	SubscriptionID    string
}

// SalesRefund is the refunded total of a payment.
type SalesRefund struct {
	ProviderPaymentID string
	RefundedCents     int64
}

// SalesSubscription is a subscription's state.
type SalesSubscription struct {
	ProviderSubscriptionID string
	ProductID              string
	Status                 string
	CurrentPeriodEnd       *time.Time
	CancelAtPeriodEnd      bool
}
