package companies

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.temporal.io/sdk/client"
	"golang.org/x/text/unicode/norm"

	"holdco/models"
	"holdco/service"
	"holdco/service/billing"
	"holdco/store"
)

// Service is the companies use cases.
type Service struct {
	core        *service.Core
	store       *store.Store
	logger      *slog.Logger
	now         func() time.Time
	seal        service.Sealer
	companyKeys *service.Cache[string, *service.Principal]
	billing     *billing.Service
	payments    PaymentObjects
	sales       CompanySales
	temporal    client.Client
	outbox      *ProvisioningOutbox
	schedules   AgentSchedules
	analytics   AnalyticsHeadline
	limits      Limits
}

// PaymentObjects deactivates a company's live-mode payment objects before
// it is archived (billing.Payments; nil: payments are not configured, so
// there is nothing to deactivate).
type PaymentObjects interface {
	DeactivateCompany(ctx context.Context, companyID string) error
	Livemode() bool
}

// Options are the companies use cases' optional dependencies.
type Options struct {
	// Payments deactivates payment objects on archiving; nil when payments
	// are not configured.
	Payments PaymentObjects
	// Temporal starts and signals workflows; nil disables provisioning.
	Temporal client.Client
	// Sales stops a company's sales (its products and its customers'
	// subscriptions) before it is archived; nil when there are none to
	// stop.
	Sales CompanySales
	// Schedules pauses, resumes and deletes the company's scheduled agent
	// runs with its status; nil when there are none.
	Schedules AgentSchedules
	// Analytics reads the dashboard's analytics headline; nil leaves the
	// section empty.
	Analytics AnalyticsHeadline
	// Limits are the business start's limits (zero values: the defaults).
	Limits Limits
}

// AgentSchedules are the companies' schedules of agent runs
// (service/turns). A failed change is logged: a scheduled run checks the
// company's status itself before it starts anything.
type AgentSchedules interface {
	Pause(ctx context.Context, companyID string) error
	Resume(ctx context.Context, companyID, conglomerateID string) error
	Delete(ctx context.Context, companyID string) error
}

// CompanySales stops what a company sells on its conglomerate's connected
// account (service/sales): its products are deactivated and its
// customers' subscriptions cancelled.
type CompanySales interface {
	StopCompanySales(ctx context.Context, sc store.CompanyScope) error
}

// New builds the companies use cases on core; plans are decided by bill.
func New(core *service.Core, bill *billing.Service, opts Options) *Service {
	s := &Service{core: core, store: core.Store(), logger: core.Logger(), now: core.Clock(), seal: core.Sealer(),
		companyKeys: core.CompanyKeys(), billing: bill, payments: opts.Payments, temporal: opts.Temporal, sales: opts.Sales,
		schedules: opts.Schedules, analytics: opts.Analytics, limits: opts.Limits.withDefaults()}
	s.outbox = &ProvisioningOutbox{Store: s.store, Temporal: opts.Temporal, Logger: s.logger}
	return s
}

// Now is the service clock (UTC).
func (s *Service) Now() time.Time { return s.now() }

// CompanyInput is what a user sets on a company.
type CompanyInput struct {
	Name    string
	Handle  string // optional at creation: derived from the name
	Idea    string
	Mission string
	Paused  bool
	// IdempotencyKey (creation only, optional) makes a retry of the same
	// request return the company the first attempt created.
	IdempotencyKey string
}

