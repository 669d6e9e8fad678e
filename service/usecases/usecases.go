// Package usecases builds the use cases a process serves on one core:
// each role of app/ names the parts it serves (Build), so an
// authorization server builds sign-in alone and a worker no sign-in; a
// process of every role, and the tests, build All (New). A command that
// needs one domain (an admin command granting credits) builds that
// domain's package alone.
package usecases

import (
	"context"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"

	"holdco/service"
	"holdco/service/agenttools"
	"holdco/service/analytics"
	"holdco/service/billing"
	"holdco/service/companies"
	"holdco/service/documents"
	"holdco/service/files"
	"holdco/service/founding"
	"holdco/service/growth"
	"holdco/service/identity"
	"holdco/service/mail"
	"holdco/service/oauth"
	"holdco/service/paymentevents"
	"holdco/service/prospects"
	"holdco/service/sales"
	"holdco/service/tasks"
	"holdco/service/traces"
	"holdco/service/turns"
	"holdco/service/webtools"
	"holdco/store"
)

// Parts are groups of use cases a process builds.
type Parts uint8

const (
	// SignIn is identity (authentication, sign-in flows, tokens, the
	// account) and the OAuth authorization server.
	SignIn Parts = 1 << iota
	// Domains is billing and every business domain on it: companies,
	// founding, turns and their schedules, tasks, documents, files, mail,
	// sales, prospects, analytics, growth, the web tools, traces, the
	// agents' tool catalog and the payment events' router.
	Domains
	// All is both: a process of every role, the operator's commands that
	// serve admin endpoints, and the tests.
	All = SignIn | Domains
)

// Services are the use cases by domain, sharing one core. A domain of a
// part the process did not build is nil.
type Services struct {
	// Parts are the parts built.
	Parts     Parts
	Core      *service.Core
	Identity  *identity.Service
	Billing   *billing.Service
	Companies *companies.Service
	Mail      *mail.Service
	Documents *documents.Service
	Files     *files.Service
	Sales     *sales.Service
	Tasks     *tasks.Service
	// Turns are the agent turns (messages, runs); Schedules the companies'
	// scheduled runs.
	Turns     *turns.Service
	Schedules *turns.Schedules
	// Traces reads the agent runs' traces for the operator.
	Traces *traces.Service
	// TraceWriter writes the agent runs' traces (the turn activities);
	// without a blob store it answers upstream_unavailable.
	TraceWriter *traces.Writer
	// Prospects are the companies' leads.
	Prospects *prospects.Service
	// Analytics is the companies' web analytics (capture, loader, reports).
	Analytics *analytics.Service
	// Tools is the agents' tool catalog over the domains above (the turn
	// workflow and the connector call it).
	Tools *agenttools.Catalog
	// OAuth is the authorization server (oauth/) and the connector's token
	// introspection.
	OAuth *oauth.Service
	// Founding is the founding interview, create_business and the first
	// pass (docs/founding.md).
	Founding *founding.Service
	// Growth is domains and ads.
	Growth *growth.Service
	// Web is the paid web acts: web research and image generation.
	Web *webtools.Service
	// PaymentEvents applies the payment provider's webhook events to
	// billing and growth.
	PaymentEvents *paymentevents.Service
}

// Options are optional dependencies (tests inject a clock).
type Options struct {
	Clock func() time.Time
	// Payments is the payment provider; nil when payments are not
	// configured (payment links are then null with a reason).
	Payments billing.Payments
	// Sales is the payment provider of the companies' own sales (on the
	// connected accounts); nil when payments are not configured or the
	// Connect webhook endpoint has no signing secret.
	Sales sales.Payments
	// Temporal starts and signals workflows; nil disables provisioning.
	Temporal client.Client
	// Blobs keeps files' bytes; nil answers the file use cases with
	// upstream_unavailable.
	Blobs files.BlobStore
	// FileLimits are the per-file limit, the per-company quota and the
	// download links' lifetime (zero values: the defaults).
	FileLimits files.Limits
	// Mail is the inbox settings; MailSender and MailBodies the provider
	// (nil sender: sending answers upstream_unavailable; nil bodies: the
	// backfill answers conflict).
	Mail       mail.Config
	MailSender mail.Sender
	MailBodies mail.BodyFetcher
	// Repository is the companies' code repositories for the agents' tools
	// (the worker role has them); nil answers not_configured.
	Repository agenttools.Repository
	// Database is the companies' own databases for the agents' tools.
	Database agenttools.Database
	// Research and Images are the providers of the agents' web_research
	// and generate_image (nil: those tools answer not_configured).
	Research webtools.Searcher
	Images   webtools.ImageMaker
	// AgentRunEvery is the period of companies' scheduled agent runs (0:
	// none).
	AgentRunEvery time.Duration
	// TaskRuns starts the runs of dispatched tasks; nil: the turn use
	// cases (the real runs, with their credit gate). Tests of the task
	// lifecycle alone put a recorder here.
	TaskRuns tasks.Runs
	// OAuth is the authorization server's settings (issuer, connector URL,
	// pre-registered clients).
	OAuth oauth.Config
	// FoundingLimits are the founding gates' numbers (zero values: the
	// defaults); the business limit and the platform's cap go to the
	// companies' StartBusiness, the one business start.
	FoundingLimits founding.Limits
	// Analytics sizes the capture queue and its writer's batches.
	Analytics analytics.Options
	// Registrar and Ads are the growth providers (nil: domain search and
	// ads answer upstream_unavailable); TLDs the suggestion grid's.
	Registrar growth.Registrar
	Ads       growth.Ads
	TLDs      []string
}

