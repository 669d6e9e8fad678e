package store

import (
	"context"
	"errors"
	"time"

	"holdco/models"
)

// CompanyIDByHandle returns the id of the company with a handle, by the
// handle alone: what the authorization step needs before it can make a
// scope (the connector names businesses by handle or id).
func (s Companies) CompanyIDByHandle(ctx context.Context, handle string) (string, error) {
	var ids []string
	err := s.db.WithContext(ctx).Model(&models.Company{}).Where("handle = ?", handle).Limit(1).Pluck("id", &ids).Error
	if err != nil {
		return "", wrap("company by handle", err)
	}
	if len(ids) == 0 {
		return "", wrap("company by handle", models.ErrNotFound)
	}
	return ids[0], nil
}

// WaitingQuestions returns, for each of the conglomerate's companies whose
// newest turn waits for the user's answer, that turn's question, in one
// query.
func (s Companies) WaitingQuestions(ctx context.Context, cong ConglomerateScope, companyIDs []string) (map[string]string, error) {
	if err := cong.check("waiting questions"); err != nil {
		return nil, err
	}
	out := map[string]string{}
	if len(companyIDs) == 0 {
		return out, nil
	}
	newest := s.db.Model(&models.Turn{}).Select("company_id, MAX(created_at) AS created_at").
		Where("conglomerate_id = ? AND company_id IN ?", cong.id, companyIDs).Group("company_id")
	var rows []struct {
		CompanyID string
		Question  string
	}
	err := s.db.WithContext(ctx).Table("turns AS t").Select("t.company_id, t.question").
		Joins("JOIN (?) AS n ON n.company_id = t.company_id AND n.created_at = t.created_at", newest).
		Where("t.conglomerate_id = ? AND t.status = ?", cong.id, models.TurnWaiting).Scan(&rows).Error
	if err != nil {
		return nil, wrap("waiting questions", err)
	}
	for _, r := range rows {
		out[r.CompanyID] = r.Question
	}
	return out, nil
}

// RateWindow is one window of a counted limit: at most Limit calls in any
// span of Every, counted under Name.
type RateWindow struct {
	Name  string
	Every time.Duration
	Limit int64
}

// ErrRateLimited is CountCall's answer when a window is full.
var ErrRateLimited = errors.New("store: rate limited")

// CountCall counts one call of the conglomerate against every window, in
// one transaction on rows every replica shares. Windows slide: a call is
// admitted when fewer than Limit calls were admitted in the Every before
// it (so no span of Every ever holds more than Limit, whatever the clock
// says), and each admitted call is one row per window. When a window is
// full nothing is counted and the answer is ErrRateLimited with the time
// until enough of that window's calls have aged out. Calls of the same
// conglomerate are serialized (a transaction advisory lock on Postgres;
// SQLite transactions are IMMEDIATE); rows older than their window are
// deleted as calls come.
func (s Companies) CountCall(ctx context.Context, cong ConglomerateScope, at time.Time, windows []RateWindow) (retryAfter time.Duration, err error) {
	if err := cong.check("count call"); err != nil {
		return 0, err
	}
	at = at.UTC()
	err = s.store().InTx(ctx, func(tx *Store) error {
		limited := false
		db := tx.db.WithContext(ctx)
		if tx.dialect == DialectPostgres {
			if err := db.Exec("SELECT pg_advisory_xact_lock(hashtext('holdco.rate.' || ?))", cong.id).Error; err != nil {
				return wrap("count call: lock", err)
			}
		}
		for _, w := range windows {
			since := at.Add(-w.Every)
			if err := db.Where("conglomerate_id = ? AND name = ? AND at <= ?", cong.id, w.Name, since).Delete(&rateCall{}).Error; err != nil {
				return wrap("count call", err)
			}
			var n int64
			if err := db.Model(&rateCall{}).Where("conglomerate_id = ? AND name = ? AND at > ?", cong.id, w.Name, since).Count(&n).Error; err != nil {
				return wrap("count call", err)
			}
			if n < w.Limit {
				continue
			}
			// Full: the call that must age out first is the (n-Limit+1)th
			// oldest of the window.
			var oldest []time.Time
			if err := db.Model(&rateCall{}).Where("conglomerate_id = ? AND name = ? AND at > ?", cong.id, w.Name, since).
				Order("at").Offset(int(n-w.Limit)).Limit(1).Pluck("at", &oldest).Error; err != nil {
				return wrap("count call", err)
			}
			wait := w.Every
			if len(oldest) == 1 {
				wait = oldest[0].UTC().Add(w.Every).Sub(at)
			}
			retryAfter, limited = max(retryAfter, wait), true
		}
		if limited {
			return ErrRateLimited
		}
		for _, w := range windows {
			if err := db.Create(&rateCall{ConglomerateID: cong.id, Name: w.Name, At: at}).Error; err != nil {
				return wrap("count call", err)
			}
		}
		return nil
	})
	return retryAfter, err
}

// rateCall is a row of rate_calls: one admitted call in one window.
type rateCall struct {
	ID             int64 `gorm:"primaryKey;autoIncrement"`
	ConglomerateID string
	Name           string
	At             time.Time
}

func (rateCall) TableName() string { return "rate_calls" }
