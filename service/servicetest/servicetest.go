// Package servicetest is the shared environment of the use-case tests: a
// store, a fake identity provider, an adjustable clock and every domain's
// use cases on one core.
package servicetest

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/ads"
	"holdco/providers/blob/local"
	"holdco/providers/email"
	"holdco/providers/registrar"
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
	"holdco/service/usecases"
	"holdco/store"
	"holdco/testenv"
)

// Clock is an adjustable test clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Services gives tests every use case on one value (a method name that two
// domains share would be ambiguous here, so none may).
type Services struct {
	*IdentityUseCases
	*BillingUseCases
	*CompaniesUseCases
	// Domains whose method names (List, Get, Delete) would be ambiguous
	// embedded are named fields.
	Documents *documents.Service
	Files     *files.Service
	// Mail is a field, not embedded: its List, Get and Send would clash
	// with other domains' names.
	Mail *mail.Service
	*SalesUseCases
	// PaymentEventsUseCases is the payment webhook (HandlePaymentWebhook).
	*PaymentEventsUseCases
	Tasks *tasks.Service
	Turns *turns.Service
	// Prospects are the companies' leads.
	Prospects *prospects.Service
	// Traces reads runs' traces; TraceWriter writes them.
	Traces      *traces.Service
	TraceWriter *traces.Writer
	// Tools is the agents' tool catalog.
	Tools *agenttools.Catalog
	// OAuth is the authorization server's use cases.
	OAuth *oauth.Service
	// Founding is the founding interview and create_business.
	Founding *founding.Service
	// Analytics is the companies' web analytics.
	Analytics *analytics.Service
	// Growth is domains and ads.
	Growth *growth.Service
}

// The domains' use cases, named apart so that Services can embed them all.
type (
	IdentityUseCases      = identity.Service
	BillingUseCases       = billing.Service
	CompaniesUseCases     = companies.Service
	SalesUseCases         = sales.Service
	PaymentEventsUseCases = paymentevents.Service
)

// Env is one test's world.
type Env struct {
	Svc   Services
	IdP   *testenv.IdP
	Clock *Clock
	Store *store.Store
	// SQL is a plain connection to the same database and Placeholder its
	// style, for seeding many rows (testenv.BulkInsert).
	SQL         *sql.DB
	Placeholder string
	// Mailbox is the local mail provider the services send through and
	// fetch bodies from (unless the options name others).
	Mailbox *email.Local
}

// New builds an environment on a fresh store.
func New(t testing.TB) *Env { return NewWith(t, usecases.Options{}) }

// NewWith is New with optional dependencies (the clock is always the
// environment's).
func NewWith(t testing.TB, opts usecases.Options) *Env {
	t.Helper()
	st, db, style := testenv.NewStoreAndSQL(t)
	e := &Env{Store: st, SQL: db, Placeholder: style, IdP: testenv.NewIdP(), Clock: &Clock{now: time.Now().UTC().Truncate(time.Second)}}
	box, err := email.NewLocal(t.TempDir())
	require.NoError(t, err)
	e.Mailbox = box
	e.Svc = e.NewServices(t, opts)
	return e
}

// Config is the environment's service settings.
var Config = service.Config{PublicURL: "http://holdco.test", FrontendURL: "http://app.test"}

// MailConfig is the environment's inbox settings.
var MailConfig = mail.Config{Domain: "mail.test", InboundSecret: []byte("inbound-secret-of-the-tests-32-bytes!")}

// NewServices builds another set of use cases on the environment's store
// and clock.
func (e *Env) NewServices(t testing.TB, opts usecases.Options) Services {
	t.Helper()
	opts.Clock = e.Clock.Now
	if opts.Blobs == nil {
		blobs, err := local.New(t.TempDir(), []byte("servicetest-blob-signing-key-0123456789"), "http://sites.test")
		require.NoError(t, err)
		opts.Blobs = blobs
	}
	if opts.Mail.Domain == "" {
		opts.Mail = MailConfig
	}
	if opts.MailSender == nil && e.Mailbox != nil {
		opts.MailSender = e.Mailbox
	}
	if opts.MailBodies == nil && e.Mailbox != nil {
		opts.MailBodies = e.Mailbox
	}
	if opts.Registrar == nil {
		reg, err := registrar.NewLocal(t.TempDir(), 0, e.Clock.Now)
		require.NoError(t, err)
		opts.Registrar = reg
	}
	if opts.Ads == nil {
		sim, err := ads.NewSimulator(t.TempDir(), e.Clock.Now)
		require.NoError(t, err)
		opts.Ads = sim
	}
	s, err := usecases.New(context.Background(), Config, e.Store, e.IdP, slog.New(slog.NewTextHandler(io.Discard, nil)), opts)
	require.NoError(t, err)
	// Before the store closes (cleanups run last first): capture's writer
	// and folder finish what they hold, as at a process's shutdown.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Analytics.StopWriter(ctx)
		s.Turns.Close(ctx)
	})
	return Services{IdentityUseCases: s.Identity, BillingUseCases: s.Billing, CompaniesUseCases: s.Companies,
		Documents: s.Documents, Files: s.Files, Mail: s.Mail, SalesUseCases: s.Sales, PaymentEventsUseCases: s.PaymentEvents, Tasks: s.Tasks, Turns: s.Turns, Prospects: s.Prospects, Tools: s.Tools, Traces: s.Traces, TraceWriter: s.TraceWriter, OAuth: s.OAuth,
		Founding: s.Founding, Analytics: s.Analytics, Growth: s.Growth}
}

