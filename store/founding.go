package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// CreateFoundingInterview stores a new open interview of the scope's
// conglomerate. A second open interview of the same user is refused with
// models.ErrDuplicate (the unique index on open_key decides).
func (s Founding) CreateFoundingInterview(ctx context.Context, cong ConglomerateScope, f models.FoundingInterview) (models.FoundingInterview, error) {
	if err := cong.check("create founding interview"); err != nil {
		return f, err
	}
	f.ConglomerateID = cong.id
	if f.State.Open() {
		f.OpenKey = &f.UserID
	}
	at := now()
	f.CreatedAt, f.UpdatedAt = at, at
	if err := s.db.WithContext(ctx).Create(&f).Error; err != nil {
		return f, wrap("create founding interview", err)
	}
	return f, nil
}

// OpenFoundingInterview returns the user's open interview in the scope's
// conglomerate, or models.ErrNotFound.
func (s Founding) OpenFoundingInterview(ctx context.Context, cong ConglomerateScope, userID string) (models.FoundingInterview, error) {
	var f models.FoundingInterview
	if err := cong.check("open founding interview"); err != nil {
		return f, err
	}
	err := s.db.WithContext(ctx).Where("conglomerate_id = ? AND open_key = ?", cong.id, userID).Take(&f).Error
	return f, wrap("open founding interview", err)
}

// LatestFoundingInterview returns the user's most recent interview in the
// scope's conglomerate (open or not), or models.ErrNotFound.
func (s Founding) LatestFoundingInterview(ctx context.Context, cong ConglomerateScope, userID string) (models.FoundingInterview, error) {
	var f models.FoundingInterview
	if err := cong.check("latest founding interview"); err != nil {
		return f, err
	}
	err := s.db.WithContext(ctx).Where("conglomerate_id = ? AND user_id = ?", cong.id, userID).
		Order("created_at DESC, id DESC").Take(&f).Error
	return f, wrap("latest founding interview", err)
}

// FoundingInterview returns one interview of the scope's conglomerate, or
// models.ErrNotFound.
func (s Founding) FoundingInterview(ctx context.Context, cong ConglomerateScope, id string) (models.FoundingInterview, error) {
	var f models.FoundingInterview
	if err := cong.check("get founding interview"); err != nil {
		return f, err
	}
	err := s.db.WithContext(ctx).Where("conglomerate_id = ? AND id = ?", cong.id, id).Take(&f).Error
	return f, wrap("get founding interview", err)
}

