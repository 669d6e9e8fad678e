// Package stripepay is the payment provider on Stripe (stripe-go v76):
// checkout sessions for credit top-ups and plans, the customer portal,
// Connect onboarding for payouts, off-session auto top-up charges, company
// product deactivation, webhook verification and the account probe.
//
// Two accounts are involved: the platform account takes holdco's own
// payments (credits, plans); the Connect platform account holds the
// businesses' connected accounts for payouts. Each has its own secret key.
package stripepay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/account"
	"github.com/stripe/stripe-go/v76/accountlink"
	billingportalsession "github.com/stripe/stripe-go/v76/billingportal/session"
	"github.com/stripe/stripe-go/v76/charge"
	checkoutsession "github.com/stripe/stripe-go/v76/checkout/session"
	"github.com/stripe/stripe-go/v76/customer"
	"github.com/stripe/stripe-go/v76/paymentintent"
	"github.com/stripe/stripe-go/v76/paymentlink"
	"github.com/stripe/stripe-go/v76/paymentmethod"
	"github.com/stripe/stripe-go/v76/price"
	"github.com/stripe/stripe-go/v76/product"
	"github.com/stripe/stripe-go/v76/subscription"
	"github.com/stripe/stripe-go/v76/webhook"
	"github.com/stripe/stripe-go/v76/webhookendpoint"

	"holdco/models"
)

// Metadata keys holdco puts on the objects it creates, read back from
// webhook events.
const (
	metaConglomerate = "holdco_conglomerate_id"
	metaKind         = "holdco_kind"
	metaCredits      = "holdco_credits"
	metaPlan         = "holdco_plan"
	metaCompany      = "company_id"
	metaPurchase     = "holdco_domain_purchase_id"

	kindAutoTopUp = "auto_top_up"
)

// Config configures the adapter.
type Config struct {
	SecretKey        string // platform account
	ConnectSecretKey string // Connect platform account; empty: the platform account
	WebhookSecret    string
	// ConnectWebhookSecret verifies the Connect webhook endpoint (events
	// of connected accounts: the companies' own sales); empty: sales are
	// not configured.
	ConnectWebhookSecret string
	// APIBase overrides Stripe's API address (stripe-mock in tests).
	APIBase string
	// Prices of the plans, by recurring price id.
	PlanPrices map[models.Plan]string
	// PlanCredits are granted on each paid invoice of a plan.
	PlanCredits map[models.Plan]int64
	HTTPClient  *http.Client
}

// Client talks to Stripe.
type Client struct {
	cfg      Config
	platform *api
	connect  *api
	livemode bool
}

// api is the part of Stripe's API holdco calls, one resource client each,
// as stripe-go's client.API sets them up. client.API itself imports every
// resource package of the library (about 130), which every build of holdco
// then compiled.
type api struct {
	Accounts              *account.Client
	AccountLinks          *accountlink.Client
	BillingPortalSessions *billingportalsession.Client
	Charges               *charge.Client
	CheckoutSessions      *checkoutsession.Client
	Customers             *customer.Client
	PaymentIntents        *paymentintent.Client
	PaymentLinks          *paymentlink.Client
	PaymentMethods        *paymentmethod.Client
	Prices                *price.Client
	Products              *product.Client
	Subscriptions         *subscription.Client
	WebhookEndpoints      *webhookendpoint.Client
}

// newAPI is client.API's Init for the resources of api.
func newAPI(key string, b stripe.Backend) *api {
	return &api{
		Accounts:              &account.Client{B: b, Key: key},
		AccountLinks:          &accountlink.Client{B: b, Key: key},
		BillingPortalSessions: &billingportalsession.Client{B: b, Key: key},
		Charges:               &charge.Client{B: b, Key: key},
		CheckoutSessions:      &checkoutsession.Client{B: b, Key: key},
		Customers:             &customer.Client{B: b, Key: key},
		PaymentIntents:        &paymentintent.Client{B: b, Key: key},
		PaymentLinks:          &paymentlink.Client{B: b, Key: key},
		PaymentMethods:        &paymentmethod.Client{B: b, Key: key},
		Prices:                &price.Client{B: b, Key: key},
		Products:              &product.Client{B: b, Key: key},
		Subscriptions:         &subscription.Client{B: b, Key: key},
		WebhookEndpoints:      &webhookendpoint.Client{B: b, Key: key},
	}
}

