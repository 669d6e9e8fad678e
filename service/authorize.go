package service

import (
	"context"
	"errors"
	"time"

	"holdco/models"
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
}

// TrialEndsAt is when the free trial ends.
func (v ConglomerateView) TrialEndsAt() time.Time { return v.TrialStartedAt.Add(TrialLength) }

// AuthorizeCompany applies the ownership rule to a company: missing (or
// archived, unless allowArchived) is 404; a company of another account is
// 403; a company key reaches only its own company.
func (s *Core) AuthorizeCompany(ctx context.Context, id string, allowArchived bool) (models.Company, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return models.Company{}, ErrUnauthenticated()
	}
	c, err := s.store.GetCompany(ctx, id)
	if errors.Is(err, models.ErrNotFound) || err == nil && c.Status == models.CompanyArchived && !allowArchived {
		return models.Company{}, models.Errorf(models.CodeNotFound, "Company %s does not exist.", id)
	}
	if err != nil {
		return models.Company{}, err
	}
	switch {
	case p.Credential == CredentialCompanyKey:
		if p.CompanyID != c.ID {
			return models.Company{}, models.Errorf(models.CodeForbidden, "A company key reaches only its own company.")
		}
	case p.IsUser():
		member := false
		if c.ConglomerateID != "" {
			if member, err = s.store.IsMember(ctx, c.ConglomerateID, p.UserID); err != nil {
				return models.Company{}, err
			}
		}
		if !member {
			return models.Company{}, models.Errorf(models.CodeForbidden, "Company %s belongs to another account.", id)
		}
	default:
		return models.Company{}, models.Errorf(models.CodeForbidden, "Company %s needs a credential of its account.", id)
	}
	return c, nil
}

// AuthorizeConglomerate applies the ownership rule: a missing conglomerate
// is 404, one the caller does not belong to is 403.
func (s *Core) AuthorizeConglomerate(ctx context.Context, id string) (ConglomerateView, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return ConglomerateView{}, ErrUnauthenticated()
	}
	c, err := s.store.GetConglomerate(ctx, id)
	if errors.Is(err, models.ErrNotFound) {
		return ConglomerateView{}, models.Errorf(models.CodeNotFound, "Conglomerate %s does not exist.", id)
	}
	if err != nil {
		return ConglomerateView{}, err
	}
	if !p.IsUser() {
		return ConglomerateView{}, models.Errorf(models.CodeForbidden, "Conglomerate %s needs a user credential of one of its members.", id)
	}
	member, err := s.store.IsMember(ctx, id, p.UserID)
	if err != nil {
		return ConglomerateView{}, err
	}
	if !member {
		return ConglomerateView{}, models.Errorf(models.CodeForbidden, "Conglomerate %s belongs to another account.", id)
	}
	role := models.RoleMember
	if c.OwnerUserID == p.UserID {
		role = models.RoleOwner
	}
	return ConglomerateView{Conglomerate: c, Role: role}, nil
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
