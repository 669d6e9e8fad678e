package mail

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"holdco/models"
	"holdco/store"
)

// ListInput selects a page of a company's messages, newest first.
type ListInput struct {
	Limit     int    // 1 to MaxListLimit; 0 is DefaultListLimit
	Before    string // the NextCursor of the previous page; "" starts at the newest
	Direction string // "inbound", "outbound" or "" for both
}

// Page is one page of a company's inbox.
type Page struct {
	// Address is the company's inbox address.
	Address string
	// Emails are without bodies (Get returns one with its body).
	Emails []models.Email
	// NextCursor continues the list; "" when this is the last page.
	NextCursor string
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
	if in.Before != "" {
		c, ok := decodeCursor(in.Before)
		if !ok {
			return Page{}, models.Errorf(models.CodeInvalidArgument, "before is not a cursor of this list (use next_cursor of the previous page).").WithField("before")
		}
		q.Before = &c
	}
	want := q.Limit
	q.Limit++ // one more tells whether a next page exists
	es, err := s.core.Store().ListEmails(ctx, ac.Scope, q)
	if err != nil {
		return Page{}, err
	}
	p := Page{Address: s.Address(ac.Handle), Emails: es}
	if len(es) > want {
		p.Emails = es[:want]
		last := p.Emails[want-1]
		p.NextCursor = encodeCursor(store.EmailCursor{CreatedAt: last.CreatedAt, ID: last.ID})
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
	e, err := s.core.Store().GetEmail(ctx, ac.Scope, emailID, &now)
	if errors.Is(err, models.ErrNotFound) {
		return models.Email{}, notFound
	}
	return e, err
}

// A cursor is the position (created_at, id) of the last message of a page,
// opaque to clients: base64url of "<unix nanoseconds>.<id>".
func encodeCursor(c store.EmailCursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixNano(), 10) + "." + c.ID))
}

func decodeCursor(s string) (store.EmailCursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return store.EmailCursor{}, false
	}
	ns, id, ok := strings.Cut(string(raw), ".")
	if !ok {
		return store.EmailCursor{}, false
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return store.EmailCursor{}, false
	}
	if _, err := uuid.Parse(id); err != nil {
		return store.EmailCursor{}, false
	}
	return store.EmailCursor{CreatedAt: time.Unix(0, n).UTC(), ID: id}, true
}
