// Package prospects holds a company's leads: people its agents may sell
// to, with where each stands in the pipeline (new → contacted → replied →
// qualified → won | lost; any move is allowed, the agents decide) and
// notes. REST (the web app) and the agents' tools share these use cases.
package prospects

import (
	"context"
	"errors"
	"net/mail"
	"strings"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// Limits of a prospect's fields (characters).
const (
	MaxName         = 200
	MaxOrganization = 200
	MaxNotes        = 10_000
	MaxSource       = 500
	DefaultLimit    = 50
	MaxLimit        = 200
)

// Service is the prospects use cases.
type Service struct {
	core  *service.Core
	store *store.Store
}

// New builds the prospects use cases on core.
func New(core *service.Core) *Service { return &Service{core: core, store: core.Store()} }

// Input is a new prospect, or (for Update) the fields to change.
type Input struct {
	Name, Email, Organization, Notes, Source *string
	Status                                   *models.ProspectStatus
}

// check validates the fields that are set.
func (in Input) check(creating bool) error {
	fields := []struct {
		name      string
		v         *string
		max       int
		multiline bool
	}{{"name", in.Name, MaxName, false}, {"email", in.Email, 320, false}, {"organization", in.Organization, MaxOrganization, false},
		{"notes", in.Notes, MaxNotes, true}, {"source", in.Source, MaxSource, false}}
	for _, f := range fields {
		if f.v == nil {
			continue
		}
		if err := service.CheckText(*f.v, f.multiline); err != nil {
			return err.WithField(f.name)
		}
		if n := len([]rune(*f.v)); n > f.max {
			return models.Errorf(models.CodeInvalidArgument, "%s has %d characters; at most %d are allowed.", f.name, n, f.max).WithField(f.name)
		}
	}
	if creating && (in.Name == nil || strings.TrimSpace(*in.Name) == "") {
		return models.Errorf(models.CodeInvalidArgument, "A prospect needs a name.").WithField("name")
	}
	if !creating && in.Name != nil && strings.TrimSpace(*in.Name) == "" {
		return models.Errorf(models.CodeInvalidArgument, "The name must not be blank.").WithField("name")
	}
	if in.Email != nil && *in.Email != "" {
		a, err := mail.ParseAddress(*in.Email)
		if err != nil || a.Address != strings.TrimSpace(*in.Email) {
			return models.Errorf(models.CodeInvalidArgument, "email is not an email address.").WithField("email")
		}
	}
	if in.Status != nil && !in.Status.Valid() {
		return models.Errorf(models.CodeInvalidArgument, "status must be one of new, contacted, replied, qualified, won, lost.").WithField("status")
	}
	return nil
}

func trimmed(p *string) string {
	if p == nil {
		return ""
	}
	return strings.TrimSpace(*p)
}

// Add stores a new prospect of the company (status new unless given).
func (s *Service) Add(ctx context.Context, companyID string, in Input) (models.Prospect, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.Prospect{}, err
	}
	if err := in.check(true); err != nil {
		return models.Prospect{}, err
	}
	p := models.Prospect{Name: trimmed(in.Name), Email: trimmed(in.Email), Organization: trimmed(in.Organization),
		Notes: trimmed(in.Notes), Source: trimmed(in.Source), Status: models.ProspectNew}
	if in.Status != nil {
		p.Status = *in.Status
	}
	if service.Keyed(ctx) {
		// An agent's call: made again after a crash, it finds its prospect.
		p.ID = service.EffectID(ctx, "prospect")
	}
	p, err = s.store.Sales().CreateProspect(ctx, ac.Scope, p, models.ActivityInput{Kind: models.ActivityProspectAdded,
		Actor: service.ActorOf(ctx), Summary: "A prospect was added"})
	if errors.Is(err, models.ErrDuplicate) {
		return p, models.Errorf(models.CodeConflict, "The company has a prospect with this email already.").WithField("email")
	}
	return p, err
}

// Update changes a prospect of the company; fields left nil stay.
func (s *Service) Update(ctx context.Context, companyID, prospectID string, in Input) (models.Prospect, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.Prospect{}, err
	}
	if err := in.check(false); err != nil {
		return models.Prospect{}, err
	}
	if _, err := uuid.Parse(prospectID); err != nil {
		return models.Prospect{}, models.Errorf(models.CodeInvalidArgument, "prospect_id is not a UUID.").WithField("prospect_id")
	}
	ch := models.ProspectChanges{Status: in.Status}
	for _, f := range []struct{ in, out **string }{{&in.Name, &ch.Name}, {&in.Email, &ch.Email}, {&in.Organization, &ch.Organization},
		{&in.Notes, &ch.Notes}, {&in.Source, &ch.Source}} {
		if *f.in != nil {
			v := strings.TrimSpace(**f.in)
			*f.out = &v
		}
	}
	summary := "A prospect was updated"
	if in.Status != nil {
		summary = "A prospect moved to " + string(*in.Status)
	}
	p, err := s.store.Sales().UpdateProspect(ctx, ac.Scope, prospectID, ch, models.ActivityInput{Kind: models.ActivityProspectUpdated,
		Actor: service.ActorOf(ctx), Summary: summary})
	switch {
	case errors.Is(err, models.ErrNotFound):
		return p, models.Errorf(models.CodeNotFound, "Prospect %s does not exist in this company.", prospectID).WithField("prospect_id")
	case errors.Is(err, models.ErrDuplicate):
		return p, models.Errorf(models.CodeConflict, "The company has a prospect with this email already.").WithField("email")
	}
	return p, err
}

// ListInput filters and pages the list.
type ListInput struct {
	Statuses []models.ProspectStatus
	Limit    int
	// Before is the id of the last prospect of the previous page.
	Before string
}

// Page is a page of prospects, newest first.
type Page struct {
	Prospects []models.Prospect
	Next      string
}

// List returns the company's prospects, newest first.
func (s *Service) List(ctx context.Context, companyID string, in ListInput) (Page, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Page{}, err
	}
	limit := in.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 1 || limit > MaxLimit {
		return Page{}, models.Errorf(models.CodeInvalidArgument, "limit must be from 1 to %d.", MaxLimit).WithField("limit")
	}
	for _, st := range in.Statuses {
		if !st.Valid() {
			return Page{}, models.Errorf(models.CodeInvalidArgument, "status must be one of new, contacted, replied, qualified, won, lost.").WithField("status")
		}
	}
	if in.Before != "" {
		if _, err := s.store.Sales().GetProspect(ctx, ac.Scope, in.Before); err != nil {
			return Page{}, models.Errorf(models.CodeInvalidArgument, "before must be a prospect id of this company.").WithField("before")
		}
	}
	ps, err := s.store.Sales().ListProspects(ctx, ac.Scope, in.Statuses, in.Before, limit+1)
	if err != nil {
		return Page{}, err
	}
	p := Page{Prospects: ps}
	if len(ps) > limit {
		p.Prospects, p.Next = ps[:limit], ps[limit-1].ID
	}
	return p, nil
}
