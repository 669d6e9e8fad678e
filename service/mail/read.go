package mail

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/store"
)

// ListInput selects a page of a company's messages, newest first.
type ListInput struct {
	Limit int // 1 to MaxListLimit; 0 is DefaultListLimit
	// Before alone lists messages strictly older than that instant; with
	// BeforeID (both from the previous page's Next) the list continues
	// exactly after that message. Zero starts at the newest.
	Before    time.Time
	BeforeID  string
	Direction string // "inbound", "outbound" or "" for both
}

// Page is one page of a company's inbox.
type Page struct {
	// Address is the company's inbox address.
	Address string
	// Emails are without bodies (Get returns one with its body).
	Emails []models.Email
	// Next continues the list; nil on the last page.
	Next *store.EmailCursor
}

// List returns a page of the company's messages, newest first; messages
// received at the same instant are ordered by id, so paging never skips or
// repeats one.
func (s *Service) List(ctx context.Context, companyID string, in ListInput) (Page, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Page{}, err
	}
	q := store.EmailQuery{Limit: in.Limit, Direction: models.EmailDirection(in.Direction)}
	switch {
	case in.Limit == 0:
		q.Limit = DefaultListLimit
	case in.Limit < 1 || in.Limit > MaxListLimit:
		return Page{}, models.Errorf(models.CodeInvalidArgument, "limit must be between 1 and %d.", MaxListLimit).WithField("limit")
	}
	if in.Direction != "" && !q.Direction.Valid() {
		return Page{}, models.Errorf(models.CodeInvalidArgument, "direction must be inbound or outbound.").WithField("direction")
	}
	switch {
	case in.BeforeID != "" && in.Before.IsZero():
		return Page{}, models.Errorf(models.CodeInvalidArgument, "before_id needs before (both from next of the previous page).").WithField("before_id")
	case in.BeforeID != "":
		if _, err := uuid.Parse(in.BeforeID); err != nil {
			return Page{}, models.Errorf(models.CodeInvalidArgument, "before_id is not a message id.").WithField("before_id")
		}
		q.Before = &store.EmailCursor{CreatedAt: in.Before, ID: in.BeforeID}
	case !in.Before.IsZero():
		// Strictly older than the instant: no id sorts below the empty string.
		q.Before = &store.EmailCursor{CreatedAt: in.Before, ID: ""}
	}
	want := q.Limit
	q.Limit++ // one more tells whether a next page exists
	es, err := s.core.Store().Sales().ListEmails(ctx, ac.Scope, q)
	if err != nil {
		return Page{}, err
	}
	p := Page{Address: s.Address(ac.Handle), Emails: es}
	if len(es) > want {
		p.Emails = es[:want]
		last := p.Emails[want-1]
		p.Next = &store.EmailCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	return p, nil
}

// Get returns one of the company's messages with its body and marks it
// read. A message of another company, or an id that is no message, is
// not_found.
func (s *Service) Get(ctx context.Context, companyID, emailID string) (models.Email, error) {
	ac, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.Email{}, err
	}
	notFound := models.Errorf(models.CodeNotFound, "Email %s does not exist.", emailID)
	if _, err := uuid.Parse(emailID); err != nil {
		return models.Email{}, notFound
	}
	now := s.core.Now()
	e, err := s.core.Store().Sales().GetEmail(ctx, ac.Scope, emailID, &now)
	if errors.Is(err, models.ErrNotFound) {
		return models.Email{}, notFound
	}
	return e, err
}