// New checks the configuration and builds the API clients.
func New(cfg Config) (*Client, error) {
	if !strings.HasPrefix(cfg.SecretKey, "sk_") && !strings.HasPrefix(cfg.SecretKey, "rk_") {
		return nil, errors.New("the secret key must start with sk_ or rk_")
	}
	if cfg.WebhookSecret == "" {
		return nil, errors.New("a webhook signing secret is required with a secret key")
	}
	if cfg.ConnectSecretKey == "" {
		cfg.ConnectSecretKey = cfg.SecretKey
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	bc := &stripe.BackendConfig{HTTPClient: cfg.HTTPClient, LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelError}}
	if cfg.APIBase != "" {
		bc.URL = stripe.String(strings.TrimRight(cfg.APIBase, "/"))
	}
	// Every resource holdco calls is on the API backend (client.API's
	// Init gives the Connect and Uploads backends to others).
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, bc)
	return &Client{cfg: cfg, platform: newAPI(cfg.SecretKey, backend), connect: newAPI(cfg.ConnectSecretKey, backend),
		livemode: strings.Contains(cfg.SecretKey, "_live_")}, nil
}

// Livemode reports whether the platform key is a live-mode key.
func (c *Client) Livemode() bool { return c.livemode }

// PlanPriceID is the recurring price of a plan ("" when not sold).
func (c *Client) PlanPriceID(p models.Plan) string { return c.cfg.PlanPrices[p] }

// EnsureCustomer creates the conglomerate's customer; the idempotency key
// makes concurrent first purchases share one customer.
func (c *Client) EnsureCustomer(ctx context.Context, r models.CustomerRequest) (string, error) {
	p := &stripe.CustomerParams{Email: nonEmpty(r.Email), Name: nonEmpty(r.Name)}
	p.Context = ctx
	p.AddMetadata(metaConglomerate, r.ConglomerateID)
	p.SetIdempotencyKey("holdco-customer-" + r.ConglomerateID)
	cust, err := c.platform.Customers.New(p)
	if err != nil {
		return "", fmt.Errorf("stripe: create customer: %w", err)
	}
	return cust.ID, nil
}

