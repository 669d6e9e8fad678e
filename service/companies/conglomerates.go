package companies

import (
	"context"
	"strings"

	"holdco/models"
	"holdco/service"
)

// MaxDailyCreditCap bounds the daily credit cap setting.
const MaxDailyCreditCap = 1_000_000_000

// MyConglomerates lists the conglomerates the caller belongs to.
func (s *Service) MyConglomerates(ctx context.Context) ([]service.ConglomerateView, error) {
	p, err := service.RequireUser(ctx)
	if err != nil {
		return nil, err
	}
	congs, err := s.store.Identity().ListConglomeratesForUser(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	out := make([]service.ConglomerateView, 0, len(congs))
	for _, c := range congs {
		role := models.RoleMember
		if c.OwnerUserID == p.UserID {
			role = models.RoleOwner
		}
		out = append(out, service.ConglomerateView{Conglomerate: c, Role: role})
	}
	return out, nil
}

// GetConglomerate returns a conglomerate the caller belongs to.
func (s *Service) GetConglomerate(ctx context.Context, id string) (service.ConglomerateView, error) {
	return s.core.AuthorizeConglomerate(ctx, id)
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
func (s *Service) UpdateConglomerate(ctx context.Context, id string, u ConglomerateUpdate) (service.ConglomerateView, error) {
	view, err := s.core.AuthorizeConglomerate(ctx, id)
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
	if err := s.store.Identity().UpdateConglomerateSettings(ctx, view.Scope, c.Name, c.DailyCreditCap); err != nil {
		return view, err
	}
	return s.core.AuthorizeConglomerate(ctx, id)
}
