package service

import (
	"context"
	"errors"
	"time"

	"holdco/models"
	"holdco/store"
)

// The authorization step: every use case that reaches a company or a
// conglomerate goes through one of these, which apply the ownership rule
// (404 for a missing item, 403 for someone else's).

// TrialLength is the free trial every new account starts with.
const TrialLength = 3 * 24 * time.Hour

// ConglomerateView is a conglomerate as its member sees it.
type ConglomerateView struct {
	models.Conglomerate
	Role models.Role
	// Scope is what the store's conglomerate methods take.
	Scope store.ConglomerateScope `json:"-"`
}

// TrialEndsAt is when the free trial ends.
func (v ConglomerateView) TrialEndsAt() time.Time { return v.TrialStartedAt.Add(TrialLength) }

// AuthorizedCompany is a company the caller may reach, with the scope the
// store's company methods take.
type AuthorizedCompany struct {
	models.Company
	Scope store.CompanyScope
}

// actor is who the principal is for the store's authorization step.
func actor(p Principal) store.Actor {
	switch {
	case p.Credential == CredentialCompanyKey:
		return store.Actor{CompanyID: p.CompanyID}
	case p.IsUser():
		a := store.Actor{UserID: p.UserID}
		if p.Account != nil && p.Account.ID == p.ConglomerateID {
			// Resolved with the credential, membership checked then.
			a.MemberOf = p.ConglomerateID
		}
		return a
	case p.IsAdmin():
		return store.Actor{Admin: true}
	}
	return store.Actor{}
}

// AuthorizeCompany applies the ownership rule to a company: missing (or
// archived, unless allowArchived) is 404; a company of another account is
// 403; a company key reaches only its own company.
//
// A company the same principal was authorized for earlier in the same
// call (WithAuthorizedCompany) is answered from ctx: an adapter that
// resolves the company itself (the connector's `business`) hands its
// result to the use case instead of having it authorized twice.
func (s *Core) AuthorizeCompany(ctx context.Context, id string, allowArchived bool) (AuthorizedCompany, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return AuthorizedCompany{}, ErrUnauthenticated()
	}
	if a, ok := ctx.Value(authorizedKey{}).(authorized); ok && a.principal == p && a.company.ID == id &&
		(allowArchived || a.company.Status != models.CompanyArchived) {
		return a.company, nil
	}
	scope, c, err := s.store.AuthorizeCompany(ctx, actor(p), id, allowArchived)
	if err != nil {
		return AuthorizedCompany{}, companyAuthError(p, id, err)
	}
	return AuthorizedCompany{Company: c, Scope: scope}, nil
}

// companyAuthError is the answer to a company the store's authorization
// step refused for p.
func companyAuthError(p Principal, id string, err error) error {
	switch {
	case errors.Is(err, models.ErrNotFound):
		return models.Errorf(models.CodeNotFound, "Company %s does not exist.", id)
	case errors.Is(err, store.ErrForbidden) && p.Credential == CredentialCompanyKey:
		return models.Errorf(models.CodeForbidden, "A company key reaches only its own company.")
	case errors.Is(err, store.ErrForbidden) && p.IsUser():
		return models.Errorf(models.CodeForbidden, "Company %s belongs to another account.", id)
	case errors.Is(err, store.ErrForbidden):
		return models.Errorf(models.CodeForbidden, "Company %s needs a credential of its account.", id)
	}
	return err
}

// AuthorizeCompanyDashboard is AuthorizeCompany (an archived company is
// not found) with the company's store.CompanySummary (the account's
// credits of the UTC day starting at dayStart, the analytics headline's
// days) and store.DashboardLists (at most activity events, documents and
// open tasks), read with the company (store.Companies.AuthorizeCompanyDashboard):
// the dashboard's authorization and reads in one round trip on Postgres.
func (s *Core) AuthorizeCompanyDashboard(ctx context.Context, id string, dayStart time.Time, days store.HeadlineDays,
	activity, documents, tasks int) (AuthorizedCompany, store.CompanySummary, store.DashboardLists, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return AuthorizedCompany{}, store.CompanySummary{}, store.DashboardLists{}, ErrUnauthenticated()
	}
	if a, ok := ctx.Value(authorizedKey{}).(authorized); ok && a.principal == p && a.company.ID == id && a.company.Status != models.CompanyArchived {
		sum, err := s.store.Companies().CompanySummary(ctx, a.company.Scope, dayStart, days)
		if err != nil {
			return AuthorizedCompany{}, store.CompanySummary{}, store.DashboardLists{}, err
		}
		lists, err := s.store.Companies().DashboardLists(ctx, a.company.Scope, activity, documents, tasks)
		if err != nil {
			return AuthorizedCompany{}, store.CompanySummary{}, store.DashboardLists{}, err
		}
		return a.company, sum, lists, nil
	}
	scope, c, sum, lists, err := s.store.Companies().AuthorizeCompanyDashboard(ctx, actor(p), id, dayStart, days, activity, documents, tasks)
	if err != nil {
		return AuthorizedCompany{}, store.CompanySummary{}, store.DashboardLists{}, companyAuthError(p, id, err)
	}
	return AuthorizedCompany{Company: c, Scope: scope}, sum, lists, nil
}