// CreateCompany is REST's company creation (POST
// /conglomerates/{id}/companies): it starts a business in a conglomerate
// the caller belongs to with StartBusiness (the gates, the welcome
// credits, the handle, provisioning), with the name required and a handle
// the caller gives taken as chosen (a taken one is handle_taken with a
// free suggestion).
//
// With an IdempotencyKey, a retry of the same request within
// IdempotencyKeyTTL returns the company the first attempt created (before
// any gate); the same key with other fields is a conflict.
func (s *Service) CreateCompany(ctx context.Context, conglomerateID string, in CompanyInput) (models.Company, error) {
	v, err := s.core.AuthorizeConglomerate(ctx, conglomerateID)
	if err != nil {
		return models.Company{}, err
	}
	var key *models.CompanyCreateKey
	if in.IdempotencyKey != "" {
		if key, err = s.companyCreateKey(ctx, conglomerateID, in); err != nil {
			return models.Company{}, err
		}
		if c, replay, err := s.replayCreate(ctx, v.Scope, *key); replay || err != nil {
			return c, err
		}
	}
	started, err := s.StartBusiness(ctx, v, StartBusinessInput{Name: in.Name, Handle: in.Handle, HandleChosen: in.Handle != "",
		Idea: in.Idea, Mission: in.Mission, Paused: in.Paused, Key: key})
	if key != nil && errors.Is(err, store.ErrCreateKeyUsed) {
		// A concurrent request with the same key won: answer its company.
		if c, replay, rerr := s.replayCreate(ctx, v.Scope, *key); replay || rerr != nil {
			return c, rerr
		}
	}
	return started.Company, err
}

// IdempotencyKeyTTL is how long an Idempotency-Key of company creation is
// remembered.
const IdempotencyKeyTTL = 24 * time.Hour

// MaxIdempotencyKeyLen bounds an Idempotency-Key.
const MaxIdempotencyKeyLen = 255

// companyCreateKey checks an Idempotency-Key and builds its record: the key
// is scoped to the caller and the conglomerate and stored only as a hash;
// the fingerprint covers every field of the request.
func (s *Service) companyCreateKey(ctx context.Context, conglomerateID string, in CompanyInput) (*models.CompanyCreateKey, error) {
	p, _ := service.PrincipalFrom(ctx)
	if len(in.IdempotencyKey) > MaxIdempotencyKeyLen || strings.IndexFunc(in.IdempotencyKey, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return nil, models.Errorf(models.CodeInvalidArgument, "The Idempotency-Key header is 1 to %d visible ASCII characters.", MaxIdempotencyKeyLen).WithField("Idempotency-Key")
	}
	keyHash := sha256.Sum256([]byte(p.UserID + "\x00" + string(p.Credential) + "\x00" + p.CompanyID + "\x00" + conglomerateID + "\x00" + in.IdempotencyKey))
	fields, _ := json.Marshal([]any{in.Name, in.Handle, in.Idea, in.Mission, in.Paused})
	fingerprint := sha256.Sum256(fields)
	return &models.CompanyCreateKey{KeyHash: hex.EncodeToString(keyHash[:]), ConglomerateID: conglomerateID, UserID: p.UserID,
		Fingerprint: hex.EncodeToString(fingerprint[:]), CreatedAt: s.now(), ExpiresAt: s.now().Add(IdempotencyKeyTTL)}, nil
}

// replayCreate answers a create whose Idempotency-Key was seen: the same
// request gets the company it created (as it is now), other fields under
// the same key a conflict. replay is false when the key is new.
func (s *Service) replayCreate(ctx context.Context, cong store.ConglomerateScope, key models.CompanyCreateKey) (c models.Company, replay bool, err error) {
	seen, err := s.store.Companies().CompanyCreateKey(ctx, key.KeyHash, s.now())
	if errors.Is(err, models.ErrNotFound) {
		return models.Company{}, false, nil
	}
	if err != nil {
		return models.Company{}, false, err
	}
	if seen.Fingerprint != key.Fingerprint {
		return models.Company{}, true, models.Errorf(models.CodeConflict,
			"This Idempotency-Key was used for a different request; use a new key for a new company.").With("reason", "idempotency_key_reused")
	}
	_, c, err = s.store.CompanyInConglomerate(ctx, cong, seen.CompanyID)
	return c, true, err
}

