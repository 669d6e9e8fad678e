// Package usecases builds every domain's use cases on one core, for the
// processes that serve them all (the REST adapter, later the connector)
// and for tests. A process that needs one domain (an activity spending
// credits, an admin command) builds that domain's package alone.
package usecases

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"holdco/service"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/documents"
	"holdco/service/identity"
	"holdco/service/tasks"
	"holdco/store"
)

// Services are the use cases by domain, sharing one core.
type Services struct {
	Core      *service.Core
	Identity  *identity.Service
	Billing   *billing.Service
	Companies *companies.Service
	Documents *documents.Service
	Tasks     *tasks.Service
}

// Options are optional dependencies (tests inject a clock).
type Options struct {
	Clock func() time.Time
	// Payments is the payment provider; nil when payments are not
	// configured (payment links are then null with a reason).
	Payments billing.Payments
	// Temporal starts and signals workflows; nil disables provisioning.
	Temporal client.Client
	// DispatchGate checks that a task may be dispatched (the credit check
	// of the coming dispatcher); nil checks nothing.
	DispatchGate tasks.DispatchGate
}

// New builds the core (reading or creating the instance signing key) and
// every domain on it.
func New(ctx context.Context, cfg service.Config, st *store.Store, idp identity.IdentityProvider, logger *slog.Logger, opts Options) (*Services, error) {
	core, err := service.NewCore(ctx, cfg, st, logger, opts.Clock)
	if err != nil {
		return nil, err
	}
	s := &Services{Core: core}
	// A nil provider must stay a nil interface in each domain.
	var objects companies.PaymentObjects
	if opts.Payments != nil {
		objects = opts.Payments
	}
	s.Billing = billing.New(core, opts.Payments)
	s.Identity = identity.New(core, idp, s.Billing)
	s.Companies = companies.New(core, s.Billing, companies.Options{Payments: objects, Temporal: opts.Temporal})
	s.Documents = documents.New(core)
	s.Tasks = tasks.New(core, tasks.Options{Gate: opts.DispatchGate})
	return s, nil
}
