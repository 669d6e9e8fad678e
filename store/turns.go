package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// activeTurnStatuses are the statuses of a turn that has not ended.
var activeTurnStatuses = []models.TurnStatus{models.TurnQueued, models.TurnRunning}

// activeTurnsIndexed is the condition of the partial index over a
// company's turns that have not ended (migration 0038), written as the
// index has it: a query that carries it may read that index.
const activeTurnsIndexed = "status IN ('queued', 'running')"

// TurnCompanyID returns the company of a turn, by the turn's id alone: what
// the authorization step needs before it can make a scope.
func (s Turns) TurnCompanyID(ctx context.Context, turnID string) (string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Model(&models.Turn{}).Where("id = ?", turnID).Limit(1).Pluck("company_id", &ids).Error
	if err != nil {
		return "", wrap("turn company", err)
	}
	if len(ids) == 0 {
		return "", wrap("turn company", models.ErrNotFound)
	}
	return ids[0], nil
}

// ErrTurnKeyExists is CreateTurn's answer, with the stored turn, when the
// company has a turn with the new turn's idempotency key already (a
// concurrent send with the same key won): nothing was created.
var ErrTurnKeyExists = errors.New("store: a turn with this idempotency key exists")

// ErrTurnActive is CreateTurn's answer, with the company's turn that has
// not ended, when it has one: a company runs one turn at a time (a unique
// index over its queued and running turns, migration 0038), and nothing
// was created.
var ErrTurnActive = errors.New("store: the company has a turn that has not ended")

// CreateTurn stores a queued turn of the scope's company with the user's
// message (step 0 of the turn) in one transaction. A turn with an
// idempotency key the company used already is not created: the stored one
// is returned with ErrTurnKeyExists. Neither is a turn of a company whose
// earlier turn is queued or running: that one is returned with
// ErrTurnActive.
func (s Turns) CreateTurn(ctx context.Context, c CompanyScope, t models.Turn, first []models.ContentBlock) (models.Turn, error) {
	if err := c.check("create turn"); err != nil {
		return t, err
	}
	at := now()
	t.CompanyID, t.ConglomerateID, t.Status, t.CreatedAt, t.UpdatedAt = c.id, c.conglomerateID, models.TurnQueued, at, at
	for attempt := 0; ; attempt++ {
		err := s.store().InTx(ctx, func(tx *Store) error {
			if err := tx.db.WithContext(ctx).Create(&t).Error; err != nil {
				return wrap("create turn", err)
			}
			m := models.TurnMessage{TurnID: t.ID, SessionID: t.SessionID, Role: models.RoleUser, Content: first, CreatedAt: at}
			return wrap("create turn", tx.db.WithContext(ctx).Create(&m).Error)
		})
		if !errors.Is(err, models.ErrDuplicate) {
			return t, err
		}
		// Which index refused it is read after the rollback (a failed
		// statement ends a Postgres transaction): the key first, as a
		// retried message answers its turn even while that turn runs.
		if t.IdempotencyKey != nil {
			stored, gerr := s.TurnByIdempotencyKey(ctx, c, *t.IdempotencyKey)
			if gerr == nil {
				return stored, ErrTurnKeyExists
			}
			if !errors.Is(gerr, models.ErrNotFound) {
				return t, gerr
			}
		}
		active, gerr := s.LatestTurn(ctx, c, true)
		if gerr == nil {
			return active, ErrTurnActive
		}
		// The turn that refused this one ended meanwhile: try again, once.
		if !errors.Is(gerr, models.ErrNotFound) || attempt > 0 {
			return t, err
		}
	}
}