// Slugify turns a name into a handle candidate: lower-case ASCII letters
// and digits joined by single hyphens, at most 64 characters. It lowers
// the case after the compatibility decomposition, which can make capitals
// (the modifier letter ᴶ is J).
func Slugify(name string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(norm.NFKD.String(name)) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		case unicode.Is(unicode.Mn, r): // accents split off by NFKD
		default:
			hyphen = true
		}
	}
	slug := b.String()
	if len(slug) > models.MaxHandleLen {
		slug = strings.TrimRight(slug[:models.MaxHandleLen], "-")
	}
	if slug == "" {
		slug = "company"
	}
	return slug
}

// SuggestHandle returns a free handle close to base: base-2, base-3, …
func (s *Service) SuggestHandle(ctx context.Context, base string) (string, error) {
	base = Slugify(base)
	for n := 2; ; n++ {
		suffix := "-" + strconv.Itoa(n)
		stem := base
		if len(stem)+len(suffix) > models.MaxHandleLen {
			stem = strings.TrimRight(stem[:models.MaxHandleLen-len(suffix)], "-")
		}
		candidate := stem + suffix
		taken, err := s.store.Companies().HandleTaken(ctx, candidate)
		if err != nil || !taken {
			return candidate, err
		}
	}
}

// ListCompanies lists a conglomerate's companies that are not archived.
func (s *Service) ListCompanies(ctx context.Context, conglomerateID string) ([]models.Company, error) {
	v, err := s.core.AuthorizeConglomerate(ctx, conglomerateID)
	if err != nil {
		return nil, err
	}
	return s.store.Companies().ListCompanies(ctx, v.Scope, false)
}

// CompanyOverview is a company of the account's list with its own balance
// (sales net of refunds and withdrawals, not the account's credits) and
// the question its agent waits to have answered ("" when none).
type CompanyOverview struct {
	models.Company
	Revenue      models.Revenue
	OpenQuestion string
}

// CompanyOverviews lists a conglomerate's companies that are not archived
// with their balances and open questions (what list_businesses shows):
// three queries however many there are.
func (s *Service) CompanyOverviews(ctx context.Context, conglomerateID string) ([]CompanyOverview, error) {
	v, err := s.core.AuthorizeConglomerate(ctx, conglomerateID)
	if err != nil {
		return nil, err
	}
	cs, err := s.store.Companies().ListCompanies(ctx, v.Scope, false)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	revenue, err := s.store.Sales().CompaniesRevenue(ctx, v.Scope, ids)
	if err != nil {
		return nil, err
	}
	questions, err := s.store.Companies().WaitingQuestions(ctx, v.Scope, ids)
	if err != nil {
		return nil, err
	}
	out := make([]CompanyOverview, len(cs))
	for i, c := range cs {
		out[i] = CompanyOverview{Company: c, Revenue: revenue[c.ID], OpenQuestion: questions[c.ID]}
	}
	return out, nil
}

// ArchivedCompany is an archived company with what it earned.
type ArchivedCompany struct {
	models.Company
	Revenue models.Revenue
}

// ListArchivedCompanies lists a conglomerate's archived companies with
// their lifetime earnings and balance (withdrawals stay open for them):
// two queries however many there are.
func (s *Service) ListArchivedCompanies(ctx context.Context, conglomerateID string) ([]ArchivedCompany, error) {
	v, err := s.core.AuthorizeConglomerate(ctx, conglomerateID)
	if err != nil {
		return nil, err
	}
	all, err := s.store.Companies().ListCompanies(ctx, v.Scope, true)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range all {
		if c.Status == models.CompanyArchived {
			ids = append(ids, c.ID)
		}
	}
	revenue, err := s.store.Sales().CompaniesRevenue(ctx, v.Scope, ids)
	if err != nil {
		return nil, err
	}
	archived := make([]ArchivedCompany, 0, len(ids))
	for _, c := range all {
		if c.Status == models.CompanyArchived {
			archived = append(archived, ArchivedCompany{Company: c, Revenue: revenue[c.ID]})
		}
	}
	return archived, nil
}

// GetCompany returns a company the caller may see.
func (s *Service) GetCompany(ctx context.Context, id string) (models.Company, error) {
	c, err := s.core.AuthorizeCompany(ctx, id, false)
	return c.Company, err
}

