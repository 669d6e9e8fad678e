package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"holdco/models"
)

// TrialLength is the free trial every new account starts with.
const TrialLength = 3 * 24 * time.Hour

// MaxDailyCreditCap bounds the daily credit cap setting.
const MaxDailyCreditCap = 1_000_000_000

// ConglomerateView is a conglomerate as its member sees it.
type ConglomerateView struct {
	models.Conglomerate
	Role models.Role
}

// TrialEndsAt is when the free trial ends.
func (v ConglomerateView) TrialEndsAt() time.Time { return v.TrialStartedAt.Add(TrialLength) }

// MyConglomerates lists the conglomerates the caller belongs to.
func (s *Service) MyConglomerates(ctx context.Context) ([]ConglomerateView, error) {
	p, err := requireUser(ctx)
	if err != nil {
		return nil, err
	}
	congs, err := s.store.ListConglomeratesForUser(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := make([]ConglomerateView, 0, len(congs))
	for _, c := range congs {
		role := models.RoleMember
		if c.OwnerUserID == p.UserID {
			role = models.RoleOwner
		}
		out = append(out, ConglomerateView{Conglomerate: c, Role: role})
	}
	return out, nil
}

// authorizeConglomerate applies the ownership rule: a missing conglomerate
// is 404, one the caller does not belong to is 403.
func (s *Service) authorizeConglomerate(ctx context.Context, id string) (ConglomerateView, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return ConglomerateView{}, errUnauthenticated()
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

// GetConglomerate returns a conglomerate the caller belongs to.
func (s *Service) GetConglomerate(ctx context.Context, id string) (ConglomerateView, error) {
	return s.authorizeConglomerate(ctx, id)
}

// ConglomerateUpdate is a partial update; nil fields stay unchanged.
type ConglomerateUpdate struct {
	Name *string
	// DailyCreditCap: Set with Value nil clears the cap.
	DailyCreditCap struct {
		Set   bool
		Value *int64
	}
}

// UpdateConglomerate changes settings of a conglomerate the caller belongs to.
func (s *Service) UpdateConglomerate(ctx context.Context, id string, u ConglomerateUpdate) (ConglomerateView, error) {
	view, err := s.authorizeConglomerate(ctx, id)
	if err != nil {
		return view, err
	}
	c := view.Conglomerate
	if u.Name != nil {
		name := strings.TrimSpace(*u.Name)
		if name == "" {
			return view, models.Errorf(models.CodeInvalidArgument, "The name must not be blank.").WithField("name")
		}
		c.Name = name
	}
	if u.DailyCreditCap.Set {
		if v := u.DailyCreditCap.Value; v != nil && (*v < 0 || *v > MaxDailyCreditCap) {
			return view, models.Errorf(models.CodeInvalidArgument, "daily_credit_cap must be from 0 to %d credits, or null for no cap.", MaxDailyCreditCap).WithField("daily_credit_cap")
		}
		c.DailyCreditCap = u.DailyCreditCap.Value
	}
	if err := s.store.UpdateConglomerateSettings(ctx, c.ID, c.Name, c.DailyCreditCap); err != nil {
		return view, err
	}
	return s.authorizeConglomerate(ctx, id)
}