// Checkout creates a hosted checkout session for a top-up or a plan.
func (c *Client) Checkout(ctx context.Context, r models.CheckoutRequest) (models.CheckoutSession, error) {
	p := &stripe.CheckoutSessionParams{
		Customer:          nonEmpty(r.CustomerID),
		ClientReferenceID: stripe.String(r.ConglomerateID),
		SuccessURL:        stripe.String(r.SuccessURL),
		CancelURL:         stripe.String(r.CancelURL),
	}
	p.Context = ctx
	p.AddMetadata(metaConglomerate, r.ConglomerateID)
	p.AddMetadata(metaKind, string(r.Kind))
	switch r.Kind {
	case models.CheckoutTopUp:
		credits := strconv.FormatInt(r.Credits, 10)
		p.Mode = stripe.String(string(stripe.CheckoutSessionModePayment))
		p.AddMetadata(metaCredits, credits)
		p.LineItems = []*stripe.CheckoutSessionLineItemParams{{
			Quantity: stripe.Int64(r.Credits),
			PriceData: &stripe.CheckoutSessionLineItemPriceDataParams{
				Currency:    stripe.String(string(stripe.CurrencyUSD)),
				UnitAmount:  stripe.Int64(r.UnitAmountCents),
				ProductData: &stripe.CheckoutSessionLineItemPriceDataProductDataParams{Name: stripe.String("holdco credits")},
			},
		}}
		// The card is kept for auto top-ups.
		pi := &stripe.CheckoutSessionPaymentIntentDataParams{SetupFutureUsage: stripe.String(string(stripe.PaymentIntentSetupFutureUsageOffSession))}
		pi.AddMetadata(metaConglomerate, r.ConglomerateID)
		pi.AddMetadata(metaKind, string(r.Kind))
		pi.AddMetadata(metaCredits, credits)
		p.PaymentIntentData = pi
	case models.CheckoutPlan:
		p.Mode = stripe.String(string(stripe.CheckoutSessionModeSubscription))
		p.AddMetadata(metaPlan, string(r.Plan))
		p.LineItems = []*stripe.CheckoutSessionLineItemParams{{Price: stripe.String(r.PriceID), Quantity: stripe.Int64(1)}}
		sd := &stripe.CheckoutSessionSubscriptionDataParams{}
		sd.AddMetadata(metaConglomerate, r.ConglomerateID)
		sd.AddMetadata(metaPlan, string(r.Plan))
		p.SubscriptionData = sd
	case models.CheckoutDomain:
		p.Mode = stripe.String(string(stripe.CheckoutSessionModePayment))
		p.AddMetadata(metaPurchase, r.PurchaseID)
		p.LineItems = []*stripe.CheckoutSessionLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionLineItemPriceDataParams{
				Currency:    stripe.String(string(stripe.CurrencyUSD)),
				UnitAmount:  stripe.Int64(r.AmountCents),
				ProductData: &stripe.CheckoutSessionLineItemPriceDataProductDataParams{Name: stripe.String("Domain " + r.Domain + " (first year)")},
			},
		}}
	default:
		return models.CheckoutSession{}, fmt.Errorf("stripe: unknown checkout kind %q", r.Kind)
	}
	s, err := c.platform.CheckoutSessions.New(p)
	if err != nil {
		return models.CheckoutSession{}, fmt.Errorf("stripe: create checkout session: %w", err)
	}
	return models.CheckoutSession{ID: s.ID, URL: s.URL, ExpiresAt: time.Unix(s.ExpiresAt, 0).UTC()}, nil
}

// Portal opens the customer portal (payment methods, invoices, plan).
func (c *Client) Portal(ctx context.Context, customerID, returnURL string) (string, error) {
	p := &stripe.BillingPortalSessionParams{Customer: stripe.String(customerID), ReturnURL: stripe.String(returnURL)}
	p.Context = ctx
	s, err := c.platform.BillingPortalSessions.New(p)
	if err != nil {
		return "", fmt.Errorf("stripe: create portal session: %w", err)
	}
	return s.URL, nil
}

// ConnectOnboarding creates the connected account when there is none and
// returns it with a single-use onboarding link.
func (c *Client) ConnectOnboarding(ctx context.Context, r models.ConnectOnboardingRequest) (string, string, error) {
	id := r.AccountID
	if id == "" {
		p := &stripe.AccountParams{Type: stripe.String(string(stripe.AccountTypeExpress)), Email: nonEmpty(r.Email)}
		p.Context = ctx
		p.AddMetadata(metaConglomerate, r.ConglomerateID)
		p.SetIdempotencyKey("holdco-connect-account-" + r.ConglomerateID)
		acct, err := c.connect.Accounts.New(p)
		if err != nil {
			return "", "", fmt.Errorf("stripe: create connected account: %w", err)
		}
		id = acct.ID
	}
	lp := &stripe.AccountLinkParams{Account: stripe.String(id), RefreshURL: stripe.String(r.RefreshURL),
		ReturnURL: stripe.String(r.ReturnURL), Type: stripe.String(string(stripe.AccountLinkTypeAccountOnboarding))}
	lp.Context = ctx
	link, err := c.connect.AccountLinks.New(lp)
	if err != nil {
		return id, "", fmt.Errorf("stripe: create account link: %w", err)
	}
	return id, link.URL, nil
}

