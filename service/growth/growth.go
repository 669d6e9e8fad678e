// Package growth holds the use cases of domains and ads: searching and
// buying domains into the conglomerate's pool, attaching and detaching
// them, and each company's ad campaign with its daily cap funded from
// credits. The registrar and the ads network are providers behind the
// interfaces below; the workflows domain:<purchase_id> and
// ads:<company_id> (workflows/) call the worker-side functions of this
// package through their activities.
package growth

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/store"
)

// Registrar is the domain registrar (providers/registrar).
type Registrar interface {
	// Search answers availability and first-year price for each domain
	// (ASCII), in order.
	Search(ctx context.Context, domains []string) ([]models.DomainAvailability, error)
	// Register places an order; key makes it idempotent.
	Register(ctx context.Context, domain, key string) (orderID string, err error)
	// Status reports an order.
	Status(ctx context.Context, orderID string) (models.RegistrarOrder, error)
}

// Ads is the ads network (providers/ads).
type Ads interface {
	// Launch runs the company's campaign for the day with its budget and
	// creative; launching again swaps the creative.
	Launch(ctx context.Context, l models.AdLaunch) error
	Pause(ctx context.Context, companyID string) error
	// Report is the day's figures so far.
	Report(ctx context.Context, companyID string, day time.Time) (models.AdReport, error)
}

// DefaultTLDs are the TLDs a bare name's suggestion grid covers.
var DefaultTLDs = []string{"com", "net", "org", "io", "co", "app", "dev"}

// Options are the providers and settings.
type Options struct {
	Registrar Registrar
	Ads       Ads
	// Temporal starts and signals the workflows; nil: they are left to
	// the worker's sweeper.
	Temporal client.Client
	// TLDs of the suggestion grid (nil: DefaultTLDs).
	TLDs []string
}

// Service is the growth use cases.
type Service struct {
	core      *service.Core
	store     *store.Store
	billing   *billing.Service
	registrar Registrar
	ads       Ads
	temporal  client.Client
	tlds      []string
	logger    *slog.Logger
	now       func() time.Time
}

// New builds the growth use cases on billing (credits for domains and
// ads). Nothing is installed in billing: a grant marks the campaigns
// waiting for credits in its own transaction (store.CreditOutcome.Woken),
// and a paid domain checkout reaches MarkDomainPaid through the payment
// events' router (service/paymentevents).
func New(core *service.Core, bill *billing.Service, opts Options) *Service {
	s := &Service{core: core, store: core.Store(), billing: bill, registrar: opts.Registrar, ads: opts.Ads,
		temporal: opts.Temporal, tlds: opts.TLDs, logger: core.Logger(), now: core.Clock()}
	if len(s.tlds) == 0 {
		s.tlds = DefaultTLDs
	}
	return s
}

// TLDs are the suggestion grid's TLDs.
func (s *Service) TLDs() []string { return s.tlds }

func dayOf(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

func (s *Service) requireRegistrar() error {
	if s.registrar == nil {
		return models.Errorf(models.CodeUpstreamUnavailable, "No domain registrar is configured on this server.")
	}
	return nil
}