// New builds the core (reading or creating the instance signing key) and
// every domain on it: Build of All.
func New(ctx context.Context, cfg service.Config, st *store.Store, idp identity.IdentityProvider, logger *slog.Logger, opts Options) (*Services, error) {
	return Build(ctx, All, cfg, st, idp, logger, opts)
}

// Build builds the core and the parts named, each with what it calls
// passed at construction; nothing is installed in a domain afterwards.
// idp is SignIn's (nil without it).
func Build(ctx context.Context, parts Parts, cfg service.Config, st *store.Store, idp identity.IdentityProvider, logger *slog.Logger, opts Options) (*Services, error) {
	core, err := service.NewCore(ctx, cfg, st, logger, opts.Clock)
	if err != nil {
		return nil, err
	}
	s := &Services{Parts: parts, Core: core}
	if parts&Domains != 0 {
		s.buildDomains(core, opts)
	}
	if parts&SignIn != 0 {
		// Deleting an account stops its payments and its companies'
		// sales: with the domains built, identity reaches them.
		var payments identity.AccountPayments
		var sales identity.CompanySales
		if s.Billing != nil {
			payments, sales = s.Billing, s.Sales
		}
		s.Identity = identity.New(core, idp, payments, sales)
		if s.OAuth, err = oauth.New(core, s.Identity, opts.OAuth); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// buildDomains builds billing and every domain on it.
func (s *Services) buildDomains(core *service.Core, opts Options) {
	// A nil provider must stay a nil interface in each domain.
	var objects companies.PaymentObjects
	if opts.Payments != nil {
		objects = opts.Payments
	}
	s.Billing = billing.New(core, billing.Options{Payments: opts.Payments, Temporal: opts.Temporal})
	s.Sales = sales.New(core, s.Billing, opts.Sales)
	s.Analytics = analytics.New(core, opts.Analytics)
	s.Schedules = &turns.Schedules{Temporal: opts.Temporal, Every: opts.AgentRunEvery}
	s.Companies = companies.New(core, s.Billing, companies.Options{Payments: objects, Temporal: opts.Temporal, Sales: s.Sales, Schedules: s.Schedules,
		Analytics: s.Analytics, Limits: companies.Limits{BusinessLimit: opts.FoundingLimits.BusinessLimit, PlatformCompanies: opts.FoundingLimits.PlatformCompanies}})
	s.Mail = mail.New(core, s.Billing, opts.Mail, opts.MailSender, opts.MailBodies)
	s.Documents = documents.New(core)
	s.Files = files.New(core, opts.Blobs, opts.FileLimits)
	s.Turns = turns.New(core, s.Billing, s.Files, opts.Temporal)
	var runs tasks.Runs = s.Turns
	if opts.TaskRuns != nil {
		runs = opts.TaskRuns
	}
	s.Tasks = tasks.New(core, tasks.Options{Runs: runs})
	s.Traces = traces.New(opts.Blobs)
	s.TraceWriter = traces.NewWriter(opts.Blobs)
	s.Prospects = prospects.New(core)
	s.Growth = growth.New(core, s.Billing, growth.Options{Registrar: opts.Registrar, Ads: opts.Ads, Temporal: opts.Temporal, TLDs: opts.TLDs})
	s.PaymentEvents = paymentevents.New(core, s.Billing, s.Growth)
	s.Founding = founding.New(core, s.Billing, s.Companies, s.Turns, founding.Options{Temporal: opts.Temporal, Limits: opts.FoundingLimits})
	s.Web = webtools.New(core, s.Billing, s.Files, opts.Research, opts.Images)
	s.Tools = agenttools.New(agenttools.Services{Documents: s.Documents, Tasks: s.Tasks, Files: s.Files, Mail: s.Mail,
		Sales: s.Sales, Companies: s.Companies, Prospects: s.Prospects, Repository: opts.Repository,
		Database: opts.Database, Analytics: s.Analytics, Growth: s.Growth, Web: s.Web})
}