// ConnectAccount reads a connected account's onboarding state.
func (c *Client) ConnectAccount(ctx context.Context, accountID string) (models.ConnectState, error) {
	p := &stripe.AccountParams{}
	p.Context = ctx
	acct, err := c.connect.Accounts.GetByID(accountID, p)
	if err != nil {
		return models.ConnectState{}, fmt.Errorf("stripe: get connected account: %w", err)
	}
	st := connectState(acct)
	st.AccountID = accountID // the account asked for, whatever the peer echoes
	return st, nil
}

func connectState(a *stripe.Account) models.ConnectState {
	st := models.ConnectState{AccountID: a.ID, ChargesEnabled: a.ChargesEnabled, PayoutsEnabled: a.PayoutsEnabled, DetailsSubmitted: a.DetailsSubmitted}
	if a.Requirements != nil {
		st.Requirements = append(st.Requirements, a.Requirements.CurrentlyDue...)
	}
	return st
}

// ChargeTopUp charges the customer's saved card off-session. The credits
// are granted from the payment's success (at once when it succeeds here,
// or from the payment_intent.succeeded event).
func (c *Client) ChargeTopUp(ctx context.Context, r models.ChargeRequest) (models.ChargeResult, error) {
	lp := &stripe.PaymentMethodListParams{Customer: stripe.String(r.CustomerID), Type: stripe.String(string(stripe.PaymentMethodTypeCard))}
	lp.Context = ctx
	lp.Limit = stripe.Int64(1)
	it := c.platform.PaymentMethods.List(lp)
	if !it.Next() {
		if err := it.Err(); err != nil {
			return models.ChargeResult{}, fmt.Errorf("stripe: list payment methods: %w", err)
		}
		return models.ChargeResult{}, ErrNoPaymentMethod
	}
	p := &stripe.PaymentIntentParams{
		Amount: stripe.Int64(r.Credits * r.UnitAmountCents), Currency: stripe.String(string(stripe.CurrencyUSD)),
		Customer: stripe.String(r.CustomerID), PaymentMethod: stripe.String(it.PaymentMethod().ID),
		Confirm: stripe.Bool(true), OffSession: stripe.Bool(true),
	}
	p.Context = ctx
	p.AddMetadata(metaConglomerate, r.ConglomerateID)
	p.AddMetadata(metaKind, kindAutoTopUp)
	p.AddMetadata(metaCredits, strconv.FormatInt(r.Credits, 10))
	p.SetIdempotencyKey(r.IdempotencyKey)
	pi, err := c.platform.PaymentIntents.New(p)
	if err != nil {
		return models.ChargeResult{}, fmt.Errorf("stripe: charge: %w", err)
	}
	return models.ChargeResult{ID: pi.ID, Status: string(pi.Status), Succeeded: pi.Status == stripe.PaymentIntentStatusSucceeded}, nil
}

// ErrNoPaymentMethod: the customer has no saved card to charge.
var ErrNoPaymentMethod = errors.New("stripe: the customer has no saved card")

// DeactivateCompany deactivates the products a company sells (and their
// prices), so nothing can be bought from an archived company.
func (c *Client) DeactivateCompany(ctx context.Context, companyID string) error {
	sp := &stripe.ProductSearchParams{}
	sp.Context = ctx
	sp.Query = fmt.Sprintf("active:'true' AND metadata['%s']:'%s'", metaCompany, strings.ReplaceAll(companyID, "'", ""))
	it := c.platform.Products.Search(sp)
	for it.Next() {
		prod := it.Product()
		pl := &stripe.PriceListParams{Product: stripe.String(prod.ID), Active: stripe.Bool(true)}
		pl.Context = ctx
		prices := c.platform.Prices.List(pl)
		for prices.Next() {
			up := &stripe.PriceParams{Active: stripe.Bool(false)}
			up.Context = ctx
			if _, err := c.platform.Prices.Update(prices.Price().ID, up); err != nil {
				return fmt.Errorf("stripe: deactivate price %s: %w", prices.Price().ID, err)
			}
		}
		if err := prices.Err(); err != nil {
			return fmt.Errorf("stripe: list prices of %s: %w", prod.ID, err)
		}
		up := &stripe.ProductParams{Active: stripe.Bool(false)}
		up.Context = ctx
		if _, err := c.platform.Products.Update(prod.ID, up); err != nil {
			return fmt.Errorf("stripe: deactivate product %s: %w", prod.ID, err)
		}
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("stripe: search products: %w", err)
	}
	return nil
}