// TurnByIdempotencyKey returns the turn of the scope's company that a
// message with the key started, or models.ErrNotFound.
func (s Turns) TurnByIdempotencyKey(ctx context.Context, c CompanyScope, key string) (models.Turn, error) {
	var t models.Turn
	if err := c.check("turn by key"); err != nil {
		return t, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ? AND idempotency_key = ?", c.id, key).Take(&t).Error
	return t, wrap("turn by key", err)
}

// GetTurn returns a turn of the scope's company, or models.ErrNotFound.
func (s Turns) GetTurn(ctx context.Context, c CompanyScope, turnID string) (models.Turn, error) {
	var t models.Turn
	if err := c.check("get turn"); err != nil {
		return t, err
	}
	err := s.db.WithContext(ctx).Where("id = ? AND company_id = ?", turnID, c.id).Take(&t).Error
	return t, wrap("get turn", err)
}

// TurnCursor pages turns newest first: the turns created before
// (CreatedAt, ID).
type TurnCursor struct {
	CreatedAt time.Time
	ID        string
}

// ListTurns returns up to limit turns of the scope's company, newest first,
// before the cursor when one is given.
func (s Turns) ListTurns(ctx context.Context, c CompanyScope, before *TurnCursor, limit int) ([]models.Turn, error) {
	if err := c.check("list turns"); err != nil {
		return nil, err
	}
	q := s.db.WithContext(ctx).Where("company_id = ?", c.id)
	if before != nil { // ids are time-ordered (version 7)
		q = q.Where("id < ?", before.ID)
	}
	turns := []models.Turn{}
	err := q.Order("id DESC").Limit(limit).Find(&turns).Error
	return turns, wrap("list turns", err)
}

// LatestTurn returns the company's newest turn; models.ErrNotFound when it
// has none. activeOnly limits it to a queued or running one.
func (s Turns) LatestTurn(ctx context.Context, c CompanyScope, activeOnly bool) (models.Turn, error) {
	var t models.Turn
	if err := c.check("latest turn"); err != nil {
		return t, err
	}
	q := s.db.WithContext(ctx).Where("company_id = ?", c.id)
	if activeOnly {
		q = q.Where("status IN ?", activeTurnStatuses)
	}
	err := q.Order("created_at DESC, id DESC").Take(&t).Error
	return t, wrap("latest turn", err)
}

// MarkTurnRunning moves a queued turn to running (its workflow picked it
// up) and returns the turn as it now is; a turn that already ended is
// returned unchanged.
func (s Turns) MarkTurnRunning(ctx context.Context, c CompanyScope, turnID string, at time.Time) (models.Turn, error) {
	if err := c.check("start turn"); err != nil {
		return models.Turn{}, err
	}
	err := s.db.WithContext(ctx).Model(&models.Turn{}).
		Where("id = ? AND company_id = ? AND status IN ?", turnID, c.id, activeTurnStatuses).
		Updates(map[string]any{"status": models.TurnRunning, "started_at": gorm.Expr("COALESCE(started_at, ?)", at), "updated_at": at}).Error
	if err != nil {
		return models.Turn{}, wrap("start turn", err)
	}
	return s.GetTurn(ctx, c, turnID)
}

// SetTurnText stores the agent's text so far of a running turn.
func (s Turns) SetTurnText(ctx context.Context, c CompanyScope, turnID, text string) error {
	if err := c.check("turn text"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Model(&models.Turn{}).
		Where("id = ? AND company_id = ? AND status = ?", turnID, c.id, models.TurnRunning).
		Updates(map[string]any{"text": text, "updated_at": now()}).Error
	return wrap("turn text", err)
}

// FinishTurn ends a turn once: the first result written wins, and the
// event is recorded with it. It returns the turn as stored and whether this
// call ended it.
func (s Turns) FinishTurn(ctx context.Context, c CompanyScope, turnID, text string, r models.TurnResult, event models.ActivityInput) (models.Turn, bool, error) {
	if err := c.check("finish turn"); err != nil {
		return models.Turn{}, false, err
	}
	ended := false
	err := s.store().InTx(ctx, func(tx *Store) error {
		res := tx.db.WithContext(ctx).Model(&models.Turn{}).
			Where("id = ? AND company_id = ? AND status IN ?", turnID, c.id, activeTurnStatuses).
			Updates(map[string]any{"status": r.Status, "text": text, "answer": r.Answer, "question": r.Question,
				"error_code": r.ErrorCode, "error_detail": r.ErrorDetail, "credits_cost": r.CreditsCost,
				"started_at": gorm.Expr("COALESCE(started_at, ?)", r.EndedAt), "ended_at": r.EndedAt, "updated_at": r.EndedAt})
		if res.Error != nil {
			return wrap("finish turn", res.Error)
		}
		if ended = res.RowsAffected == 1; !ended {
			return nil
		}
		event.Subject = turnID
		event.Data = withData(event.Data, "turn_id", turnID, "status", string(r.Status))
		return tx.Companies().RecordActivity(ctx, c, event)
	})
	if err != nil {
		return models.Turn{}, false, err
	}
	t, err := s.GetTurn(ctx, c, turnID)
	return t, ended, err
}

// SessionMessages returns the conversation of a session of the scope's
// company in order: by turn (time-ordered ids), step and part.
func (s Turns) SessionMessages(ctx context.Context, c CompanyScope, sessionID string) ([]models.TurnMessage, error) {
	if err := c.check("session messages"); err != nil {
		return nil, err
	}
	msgs := []models.TurnMessage{}
	err := s.db.WithContext(ctx).Where("session_id = ? AND turn_id IN (?)", sessionID,
		s.db.Model(&models.Turn{}).Select("id").Where("company_id = ? AND session_id = ?", c.id, sessionID)).
		Order("turn_id, step, part").Find(&msgs).Error
	return msgs, wrap("session messages", err)
}

// PutTurnMessage stores a message of a turn once: when (turn, step, part)
// is stored already, the stored one is returned and created is false (an
// activity retried after a crash finds its own earlier work).
func (s Turns) PutTurnMessage(ctx context.Context, c CompanyScope, m models.TurnMessage) (stored models.TurnMessage, created bool, err error) {
	if err := c.check("put turn message"); err != nil {
		return m, false, err
	}
	t, err := s.GetTurn(ctx, c, m.TurnID)
	if err != nil {
		return m, false, err
	}
	m.SessionID = t.SessionID
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now()
	}
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&m)
	if res.Error != nil {
		return m, false, wrap("put turn message", res.Error)
	}
	if res.RowsAffected == 1 {
		return m, true, nil
	}
	stored, err = s.GetTurnMessage(ctx, c, m.TurnID, m.Step, m.Part)
	return stored, false, err
}

