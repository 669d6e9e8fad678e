package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"holdco/models"
)

// Tenant scopes. A method that reads or writes one tenant's rows takes a
// scope, not a bare id; a scope's fields are unexported, so only the
// producers in this file make one: the authorization step (AuthorizeCompany,
// AuthorizeConglomerate, AuthorizeAdmin) for requests, and the System*
// producers for the worker, which acts as the system rather than for a
// tenant. A use case that forgets the check has no scope to pass, so it
// does not compile. A zero scope is refused (ErrNoScope) before any query.

// ErrForbidden is the authorization step's answer when the row exists but
// the actor may not reach it; service/ turns it into a 403.
var ErrForbidden = errors.New("store: forbidden")

// ErrNoScope is the answer of a scoped method given a zero scope: a
// programming error, never a query without a tenant filter.
var ErrNoScope = errors.New("store: no tenant scope (only the authorization step makes one)")

// Actor is who asks the authorization step: a user, a company (by its
// company key) or the operator. Exactly one field is set.
type Actor struct {
	UserID    string
	CompanyID string
	Admin     bool
	// MemberOf is a conglomerate the user is known to be a member of: the
	// one their credential resolved into, checked when it was resolved
	// (service.Principal.Account; at most the credential cache's lifetime
	// ago). The membership read is skipped for it; only account deletion
	// ends a membership, and it drops the cached credentials.
	MemberOf string
}

// member reports whether the actor's user belongs to the conglomerate,
// reading the membership unless MemberOf says so.
func (s *Store) member(ctx context.Context, actor Actor, conglomerateID string) (bool, error) {
	if actor.MemberOf != "" && actor.MemberOf == conglomerateID {
		return true, nil
	}
	return s.Identity().IsMember(ctx, conglomerateID, actor.UserID)
}

// CompanyScope is an authorized company: its id and its conglomerate's.
type CompanyScope struct{ id, conglomerateID string }

// ID is the company's id.
func (c CompanyScope) ID() string { return c.id }

// ConglomerateID is the id of the conglomerate that owns the company.
func (c CompanyScope) ConglomerateID() string { return c.conglomerateID }

// Conglomerate is the scope of the company's conglomerate, for what the
// company's own acts do to the account: a billable act of the company
// (an email it sends, an agent's paid tool call) charges the shared
// balance. Whoever may act for the company may spend for that act.
func (c CompanyScope) Conglomerate() ConglomerateScope {
	return ConglomerateScope{id: c.conglomerateID}
}

func (c CompanyScope) check(op string) error {
	if c.id == "" {
		return errors.Join(errors.New("store: "+op), ErrNoScope)
	}
	return nil
}

// ConglomerateScope is an authorized conglomerate (the tenant).
type ConglomerateScope struct{ id string }

// ID is the conglomerate's id.
func (c ConglomerateScope) ID() string { return c.id }

func (c ConglomerateScope) check(op string) error {
	if c.id == "" {
		return errors.Join(errors.New("store: "+op), ErrNoScope)
	}
	return nil
}

// AdminScope is the operator's authorization, for admin-only paths.
type AdminScope struct{ ok bool }

func (a AdminScope) check(op string) error {
	if !a.ok {
		return errors.Join(errors.New("store: "+op), ErrNoScope)
	}
	return nil
}

// AuthorizeCompany applies the ownership rule to a company and returns its
// scope: a missing company (or an archived one, unless allowArchived) is
// models.ErrNotFound; a company the actor may not reach is ErrForbidden (a
// company key reaches only its own company, a user only the companies of
// their conglomerates, the operator none).
func (s *Store) AuthorizeCompany(ctx context.Context, actor Actor, companyID string, allowArchived bool) (CompanyScope, models.Company, error) {
	c, err := s.getCompany(ctx, companyID)
	if err != nil {
		return CompanyScope{}, models.Company{}, err
	}
	scope, err := authorizeCompanyRow(ctx, s, actor, c, allowArchived)
	if err != nil {
		return CompanyScope{}, models.Company{}, err
	}
	return scope, c, nil
}

