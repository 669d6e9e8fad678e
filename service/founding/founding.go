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
	// BusinessLimit (live companies per account) and PlatformCompanies
	// (live companies on the platform) are the business start's limits:
	// service/usecases hands them to service/companies (companies.Limits),
	// whose StartBusiness and CheckBusinessLimit apply them.
	BusinessLimit     int64
	PlatformCompanies int64
	// InterviewsPerDay is how many founding interviews one account may
	// open in 24 hours (rate_limited beyond).
	InterviewsPerDay int64
	// DenyTerms are words an idea may not contain (case-insensitive,
	// whole words): such an idea is idea_not_allowed.
	DenyTerms []string
}

// DefaultInterviewsPerDay is InterviewsPerDay's default.
const DefaultInterviewsPerDay = 5

func (l Limits) withDefaults() Limits {
	if l.InterviewsPerDay <= 0 {
		l.InterviewsPerDay = DefaultInterviewsPerDay
	}
	return l
}

// Options are the founding use cases' dependencies besides the core.
type Options struct {
	// Temporal starts interviews; nil: interviews answer
	// upstream_unavailable.
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
	limits    Limits
}

// New builds the founding use cases on core: plans by bill, business
// starts and handles by cos, first passes by ts.
func New(core *service.Core, bill *billing.Service, cos *companies.Service, ts *turns.Service, opts Options) *Service {
	s := &Service{core: core, store: core.Store(), logger: core.Logger(), now: core.Clock(), billing: bill, companies: cos, turns: ts,
		temporal: opts.Temporal, limits: opts.Limits.withDefaults()}
	return s
}