// CancelSubscription cancels a platform subscription at once (an account
// that is deleted is billed no further). An already cancelled or unknown
// subscription is not an error: there is nothing left to stop.
func (c *Client) CancelSubscription(ctx context.Context, subscriptionID string) error {
	p := &stripe.SubscriptionCancelParams{}
	p.Context = ctx
	_, err := c.platform.Subscriptions.Cancel(subscriptionID, p)
	var se *stripe.Error
	if errors.As(err, &se) && se.Code == stripe.ErrorCodeResourceMissing {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stripe: cancel subscription %s: %w", subscriptionID, err)
	}
	return nil
}

// ParseWebhook verifies the Stripe-Signature header (within the default
// five-minute tolerance) and reduces the event to what holdco acts on.
// Events of other types come back as models.EventIgnored.
func (c *Client) ParseWebhook(ctx context.Context, payload []byte, signature string) (models.PaymentEvent, error) {
	ev, err := webhook.ConstructEventWithOptions(payload, signature, c.cfg.WebhookSecret, webhook.ConstructEventOptions{IgnoreAPIVersionMismatch: true})
	if err != nil {
		return models.PaymentEvent{}, fmt.Errorf("stripe: %w: %v", models.ErrBadSignature, err)
	}
	out := models.PaymentEvent{ID: ev.ID, Type: string(ev.Type), Livemode: ev.Livemode, Kind: models.EventIgnored}
	if ev.Data == nil {
		return out, nil
	}
	raw := ev.Data.Raw
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		var s stripe.CheckoutSession
		if err := json.Unmarshal(raw, &s); err != nil {
			return out, fmt.Errorf("stripe: decode checkout session: %w", err)
		}
		return c.checkoutEvent(out, &s), nil
	case "payment_intent.succeeded":
		var pi stripe.PaymentIntent
		if err := json.Unmarshal(raw, &pi); err != nil {
			return out, fmt.Errorf("stripe: decode payment intent: %w", err)
		}
		if pi.Metadata[metaKind] == kindAutoTopUp {
			out = creditsEvent(out, pi.Metadata, "payment_intent:"+pi.ID, models.EntryTopUp)
			out.CustomerID = customerID(pi.Customer)
		}
		return out, nil
	case "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted", "customer.subscription.paused", "customer.subscription.resumed":
		var sub stripe.Subscription
		if err := json.Unmarshal(raw, &sub); err != nil {
			return out, fmt.Errorf("stripe: decode subscription: %w", err)
		}
		return c.subscriptionEvent(out, &sub), nil
	case "invoice.paid":
		var inv stripe.Invoice
		if err := json.Unmarshal(raw, &inv); err != nil {
			return out, fmt.Errorf("stripe: decode invoice: %w", err)
		}
		return c.invoiceEvent(out, &inv), nil
	case "account.updated":
		var a stripe.Account
		if err := json.Unmarshal(raw, &a); err != nil {
			return out, fmt.Errorf("stripe: decode account: %w", err)
		}
		out.Kind, out.Connect = models.EventConnectAccount, connectState(&a)
		return out, nil
	case "charge.dispute.created", "charge.dispute.closed":
		var d stripe.Dispute
		if err := json.Unmarshal(raw, &d); err != nil {
			return out, fmt.Errorf("stripe: decode dispute: %w", err)
		}
		return c.disputeEvent(ctx, out, &d)
	}
	return out, nil
}