// authorizeCompanyRow applies AuthorizeCompany's ownership rule to the
// company's row, read by the caller (reading the membership when the
// actor's credential did not prove it).
func authorizeCompanyRow(ctx context.Context, s *Store, actor Actor, c models.Company, allowArchived bool) (CompanyScope, error) {
	if c.Status == models.CompanyArchived && !allowArchived {
		return CompanyScope{}, wrap("authorize company", models.ErrNotFound)
	}
	switch {
	case actor.CompanyID != "":
		if actor.CompanyID != c.ID {
			return CompanyScope{}, ErrForbidden
		}
	case actor.UserID != "" && c.ConglomerateID != "":
		member, err := s.member(ctx, actor, c.ConglomerateID)
		if err != nil {
			return CompanyScope{}, err
		}
		if !member {
			return CompanyScope{}, ErrForbidden
		}
	default:
		return CompanyScope{}, ErrForbidden
	}
	return CompanyScope{id: c.ID, conglomerateID: c.ConglomerateID}, nil
}

// AuthorizeConglomerate applies the ownership rule to a conglomerate: a
// missing one is models.ErrNotFound; one the actor is not a member of (and
// any actor but a user) is ErrForbidden.
func (s *Store) AuthorizeConglomerate(ctx context.Context, actor Actor, conglomerateID string) (ConglomerateScope, models.Conglomerate, error) {
	c, err := s.Identity().GetConglomerate(ctx, conglomerateID)
	if err != nil {
		return ConglomerateScope{}, models.Conglomerate{}, err
	}
	if actor.UserID == "" {
		return ConglomerateScope{}, models.Conglomerate{}, ErrForbidden
	}
	member, err := s.member(ctx, actor, conglomerateID)
	if err != nil {
		return ConglomerateScope{}, models.Conglomerate{}, err
	}
	if !member {
		return ConglomerateScope{}, models.Conglomerate{}, ErrForbidden
	}
	return ConglomerateScope{id: c.ID}, c, nil
}

// AuthorizeConglomerateCredits is AuthorizeConglomerate that reads the
// account's credit state (the balance, the spend of the UTC day starting
// at dayStart) in the same statement as the conglomerate's row, fresh
// from the database: one read instead of two for the answers that show
// both (get_credits, the billing page). The ownership rule is the same.
func (s *Store) AuthorizeConglomerateCredits(ctx context.Context, actor Actor, conglomerateID string, dayStart time.Time) (ConglomerateScope, models.Conglomerate, CreditOutcome, error) {
	var (
		c                   models.Conglomerate
		balance, spentToday *int64
		spentDay            *time.Time
	)
	rows, err := rows(ctx, s.db, conglomerateCreditsSQL, conglomerateID)
	if err != nil {
		return ConglomerateScope{}, models.Conglomerate{}, CreditOutcome{}, wrap("get conglomerate", err)
	}
	defer func() { _ = rows.Close() }()
	if !rows.Next() {
		err := rows.Err()
		if err == nil {
			err = models.ErrNotFound
		}
		return ConglomerateScope{}, models.Conglomerate{}, CreditOutcome{}, wrap("get conglomerate", err)
	}
	if err := rows.Scan(append(conglomerateDest(&c), &balance, &spentDay, &spentToday)...); err != nil {
		return ConglomerateScope{}, models.Conglomerate{}, CreditOutcome{}, wrap("get conglomerate", err)
	}
	if err := rows.Close(); err != nil {
		return ConglomerateScope{}, models.Conglomerate{}, CreditOutcome{}, wrap("get conglomerate", err)
	}
	if actor.UserID == "" {
		return ConglomerateScope{}, models.Conglomerate{}, CreditOutcome{}, ErrForbidden
	}
	member, err := s.member(ctx, actor, conglomerateID)
	if err != nil {
		return ConglomerateScope{}, models.Conglomerate{}, CreditOutcome{}, err
	}
	if !member {
		return ConglomerateScope{}, models.Conglomerate{}, CreditOutcome{}, ErrForbidden
	}
	var credits CreditOutcome
	if balance != nil {
		acct := models.CreditAccount{Balance: *balance}
		if spentDay != nil && spentToday != nil {
			acct.SpentDay, acct.SpentToday = *spentDay, *spentToday
		}
		credits = CreditOutcome{Balance: acct.Balance, SpentToday: spentOn(acct, dayStart)}
	}
	return ConglomerateScope{id: c.ID}, c, credits, nil
}

