package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm/clause"

	"holdco/models"
)

// ErrSendLimit is ReserveOutgoingEmail's answer when the company has
// already sent its quota of messages in the window.
var ErrSendLimit = errors.New("store: email send limit reached")

// ErrEmailExists is ReserveOutgoingEmail's answer, with the stored row,
// when a message with the given id exists and was not refused by the
// provider (sent, sending or unknown): it is not sent again.
var ErrEmailExists = errors.New("store: the outgoing email exists")

// emailListColumns are the columns of a list row: everything but the
// bodies, which only the single read returns.
var emailListColumns = []string{"id", "company_id", "direction", "delivery", "provider_message_id", "from_address",
	"to_address", "reply_to", "subject", "body_state", "read_at", "created_at", "updated_at"}

// ReserveOutgoingEmail writes an outbound message of the scope's company
// in state `sending` (created at e.CreatedAt, else now), unless the company already has limit or more
// outbound rows created at or after since (ErrSendLimit). The count and the
// insert are one transaction serialized per company (a row lock on the
// company on Postgres; SQLite transactions are IMMEDIATE), so concurrent
// sends cannot pass the limit together. A message given an id (an agent's
// tool call derives it from the call's key) is written once: an existing
// one is answered with ErrEmailExists, or, when the provider refused it
// (failed), set back to `sending` for another attempt.
func (s Sales) ReserveOutgoingEmail(ctx context.Context, c CompanyScope, e models.Email, since time.Time, limit int64) (models.Email, error) {
	if err := c.check("reserve outgoing email"); err != nil {
		return models.Email{}, err
	}
	at := stamp(e.CreatedAt)
	e.CompanyID, e.Direction, e.Delivery, e.BodyState = c.id, models.EmailOutbound, models.EmailSending, models.EmailBodyPresent
	e.CreatedAt, e.UpdatedAt, e.ReadAt = at, at, &at
	var prior models.Email
	err := s.store().InTx(ctx, func(tx *Store) error {
		db := tx.db.WithContext(ctx)
		if tx.dialect == DialectPostgres {
			if err := db.Exec("SELECT id FROM companies WHERE id = ? FOR UPDATE", c.id).Error; err != nil {
				return err
			}
		}
		if e.ID != "" {
			var found []models.Email
			if err := db.Where("id = ? AND company_id = ? AND direction = ?", e.ID, c.id, models.EmailOutbound).Limit(1).Find(&found).Error; err != nil {
				return err
			}
			if len(found) == 1 {
				prior = found[0]
				if prior.Delivery != models.EmailFailed {
					return ErrEmailExists
				}
				// The provider refused the earlier attempt: this one sends
				// the same message again (counted once).
				prior.Delivery, prior.UpdatedAt = models.EmailSending, at
				return db.Model(&models.Email{}).Where("id = ?", prior.ID).
					Updates(map[string]any{"delivery": models.EmailSending, "updated_at": at}).Error
			}
		}
		var sent int64
		if err := db.Model(&models.Email{}).Where("company_id = ? AND direction = ? AND created_at >= ?", c.id, models.EmailOutbound, since.UTC()).
			Count(&sent).Error; err != nil {
			return err
		}
		if sent >= limit {
			return ErrSendLimit
		}
		return db.Create(&e).Error
	})
	if errors.Is(err, ErrSendLimit) {
		return models.Email{}, err
	}
	if errors.Is(err, ErrEmailExists) {
		return prior, err
	}
	if err == nil && prior.ID != "" {
		return prior, nil
	}
	return e, wrap("reserve outgoing email", err)
}

// SetEmailDelivery records how sending a message of the scope's company
// ended (sent or failed), with the activity event, when given, in the same
// transaction (its Subject defaults to the message id).
func (s Sales) SetEmailDelivery(ctx context.Context, c CompanyScope, id string, d models.EmailDelivery, activity *models.ActivityInput) error {
	if err := c.check("set email delivery"); err != nil {
		return err
	}
	err := s.store().InTx(ctx, func(tx *Store) error {
		res := tx.db.WithContext(ctx).Model(&models.Email{}).Where("id = ? AND company_id = ?", id, c.id).
			Updates(map[string]any{"delivery": d, "updated_at": now()})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return models.ErrNotFound
		}
		if activity == nil {
			return nil
		}
		a := *activity
		if a.Subject == "" {
			a.Subject = id
		}
		return tx.recordActivityAt(ctx, c.id, a, now())
	})
	return wrap("set email delivery", err)
}

// DeliverInboundEmail stores a message received for the live company
// whose handle is handle: the inbound webhook addresses the company by its
// recipient address (created at e.CreatedAt, else now), as the payment webhooks address a conglomerate by its
// customer, and its signature is the credential. A message whose provider
// message id the company already has is not stored again: the stored row
// is returned with delivered false. No live company with that handle is
// models.ErrNotFound. A delivered message records activity in the same
// transaction (its Subject defaults to the message id).
func (s Sales) DeliverInboundEmail(ctx context.Context, handle string, e models.Email, activity models.ActivityInput) (stored models.Email, delivered bool, err error) {
	err = s.store().InTx(ctx, func(tx *Store) error {
		db := tx.db.WithContext(ctx)
		var company models.Company
		if err := db.Select("id", "conglomerate_id").Where("handle = ? AND status <> ?", handle, models.CompanyArchived).Take(&company).Error; err != nil {
			return err
		}
		at := stamp(e.CreatedAt)
		e.CompanyID, e.Direction, e.Delivery, e.ReadAt = company.ID, models.EmailInbound, models.EmailReceived, nil
		e.CreatedAt, e.UpdatedAt = at, at
		res := db.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "company_id"}, {Name: "provider_message_id"}},
			DoNothing: true,
		}).Create(&e)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return db.Where("company_id = ? AND provider_message_id = ?", company.ID, e.ProviderMessageID).Take(&stored).Error
		}
		stored, delivered = e, true
		if activity.Subject == "" {
			activity.Subject = e.ID
		}
		return tx.recordActivityAt(ctx, company.ID, activity, at)
	})
	return stored, delivered, wrap("deliver inbound email", err)
}