// PutTurnAnswer stores a model step's answer as PutTurnMessage does and,
// in the same transaction, the running turn's text so far (when text is
// not empty): one commit instead of two per model step.
func (s Turns) PutTurnAnswer(ctx context.Context, c CompanyScope, m models.TurnMessage, text string) (stored models.TurnMessage, created bool, err error) {
	if err := c.check("put turn message"); err != nil {
		return m, false, err
	}
	err = s.store().InTx(ctx, func(tx *Store) error {
		var err error
		stored, created, err = tx.Turns().PutTurnMessage(ctx, c, m)
		if err != nil || text == "" {
			return err
		}
		return tx.Turns().SetTurnText(ctx, c, m.TurnID, text)
	})
	return stored, created, err
}

// GetTurnMessage returns one message of a turn of the scope's company, or
// models.ErrNotFound.
func (s Turns) GetTurnMessage(ctx context.Context, c CompanyScope, turnID string, step, part int) (models.TurnMessage, error) {
	var m models.TurnMessage
	if err := c.check("get turn message"); err != nil {
		return m, err
	}
	err := s.db.WithContext(ctx).Where("turn_id = ? AND step = ? AND part = ? AND turn_id IN (?)", turnID, step, part,
		s.db.Model(&models.Turn{}).Select("id").Where("id = ? AND company_id = ?", turnID, c.id)).Take(&m).Error
	return m, wrap("get turn message", err)
}