// conglomerateColumns are the conglomerates table's columns in the order
// of conglomerateDest (a test checks them against the model's, so a new
// column cannot be missed).
var conglomerateColumns = []string{"id", "name", "owner_user_id", "trial_started_at", "daily_credit_cap",
	"plan", "plan_status", "plan_renews_at", "customer_id", "subscription_id", "blocked_at", "blocked_reason",
	"auto_top_up_enabled", "auto_top_up_threshold", "auto_top_up_credits", "connect_account_id",
	"connect_charges_enabled", "connect_payouts_enabled", "connect_details_submitted", "connect_requirements",
	"created_at", "updated_at"}

// conglomerateDest are c's fields as Scan's destinations, in
// conglomerateColumns's order: the row is scanned with database/sql
// directly, without GORM's reflection per column.
func conglomerateDest(c *models.Conglomerate) []any {
	b := &c.Billing
	return []any{&c.ID, &c.Name, &c.OwnerUserID, &c.TrialStartedAt, &c.DailyCreditCap,
		&b.Plan, &b.PlanStatus, &b.PlanRenewsAt, &b.CustomerID, &b.SubscriptionID, &b.BlockedAt, &b.BlockedReason,
		&b.AutoTopUpEnabled, &b.AutoTopUpThreshold, &b.AutoTopUpCredits, &b.ConnectAccountID,
		&b.ConnectChargesEnabled, &b.ConnectPayoutsEnabled, &b.ConnectDetailsSubmitted, &b.ConnectRequirements,
		&c.CreatedAt, &c.UpdatedAt}
}

// conglomerateCreditsSQL is AuthorizeConglomerateCredits's statement:
// the conglomerate's row and its credit account's state.
var conglomerateCreditsSQL = newFixedSQL("SELECT g." + strings.Join(conglomerateColumns, ", g.") +
	", a.balance, a.spent_day, a.spent_today FROM conglomerates g LEFT JOIN credit_accounts a ON a.conglomerate_id = g.id WHERE g.id = ?")

// AuthorizeAdmin returns the operator's scope, or ErrForbidden for any
// other actor.
func AuthorizeAdmin(actor Actor) (AdminScope, error) {
	if !actor.Admin || actor.UserID != "" || actor.CompanyID != "" {
		return AdminScope{}, ErrForbidden
	}
	return AdminScope{ok: true}, nil
}

// SystemCompanyScope is the scope of a company for the worker only (its
// activities, the provisioning sweeper, site configuration, the operator's
// command line), which acts as the system, not for a tenant. A missing
// company is models.ErrNotFound; archived ones are included. The REST
// adapter and the use cases never call it (a test in internal/layering
// checks): they get scopes from the authorization step.
func (s *Store) SystemCompanyScope(ctx context.Context, companyID string) (CompanyScope, error) {
	c, err := s.getCompany(ctx, companyID)
	if err != nil {
		return CompanyScope{}, err
	}
	return CompanyScope{id: c.ID, conglomerateID: c.ConglomerateID}, nil
}