// CompanyUpdate is a partial update; nil fields stay.
type CompanyUpdate struct {
	Name, Idea, Mission *string
	Status              *models.CompanyStatus // active or paused; archiving is DELETE
	// AgentChat switches whether the company's agent takes messages.
	AgentChat *bool
}

// UpdateCompany changes a company's fields.
func (s *Service) UpdateCompany(ctx context.Context, id string, u CompanyUpdate) (models.Company, error) {
	ac, err := s.core.AuthorizeCompany(ctx, id, false)
	if err != nil {
		return models.Company{}, err
	}
	c := ac.Company
	if u.Name != nil {
		if strings.TrimSpace(*u.Name) == "" {
			return c, models.Errorf(models.CodeInvalidArgument, "The name must not be blank.").WithField("name")
		}
		c.Name = strings.TrimSpace(*u.Name)
	}
	if u.Idea != nil {
		c.Idea = *u.Idea
	}
	if u.Mission != nil {
		c.Mission = *u.Mission
	}
	if u.Status != nil {
		if *u.Status != models.CompanyActive && *u.Status != models.CompanyPaused {
			return c, models.Errorf(models.CodeInvalidArgument, "status must be active or paused; archive a company with DELETE.").WithField("status")
		}
		c.Status = *u.Status
	}
	if u.AgentChat != nil {
		c.ChatDisabled = !*u.AgentChat
	}
	if err := s.store.Companies().UpdateCompanyFields(ctx, ac.Scope, c); err != nil {
		return c, err
	}
	if u.Status != nil && *u.Status != ac.Status && s.schedules != nil {
		var err error
		if *u.Status == models.CompanyPaused {
			err = s.schedules.Pause(context.WithoutCancel(ctx), c.ID)
		} else {
			err = s.schedules.Resume(context.WithoutCancel(ctx), c.ID, c.ConglomerateID)
		}
		if err != nil {
			s.logger.WarnContext(ctx, "company schedule not changed; its runs check the status", "company", c.ID, "error", err)
		}
	}
	return s.store.Companies().GetCompany(ctx, ac.Scope)
}

// ArchiveCompany archives a company, irreversibly; repeating it is a
// no-op. When live payment objects cannot be deactivated nothing is
// archived and the caller should retry (upstream_unavailable, 502).
func (s *Service) ArchiveCompany(ctx context.Context, id string) error {
	c, err := s.core.AuthorizeCompany(ctx, id, true)
	if err != nil {
		return err
	}
	if p, _ := service.PrincipalFrom(ctx); !p.IsUser() {
		return models.Errorf(models.CodeForbidden, "Only a person can archive a company.")
	}
	if c.Status == models.CompanyArchived {
		return nil
	}
	if s.payments != nil {
		if err := s.payments.DeactivateCompany(ctx, c.ID); err != nil && !s.payments.Livemode() {
			// Test-mode objects take no real payments: archiving goes on.
			s.logger.WarnContext(ctx, "archive: test-mode payment objects not deactivated", "company", c.ID, "error", err)
		} else if err != nil {
			return models.Errorf(models.CodeUpstreamUnavailable, "The payment provider could not deactivate this company's live payment objects; nothing was archived. Retry shortly.").Wrap(err)
		}
	}
	if s.sales != nil {
		if err := s.sales.StopCompanySales(ctx, c.Scope); err != nil {
			return err
		}
	}
	_, err = s.store.Companies().ArchiveCompany(ctx, c.Scope, s.now())
	s.companyKeys.DeleteWhere(func(p *service.Principal) bool { return p != nil && p.CompanyID == c.ID })
	if err == nil && s.schedules != nil {
		if derr := s.schedules.Delete(context.WithoutCancel(ctx), c.ID); derr != nil {
			s.logger.WarnContext(ctx, "archive: company schedule not deleted; its runs skip archived companies", "company", c.ID, "error", derr)
		}
	}
	return err
}