type authorizedKey struct{}

// authorized is a company authorized for a principal.
type authorized struct {
	principal Principal
	company   AuthorizedCompany
}

// WithAuthorizedCompany returns ctx carrying ac, which AuthorizeCompany
// just answered for the principal in ctx: the use cases called with this
// ctx for the same company take it as authorized (for this principal
// only; another principal set later is authorized again).
func WithAuthorizedCompany(ctx context.Context, ac AuthorizedCompany) context.Context {
	p, ok := PrincipalFrom(ctx)
	if !ok || ac.ID == "" {
		return ctx
	}
	return context.WithValue(ctx, authorizedKey{}, authorized{principal: p, company: ac})
}

// AuthorizeConglomerate applies the ownership rule: a missing conglomerate
// is 404, one the caller does not belong to is 403.
func (s *Core) AuthorizeConglomerate(ctx context.Context, id string) (ConglomerateView, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return ConglomerateView{}, ErrUnauthenticated()
	}
	scope, c, err := s.store.AuthorizeConglomerate(ctx, actor(p), id)
	return conglomerateView(p, id, scope, c, err)
}

// AuthorizeConglomerateCredits is AuthorizeConglomerate with the
// account's balance and the spend of the UTC day starting at dayStart,
// read fresh in the same statement as the conglomerate.
func (s *Core) AuthorizeConglomerateCredits(ctx context.Context, id string, dayStart time.Time) (ConglomerateView, store.CreditOutcome, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return ConglomerateView{}, store.CreditOutcome{}, ErrUnauthenticated()
	}
	scope, c, credits, err := s.store.AuthorizeConglomerateCredits(ctx, actor(p), id, dayStart)
	v, err := conglomerateView(p, id, scope, c, err)
	if err != nil {
		return ConglomerateView{}, store.CreditOutcome{}, err
	}
	return v, credits, nil
}

// conglomerateView is the authorization step's answer for a conglomerate.
func conglomerateView(p Principal, id string, scope store.ConglomerateScope, c models.Conglomerate, err error) (ConglomerateView, error) {
	switch {
	case errors.Is(err, models.ErrNotFound):
		return ConglomerateView{}, models.Errorf(models.CodeNotFound, "Conglomerate %s does not exist.", id)
	case errors.Is(err, store.ErrForbidden) && !p.IsUser():
		return ConglomerateView{}, models.Errorf(models.CodeForbidden, "Conglomerate %s needs a user credential of one of its members.", id)
	case errors.Is(err, store.ErrForbidden):
		return ConglomerateView{}, models.Errorf(models.CodeForbidden, "Conglomerate %s belongs to another account.", id)
	case err != nil:
		return ConglomerateView{}, err
	}
	role := models.RoleMember
	if c.OwnerUserID == p.UserID {
		role = models.RoleOwner
	}
	return ConglomerateView{Conglomerate: c, Role: role, Scope: scope}, nil
}

// AuthorizeOwner is AuthorizeConglomerate for billing changes: members
// read, only the owner changes.
func (s *Core) AuthorizeOwner(ctx context.Context, conglomerateID string) (ConglomerateView, error) {
	v, err := s.AuthorizeConglomerate(ctx, conglomerateID)
	if err == nil && v.Role != models.RoleOwner {
		err = models.Errorf(models.CodeForbidden, "Only the account's owner manages its billing.")
	}
	return v, err
}

// MemberAccount is the account conglomerateID of which user userID is a
// member, read when a credential is resolved (before a principal exists
// to authorize): models.ErrNotFound or store.ErrForbidden otherwise.
func (s *Core) MemberAccount(ctx context.Context, userID, conglomerateID string) (models.Conglomerate, error) {
	_, c, err := s.store.AuthorizeConglomerate(ctx, store.Actor{UserID: userID}, conglomerateID)
	return c, err
}