func (c *Client) checkoutEvent(out models.PaymentEvent, s *stripe.CheckoutSession) models.PaymentEvent {
	out.CustomerID = customerID(s.Customer)
	switch {
	case s.Mode == stripe.CheckoutSessionModePayment && s.Metadata[metaKind] == string(models.CheckoutTopUp):
		// A delayed payment method completes unpaid; its credits come with
		// async_payment_succeeded.
		if s.PaymentStatus == stripe.CheckoutSessionPaymentStatusPaid {
			out = creditsEvent(out, s.Metadata, "checkout:"+s.ID, models.EntryTopUp)
		}
	case s.Mode == stripe.CheckoutSessionModePayment && s.Metadata[metaKind] == string(models.CheckoutDomain):
		if s.PaymentStatus == stripe.CheckoutSessionPaymentStatusPaid && s.Metadata[metaPurchase] != "" {
			out.Kind, out.ConglomerateID, out.PurchaseID, out.Reference = models.EventDomainPaid, s.Metadata[metaConglomerate], s.Metadata[metaPurchase], "checkout:"+s.ID
			out.AmountCents = s.AmountTotal
		}
	case s.Mode == stripe.CheckoutSessionModeSubscription && s.Subscription != nil:
		// The subscription events carry the state; this links the customer
		// to the account as early as possible.
		out.Kind = models.EventSubscription
		out.ConglomerateID = s.Metadata[metaConglomerate]
		out.SubscriptionID = s.Subscription.ID
		out.Plan = models.Plan(s.Metadata[metaPlan])
		out.PlanStatus = models.SubscriptionActive
		if s.Subscription.Status != "" {
			out.PlanStatus = string(s.Subscription.Status)
		}
	}
	return out
}

func creditsEvent(out models.PaymentEvent, meta map[string]string, ref string, typ models.LedgerEntryType) models.PaymentEvent {
	n, err := strconv.ParseInt(meta[metaCredits], 10, 64)
	if err != nil || n <= 0 || meta[metaConglomerate] == "" {
		return out // not a holdco purchase
	}
	out.Kind, out.ConglomerateID, out.Credits, out.EntryType, out.Reference = models.EventCredits, meta[metaConglomerate], n, typ, ref
	return out
}

// planOfPrice maps a recurring price to the plan it sells.
func (c *Client) planOfPrice(priceID string) models.Plan {
	for plan, id := range c.cfg.PlanPrices {
		if id != "" && id == priceID {
			return plan
		}
	}
	return ""
}

func (c *Client) subscriptionEvent(out models.PaymentEvent, sub *stripe.Subscription) models.PaymentEvent {
	plan := models.Plan(sub.Metadata[metaPlan])
	if sub.Items != nil {
		for _, it := range sub.Items.Data {
			if it.Price != nil {
				if p := c.planOfPrice(it.Price.ID); p != "" {
					plan = p
				}
			}
		}
	}
	if plan == "" {
		return out // not a holdco plan
	}
	out.Kind, out.Plan, out.PlanStatus = models.EventSubscription, plan, string(sub.Status)
	out.ConglomerateID, out.CustomerID, out.SubscriptionID = sub.Metadata[metaConglomerate], customerID(sub.Customer), sub.ID
	if sub.CurrentPeriodEnd > 0 {
		t := time.Unix(sub.CurrentPeriodEnd, 0).UTC()
		out.PlanRenewsAt = &t
	}
	if out.Type == "customer.subscription.deleted" {
		out.PlanStatus = models.SubscriptionCanceled
	}
	return out
}

// invoiceEvent grants a plan's credits for each paid plan invoice.
func (c *Client) invoiceEvent(out models.PaymentEvent, inv *stripe.Invoice) models.PaymentEvent {
	if inv.Lines == nil {
		return out
	}
	for _, l := range inv.Lines.Data {
		if l.Price == nil {
			continue
		}
		plan := c.planOfPrice(l.Price.ID)
		if n := c.cfg.PlanCredits[plan]; plan != "" && n > 0 {
			out.Kind, out.Credits, out.EntryType, out.Reference = models.EventCredits, n, models.EntryPlanGrant, "invoice:"+inv.ID
			out.CustomerID = customerID(inv.Customer)
			if inv.SubscriptionDetails != nil {
				out.ConglomerateID = inv.SubscriptionDetails.Metadata[metaConglomerate]
			}
			return out
		}
	}
	return out
}