// SystemConglomerateScope is the scope of a conglomerate for the system:
// the worker and the payment provider's webhooks, which act for no user.
// It does not check that the conglomerate exists (the scoped method then
// finds no row). The REST adapter and the request use cases never call it.
func (s *Store) SystemConglomerateScope(conglomerateID string) ConglomerateScope {
	return ConglomerateScope{id: conglomerateID}
}

// SystemAdminScope is the operator's scope for the command line run on
// the server (holdco admin), which has no credential to authorize.
func (s *Store) SystemAdminScope() AdminScope { return AdminScope{ok: true} }

// AdminCompany reads any company for the operator, archived or not, with
// its scope; a missing company is models.ErrNotFound.
func (s *Store) AdminCompany(ctx context.Context, admin AdminScope, companyID string) (CompanyScope, models.Company, error) {
	if err := admin.check("admin company"); err != nil {
		return CompanyScope{}, models.Company{}, err
	}
	c, err := s.getCompany(ctx, companyID)
	if err != nil {
		return CompanyScope{}, models.Company{}, err
	}
	return CompanyScope{id: c.ID, conglomerateID: c.ConglomerateID}, c, nil
}

// CompanyScope is the scope of a company the operator already holds (from
// ListLiveCompanies, say): the operator reaches every company. A zero
// AdminScope gives a zero CompanyScope.
func (a AdminScope) CompanyScope(c models.Company) CompanyScope {
	if !a.ok {
		return CompanyScope{}
	}
	return CompanyScope{id: c.ID, conglomerateID: c.ConglomerateID}
}

// CompanyInConglomerate reads a company of the scope's conglomerate
// (archived or not); one of another conglomerate is models.ErrNotFound.
func (s *Store) CompanyInConglomerate(ctx context.Context, cong ConglomerateScope, companyID string) (CompanyScope, models.Company, error) {
	if err := cong.check("company in conglomerate"); err != nil {
		return CompanyScope{}, models.Company{}, err
	}
	var c models.Company
	if err := s.db.WithContext(ctx).Where("id = ? AND conglomerate_id = ?", companyID, cong.id).Take(&c).Error; err != nil {
		return CompanyScope{}, models.Company{}, wrap("company in conglomerate", err)
	}
	return CompanyScope{id: c.ID, conglomerateID: c.ConglomerateID}, c, nil
}

// AuthorizeConnectedAccount is the scope of the conglomerate that holds a
// connected (payout) account, for the events the provider reports about
// that account: the provider's signature on the event is the credential,
// and it speaks only for the conglomerate whose account it names. An
// account no conglomerate holds is models.ErrNotFound.
func (s *Store) AuthorizeConnectedAccount(ctx context.Context, accountID string) (ConglomerateScope, error) {
	if accountID == "" {
		return ConglomerateScope{}, wrap("authorize connected account", models.ErrNotFound)
	}
	var c models.Conglomerate
	if err := s.db.WithContext(ctx).Select("id").Where("connect_account_id = ?", accountID).Take(&c).Error; err != nil {
		return ConglomerateScope{}, wrap("authorize connected account", err)
	}
	return ConglomerateScope{id: c.ID}, nil
}

// CompanyOfPayment is the scope of the company of the scope's
// conglomerate that recorded a payment (by the provider's payment id); a
// payment of no company of that conglomerate is models.ErrNotFound.
func (s *Store) CompanyOfPayment(ctx context.Context, cong ConglomerateScope, providerPaymentID string) (CompanyScope, error) {
	if err := cong.check("company of payment"); err != nil {
		return CompanyScope{}, err
	}
	var p models.CompanyPayment
	err := s.db.WithContext(ctx).Select("company_id").
		Where("provider_payment_id = ? AND conglomerate_id = ?", providerPaymentID, cong.id).Take(&p).Error
	if err != nil {
		return CompanyScope{}, wrap("company of payment", err)
	}
	return CompanyScope{id: p.CompanyID, conglomerateID: cong.id}, nil
}