// LatestCompanyInterview returns the most recent interview of a kind
// about the scope's company, or models.ErrNotFound.
func (s Founding) LatestCompanyInterview(ctx context.Context, c CompanyScope, kind models.FoundingKind) (models.FoundingInterview, error) {
	var f models.FoundingInterview
	if err := c.check("company founding interview"); err != nil {
		return f, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ? AND conglomerate_id = ? AND kind = ?", c.id, c.conglomerateID, kind).
		Order("created_at DESC, id DESC").Take(&f).Error
	return f, wrap("company founding interview", err)
}

// ErrUnchanged is what an UpdateFoundingInterview mutate returns when it
// changes nothing: nothing is written (updated_at stays) and the
// interview is returned as it is, with no error.
var ErrUnchanged = errors.New("store: unchanged")

// UpdateFoundingInterview reads an interview of the scope's conglomerate
// under a write lock, lets mutate change it, and writes it back; a mutate
// error rolls back and is returned unchanged (ErrUnchanged: nothing is
// written, no error). Leaving an open state clears the open key (the user
// may open another).
func (s Founding) UpdateFoundingInterview(ctx context.Context, cong ConglomerateScope, id string, mutate func(f *models.FoundingInterview) error) (models.FoundingInterview, error) {
	var f models.FoundingInterview
	if err := cong.check("update founding interview"); err != nil {
		return f, err
	}
	err := s.store().InTx(ctx, func(tx *Store) error {
		q := tx.db.WithContext(ctx)
		if tx.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		if err := q.Where("conglomerate_id = ? AND id = ?", cong.id, id).Take(&f).Error; err != nil {
			return wrap("update founding interview", err)
		}
		if err := mutate(&f); err != nil {
			return err
		}
		if !f.State.Open() {
			f.OpenKey = nil
		}
		f.UpdatedAt = now()
		return wrap("update founding interview", tx.db.WithContext(ctx).Select("*").Updates(&f).Error)
	})
	if errors.Is(err, ErrUnchanged) {
		err = nil
	}
	return f, err
}

// HeartbeatFoundingSegment renews the interviewer's claim on an
// interview while it works.
func (s Founding) HeartbeatFoundingSegment(ctx context.Context, cong ConglomerateScope, id string, at time.Time) error {
	if err := cong.check("founding heartbeat"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Model(&models.FoundingInterview{}).
		Where("conglomerate_id = ? AND id = ? AND segment_running", cong.id, id).
		Update("segment_heartbeat_at", at).Error
	return wrap("founding heartbeat", err)
}

// CountFoundingInterviewsSince counts the interviews the conglomerate
// opened since at.
func (s Founding) CountFoundingInterviewsSince(ctx context.Context, cong ConglomerateScope, since time.Time) (int64, error) {
	if err := cong.check("count founding interviews"); err != nil {
		return 0, err
	}
	var n int64
	err := s.db.WithContext(ctx).Model(&models.FoundingInterview{}).
		Where("conglomerate_id = ? AND created_at >= ?", cong.id, since).Count(&n).Error
	return n, wrap("count founding interviews", err)
}

// CountLiveCompanies counts the conglomerate's companies that are not
// archived.
func (s Founding) CountLiveCompanies(ctx context.Context, cong ConglomerateScope) (int64, error) {
	if err := cong.check("count companies"); err != nil {
		return 0, err
	}
	var n int64
	err := s.db.WithContext(ctx).Model(&models.Company{}).
		Where("conglomerate_id = ? AND status <> ?", cong.id, models.CompanyArchived).Count(&n).Error
	return n, wrap("count companies", err)
}

// CountPlatformLiveCompanies counts every company that is not archived,
// across tenants: a number only (the platform's company cap), no tenant's
// rows.
func (s Founding) CountPlatformLiveCompanies(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&models.Company{}).Where("status <> ?", models.CompanyArchived).Count(&n).Error
	return n, wrap("count platform companies", err)
}

// UnstartedFounding is an open interview whose workflow was never started,
// with the worker's scope of its conglomerate.
type UnstartedFounding struct {
	Interview models.FoundingInterview
	Scope     ConglomerateScope
}

// UnstartedFoundingInterviews returns up to limit open interviews created
// before createdBefore whose workflow is not marked started, oldest first,
// across tenants: for the worker's sweeper only.
func (s Founding) UnstartedFoundingInterviews(ctx context.Context, createdBefore time.Time, limit int) ([]UnstartedFounding, error) {
	var rows []models.FoundingInterview
	err := s.db.WithContext(ctx).Where("open_key IS NOT NULL AND workflow_started_at IS NULL AND created_at < ?", createdBefore).
		Order("created_at, id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, wrap("unstarted founding interviews", err)
	}
	out := make([]UnstartedFounding, len(rows))
	for i, r := range rows {
		out[i] = UnstartedFounding{Interview: r, Scope: ConglomerateScope{id: r.ConglomerateID}}
	}
	return out, nil
}

// MarkFoundingWorkflowStarted records that the interview's workflow exists.
func (s Founding) MarkFoundingWorkflowStarted(ctx context.Context, cong ConglomerateScope, id string, at time.Time) error {
	if err := cong.check("mark founding started"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Model(&models.FoundingInterview{}).
		Where("conglomerate_id = ? AND id = ? AND workflow_started_at IS NULL", cong.id, id).Update("workflow_started_at", at).Error
	return wrap("mark founding started", err)
}

// PendingFirstPass returns the latest founded interview (a founding or a
// v3 upgrade) of the scope's company whose first pass has not been tried,
// or models.ErrNotFound.
func (s Founding) PendingFirstPass(ctx context.Context, c CompanyScope) (models.FoundingInterview, error) {
	var f models.FoundingInterview
	if err := c.check("pending first pass"); err != nil {
		return f, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ? AND conglomerate_id = ? AND state = ? AND first_pass_status = ''",
		c.id, c.conglomerateID, models.FoundingFounded).Order("updated_at DESC, id").Take(&f).Error
	return f, wrap("pending first pass", err)
}

// FirstPassTurnSince returns the scope's company's latest first-pass turn
// made at or after since (the store's clock, as the interview's
// UpdatedAt): the first pass of an interview founded then, not an earlier
// founding's. found is false when there is none.
func (s Founding) FirstPassTurnSince(ctx context.Context, c CompanyScope, since time.Time) (t models.Turn, found bool, err error) {
	if err := c.check("first pass turn"); err != nil {
		return t, false, err
	}
	err = s.db.WithContext(ctx).Where("company_id = ? AND trigger = ? AND created_at >= ?", c.id, string(models.TriggerFirstPass), since).
		Order("created_at DESC").Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return t, false, nil
	}
	return t, err == nil, wrap("first pass turn", err)
}

// LockAccountForStart takes the conglomerate's credit-account lock on the
// caller's transaction (a Store from InTx; the row lock on Postgres, the
// write transaction itself on SQLite): the business starts of one account
// run one after another from here to their commit, so two of them cannot
// pass the business limit or the credit gate on the same count.
func (s Founding) LockAccountForStart(ctx context.Context, cong ConglomerateScope) error {
	if err := cong.check("lock account"); err != nil {
		return err
	}
	if !s.inTx {
		return errors.New("store: lock account: not in a transaction")
	}
	_, err := s.store().lockCreditAccount(s.db.WithContext(ctx), cong.id, now())
	return wrap("lock account", err)
}

// SetCompanyGeneration sets the scope's company's generation.
func (s Founding) SetCompanyGeneration(ctx context.Context, c CompanyScope, generation int) error {
	if err := c.check("company generation"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Model(&models.Company{}).Where("id = ?", c.id).
		Updates(map[string]any{"generation": generation, "updated_at": now()}).Error
	return wrap("company generation", err)
}

// CompanyCreateKeyCompany returns the company a live create key names, in
// the scope's conglomerate; models.ErrNotFound when the key is unknown or
// expired at at.
func (s Founding) CompanyCreateKeyCompany(ctx context.Context, cong ConglomerateScope, keyHash string, at time.Time) (models.Company, error) {
	k, err := s.store().Companies().CompanyCreateKey(ctx, keyHash, at)
	if err != nil {
		return models.Company{}, err
	}
	_, c, err := s.store().CompanyInConglomerate(ctx, cong, k.CompanyID)
	return c, err
}

// WelcomeGranted reports whether the conglomerate had its welcome credits.
func (s Founding) WelcomeGranted(ctx context.Context, cong ConglomerateScope) (bool, error) {
	if err := cong.check("welcome granted"); err != nil {
		return false, err
	}
	var n int64
	err := s.db.WithContext(ctx).Model(&models.CreditLedgerEntry{}).
		Where("conglomerate_id = ? AND type = ?", cong.id, models.EntryGrantWelcome).Count(&n).Error
	return n > 0, wrap("welcome granted", err)
}