// Replica is a second set of use cases on the same database (another
// process in a scaled-out deployment): its caches are its own.
func (e *Env) Replica(t testing.TB) Services { return e.NewServices(t, usecases.Options{}) }

// StateOf is the state parameter of an identity provider URL.
func StateOf(t testing.TB, authURL string) string { return testenv.StateOf(t, authURL) }

// WebLogin signs email in through the browser flow and returns the web
// session JWT the frontend gets for the sign-in's login code.
func (e *Env) WebLogin(t testing.TB, email, subject string) string {
	t.Helper()
	ctx := context.Background()
	start, err := e.Svc.BeginWebLogin(ctx, "/dashboard", "", "")
	require.NoError(t, err)
	res, err := e.Svc.CompleteWebLogin(ctx, e.IdP.Approve(start.State, email, subject), start.State, start.Binding)
	require.NoError(t, err)
	u, err := url.Parse(res.RedirectURL)
	require.NoError(t, err)
	ws, err := e.Svc.ExchangeLoginCode(ctx, u.Query().Get("login_code"), res.Cookie)
	require.NoError(t, err)
	return ws.Token
}

// As authenticates a bearer and returns a context acting as it.
func (e *Env) As(t testing.TB, bearer string) context.Context {
	t.Helper()
	p, err := e.Svc.Authenticate(context.Background(), bearer)
	require.NoError(t, err)
	return service.WithPrincipal(context.Background(), p)
}

// User signs a user in and returns a context acting as them with their
// conglomerate id.
func (e *Env) User(t testing.TB, email string) (context.Context, string) {
	t.Helper()
	ctx := e.As(t, e.WebLogin(t, email, strings.Split(email, "@")[0]))
	congs, err := e.Svc.MyConglomerates(ctx)
	require.NoError(t, err)
	return ctx, congs[0].ID
}

// SeedCompany stores a company in the account of the user acting in as
// (authorized like any request) as a business start stores it (with its
// provisioning intent; a handle derived from the name when in has none),
// but without the start's gates and without the welcome credits: for tests
// whose balances and counts are their own. Tests of the business start
// itself call CreateCompany or companies.StartBusiness.
func (e *Env) SeedCompany(t testing.TB, as context.Context, in companies.CompanyInput) models.Company {
	t.Helper()
	p, ok := service.PrincipalFrom(as)
	require.True(t, ok, "SeedCompany needs a user's context")
	v, err := e.Svc.Files.Core().AuthorizeConglomerate(as, p.ConglomerateID)
	require.NoError(t, err)
	c := models.Company{Name: in.Name, Handle: in.Handle, Idea: in.Idea, Mission: in.Mission, Status: models.CompanyActive}
	if c.Handle == "" {
		c.Handle = companies.Slugify(in.Name)
	}
	if in.Paused {
		c.Status = models.CompanyPaused
	}
	created, _, err := e.Store.Companies().CreateCompanyToProvision(context.Background(), v.Scope, c, true, nil)
	require.NoError(t, err)
	return created
}

// FreeDomain is the first name growth's search offers for label that is
// available and not premium (the tests' local registrar takes some names
// by their hash): a domain a test can buy.
func FreeDomain(t testing.TB, as context.Context, g *growth.Service, companyID, label string) string {
	t.Helper()
	rs, err := g.Search(as, companyID, label)
	require.NoError(t, err)
	for _, r := range rs {
		if r.Available && !r.Premium {
			return r.Domain
		}
	}
	t.Fatalf("no free domain for %s", label)
	return ""
}

// Rebind is q, written with ? placeholders, in the placeholder style of
// the environment's database, for e.SQL: $1, $2… on Postgres.
func (e *Env) Rebind(q string) string {
	if e.Placeholder == "?" {
		return q
	}
	var out strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			out.WriteString("$" + strconv.Itoa(n))
			continue
		}
		out.WriteRune(r)
	}
	return out.String()
}
