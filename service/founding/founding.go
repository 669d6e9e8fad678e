package founding

import (
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/turns"
	"holdco/store"
)

// Limits are the founding gates' numbers (docs/founding.md).
type Limits struct {
	// BusinessLimit is how many companies (not archived) one account may
	// have; a new business beyond it is business_limit_reached.
	BusinessLimit int64
	// InterviewsPerDay is how many founding interviews one account may
	// open in 24 hours (rate_limited beyond).
	InterviewsPerDay int64
	// PlatformCompanies is how many companies (not archived) the platform
	// runs in all; beyond it no business starts (business_limit_reached,
	// scope platform).
	PlatformCompanies int64
	// DenyTerms are words an idea may not contain (case-insensitive,
	// whole words): such an idea is idea_not_allowed.
	DenyTerms []string
}

// Default limits.
const (
	DefaultBusinessLimit     = 10
	DefaultInterviewsPerDay  = 5
	DefaultPlatformCompanies = 100_000
)

func (l Limits) withDefaults() Limits {
	if l.BusinessLimit <= 0 {
		l.BusinessLimit = DefaultBusinessLimit
	}
	if l.InterviewsPerDay <= 0 {
		l.InterviewsPerDay = DefaultInterviewsPerDay
	}
	if l.PlatformCompanies <= 0 {
		l.PlatformCompanies = DefaultPlatformCompanies
	}
	return l
}

// Options are the founding use cases' dependencies besides the core.
type Options struct {
	// Temporal starts interviews and provisioning; nil: interviews answer
	// upstream_unavailable and provisioning is left to the sweeper.
	Temporal client.Client
	Limits   Limits
}

// Service is the founding use cases.
type Service struct {
	core      *service.Core
	store     *store.Store
	logger    *slog.Logger
	now       func() time.Time
	billing   *billing.Service
	companies *companies.Service
	turns     *turns.Service
	temporal  client.Client
	outbox    *companies.ProvisioningOutbox
	limits    Limits
}

// New builds the founding use cases on core: plans and credits by bill,
// handles by cos, first passes by ts.
func New(core *service.Core, bill *billing.Service, cos *companies.Service, ts *turns.Service, opts Options) *Service {
	s := &Service{core: core, store: core.Store(), logger: core.Logger(), now: core.Clock(), billing: bill, companies: cos, turns: ts,
		temporal: opts.Temporal, limits: opts.Limits.withDefaults()}
	if opts.Temporal != nil {
		s.outbox = &companies.ProvisioningOutbox{Store: s.store, Temporal: opts.Temporal, Logger: s.logger}
	}
	return s
}