// RunCredits is what a run was charged: the usage entries of the ledger
// with its run id, summed.
func (s Turns) RunCredits(ctx context.Context, cong ConglomerateScope, runID string) (int64, error) {
	if err := cong.check("run credits"); err != nil {
		return 0, err
	}
	var sum *int64
	err := s.db.WithContext(ctx).Model(&models.CreditLedgerGroup{}).Select("SUM(amount)").
		Where("conglomerate_id = ? AND run_id = ?", cong.id, runID).Scan(&sum).Error
	if err != nil || sum == nil {
		return 0, wrap("run credits", err)
	}
	return -*sum, nil
}

// ScopedTurn is a turn with its company's and its account's scopes: what
// the worker's sweeper acts on.
type ScopedTurn struct {
	Turn    models.Turn
	Scope   CompanyScope
	Account ConglomerateScope
}

// UnstartedTurns returns queued turns created before the time that no
// workflow has marked running (a crash between the commit and the start).
func (s Turns) UnstartedTurns(ctx context.Context, createdBefore time.Time, limit int) ([]ScopedTurn, error) {
	return s.scopedTurns(ctx, "unstarted turns", limit, "status = ? AND started_at IS NULL AND created_at < ?", models.TurnQueued, createdBefore)
}

// IdleRunningTurns returns up to limit running turns whose row has not
// changed since the time, oldest first, after the cursor when one is
// given (a sweep goes on where the last one stopped, so turns that stay
// idle legitimately do not hide the ones after them).
func (s Turns) IdleRunningTurns(ctx context.Context, updatedBefore time.Time, after *TurnCursor, limit int) ([]ScopedTurn, error) {
	if after != nil {
		return s.scopedTurns(ctx, "idle turns", limit, "status = ? AND updated_at < ? AND (created_at > ? OR created_at = ? AND id > ?)",
			models.TurnRunning, updatedBefore, after.CreatedAt, after.CreatedAt, after.ID)
	}
	return s.scopedTurns(ctx, "idle turns", limit, "status = ? AND updated_at < ?", models.TurnRunning, updatedBefore)
}

// scopedTurns reads turns that have not ended: the literal condition is
// the one of the partial index idx_turns_one_active (migration 0038), so
// the sweeper's reads scan the active turns, not the table.
func (s Turns) scopedTurns(ctx context.Context, op string, limit int, where string, args ...any) ([]ScopedTurn, error) {
	var turns []models.Turn
	err := s.db.WithContext(ctx).Where(activeTurnsIndexed).Where(where, args...).Order("created_at, id").Limit(limit).Find(&turns).Error
	if err != nil {
		return nil, wrap(op, err)
	}
	out := make([]ScopedTurn, 0, len(turns))
	for _, t := range turns {
		out = append(out, ScopedTurn{Turn: t, Scope: CompanyScope{id: t.CompanyID, conglomerateID: t.ConglomerateID},
			Account: ConglomerateScope{id: t.ConglomerateID}})
	}
	return out, nil
}

// SetCompanyChat switches whether the company's agent takes messages.
func (s Turns) SetCompanyChat(ctx context.Context, c CompanyScope, enabled bool) error {
	if err := c.check("company chat"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Model(&models.Company{}).Where("id = ?", c.id).
		Updates(map[string]any{"chat_disabled": !enabled, "updated_at": now()}).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return wrap("company chat", models.ErrNotFound)
	}
	return wrap("company chat", err)
}

// CompanyReady reports whether every resource of the scope's company is
// provisioned and ready.
func (s Turns) CompanyReady(ctx context.Context, c CompanyScope) (bool, error) {
	rs, err := s.store().Companies().ListResources(ctx, c)
	if err != nil {
		return false, err
	}
	return allReady(rs), nil
}

// SessionExists reports whether the scope's company has a turn in the
// session.
func (s Turns) SessionExists(ctx context.Context, c CompanyScope, sessionID string) (bool, error) {
	if err := c.check("session exists"); err != nil {
		return false, err
	}
	var n int64
	err := s.db.WithContext(ctx).Model(&models.Turn{}).Where("company_id = ? AND session_id = ?", c.id, sessionID).Limit(1).Count(&n).Error
	return n > 0, wrap("session exists", err)
}