// disputeEvent blocks the paying account while one of its payments is
// disputed, and unblocks it when the dispute closes in its favour.
func (c *Client) disputeEvent(ctx context.Context, out models.PaymentEvent, d *stripe.Dispute) (models.PaymentEvent, error) {
	if d.Charge == nil || d.Charge.ID == "" {
		return out, nil
	}
	cp := &stripe.ChargeParams{}
	cp.Context = ctx
	ch, err := c.platform.Charges.Get(d.Charge.ID, cp)
	if err != nil {
		return out, fmt.Errorf("stripe: get disputed charge: %w", err)
	}
	out.CustomerID = customerID(ch.Customer)
	if out.CustomerID == "" {
		return out, nil
	}
	out.Kind = models.EventDispute
	switch {
	case out.Type == "charge.dispute.created":
		out.Blocked, out.Reason = true, "payment disputed ("+string(d.Reason)+")"
	case d.Status == stripe.DisputeStatusWon || d.Status == stripe.DisputeStatusWarningClosed:
		out.Blocked = false
	default: // lost: the account stays blocked
		out.Kind = models.EventIgnored
	}
	return out, nil
}

func customerID(c *stripe.Customer) string {
	if c == nil {
		return ""
	}
	return c.ID
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return stripe.String(s)
}

// Health probes both accounts and the webhook endpoints' API versions.
func (c *Client) Health(ctx context.Context) (models.PaymentHealth, error) {
	h := models.PaymentHealth{Livemode: c.livemode, APIVersion: stripe.APIVersion}
	get := func(from *api) (string, error) {
		p := &stripe.AccountParams{}
		p.Context = ctx
		a := &stripe.Account{}
		// Accounts.Get takes no params, so no context: call it directly.
		if err := from.Accounts.B.Call(http.MethodGet, "/v1/account", from.Accounts.Key, p, a); err != nil {
			return "", err
		}
		return a.ID, nil
	}
	var err error
	if h.PlatformAccountID, err = get(c.platform); err != nil {
		return h, fmt.Errorf("stripe: platform account: %w", err)
	}
	if h.ConnectAccountID, err = get(c.connect); err != nil {
		return h, fmt.Errorf("stripe: connect account: %w", err)
	}
	h.AccountsDistinct = h.PlatformAccountID != h.ConnectAccountID
	if !h.AccountsDistinct {
		h.Problems = append(h.Problems, "the platform and Connect keys reach the same account "+h.PlatformAccountID)
	}
	lp := &stripe.WebhookEndpointListParams{}
	lp.Context = ctx
	it := c.platform.WebhookEndpoints.List(lp)
	for it.Next() {
		we := it.WebhookEndpoint()
		e := models.WebhookEndpointHealth{ID: we.ID, URL: we.URL, APIVersion: we.APIVersion, Pinned: we.APIVersion == stripe.APIVersion}
		if !e.Pinned {
			v := we.APIVersion
			if v == "" {
				v = "the account default"
			}
			h.Problems = append(h.Problems, fmt.Sprintf("webhook endpoint %s uses API version %s, not %s", we.ID, v, stripe.APIVersion))
		}
		h.WebhookEndpoints = append(h.WebhookEndpoints, e)
	}
	if err := it.Err(); err != nil {
		return h, fmt.Errorf("stripe: list webhook endpoints: %w", err)
	}
	if len(h.WebhookEndpoints) == 0 {
		h.Problems = append(h.Problems, "no webhook endpoint is registered on the platform account")
	}
	h.OK = len(h.Problems) == 0
	return h, nil
}