// stamp is the time a message row records: the caller's (the service
// clock), else now, at the precision both databases keep.
func stamp(t time.Time) time.Time {
	if t.IsZero() {
		return now()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// EmailCursor is a position in a company's message list, which is ordered
// newest first by (created_at, id).
type EmailCursor struct {
	CreatedAt time.Time
	ID        string
}

// EmailQuery selects a page of a company's messages.
type EmailQuery struct {
	Limit     int
	Before    *EmailCursor          // only messages strictly after this position
	Direction models.EmailDirection // "" for both
}

// ListEmails returns a page of the scope's company's messages, newest first
// (equal timestamps by id, descending), without their bodies.
func (s Sales) ListEmails(ctx context.Context, c CompanyScope, q EmailQuery) ([]models.Email, error) {
	if err := c.check("list emails"); err != nil {
		return nil, err
	}
	db := s.db.WithContext(ctx).Select(emailListColumns).Where("company_id = ?", c.id)
	if q.Direction != "" {
		db = db.Where("direction = ?", q.Direction)
	}
	if q.Before != nil {
		at := q.Before.CreatedAt.UTC()
		db = db.Where("(created_at < ? OR (created_at = ? AND id < ?))", at, at, q.Before.ID)
	}
	es := []models.Email{}
	err := db.Order("created_at DESC, id DESC").Limit(q.Limit).Find(&es).Error
	return es, wrap("list emails", err)
}

// GetEmail returns one message of the scope's company with its body; a
// message of another company is models.ErrNotFound. With readAt set, an
// unread message is marked read at that time first.
func (s Sales) GetEmail(ctx context.Context, c CompanyScope, id string, readAt *time.Time) (models.Email, error) {
	if err := c.check("get email"); err != nil {
		return models.Email{}, err
	}
	db := s.db.WithContext(ctx)
	if readAt != nil {
		if err := db.Model(&models.Email{}).Where("id = ? AND company_id = ? AND read_at IS NULL", id, c.id).
			Update("read_at", readAt.UTC()).Error; err != nil {
			return models.Email{}, wrap("get email", err)
		}
	}
	var e models.Email
	err := db.Where("id = ? AND company_id = ?", id, c.id).Take(&e).Error
	return e, wrap("get email", err)
}

// InboxCounts counts the scope's company's messages in one query.
func (s Sales) InboxCounts(ctx context.Context, c CompanyScope) (models.InboxCounts, error) {
	if err := c.check("inbox counts"); err != nil {
		return models.InboxCounts{}, err
	}
	var n models.InboxCounts
	err := s.db.WithContext(ctx).Model(&models.Email{}).Where("company_id = ?", c.id).Select(
		`COUNT(*) AS total,
		COALESCE(SUM(CASE WHEN direction = ? AND read_at IS NULL THEN 1 ELSE 0 END), 0) AS unread,
		COALESCE(SUM(CASE WHEN direction = ? THEN 1 ELSE 0 END), 0) AS received,
		COALESCE(SUM(CASE WHEN direction = ? THEN 1 ELSE 0 END), 0) AS sent`,
		models.EmailInbound, models.EmailInbound, models.EmailOutbound).Scan(&n).Error
	return n, wrap("inbox counts", err)
}

// MissingEmailBodies returns up to limit inbound messages, of any company,
// whose body is still missing, oldest first (operators' backfill only).
func (s Sales) MissingEmailBodies(ctx context.Context, admin AdminScope, limit int) ([]models.Email, error) {
	if err := admin.check("missing email bodies"); err != nil {
		return nil, err
	}
	es := []models.Email{}
	err := s.db.WithContext(ctx).Select("id", "company_id", "provider_message_id", "created_at").
		Where("body_state = ?", models.EmailBodyMissing).Order("created_at, id").Limit(limit).Find(&es).Error
	return es, wrap("missing email bodies", err)
}

// FillEmailBody stores a fetched body on a message whose body is still
// missing and reports whether it did: false means another run filled it
// first (the conditional update is what makes concurrent backfills safe).
func (s Sales) FillEmailBody(ctx context.Context, admin AdminScope, id string, b models.EmailBody) (bool, error) {
	if err := admin.check("fill email body"); err != nil {
		return false, err
	}
	res := s.db.WithContext(ctx).Model(&models.Email{}).Where("id = ? AND body_state = ?", id, models.EmailBodyMissing).
		Updates(map[string]any{"text_body": b.Text, "html_body": b.HTML, "body_state": models.EmailBodyPresent, "updated_at": now()})
	return res.RowsAffected == 1, wrap("fill email body", res.Error)
}

// MarkStaleOutgoingEmails turns outbound messages still `sending` since
// before cutoff into `unknown`, across every company: the worker's sweep
// for sends that a stopped process left half done. A send that finishes
// later still records its outcome.
func (s Sales) MarkStaleOutgoingEmails(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Model(&models.Email{}).
		Where("delivery = ? AND updated_at < ?", models.EmailSending, cutoff.UTC()).
		Updates(map[string]any{"delivery": models.EmailUnknown, "updated_at": now()})
	return res.RowsAffected, wrap("mark stale outgoing emails", res.Error)
}
