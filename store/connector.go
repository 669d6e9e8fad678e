package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// CompanyIDByHandle returns the id of the company with a handle, by the
// handle alone: what the authorization step needs before it can make a
// scope (the connector names businesses by handle or id).
func (s *Store) CompanyIDByHandle(ctx context.Context, handle string) (string, error) {
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
func (s *Store) WaitingQuestions(ctx context.Context, cong ConglomerateScope, companyIDs []string) (map[string]string, error) {
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

// RateWindow is one window of a counted limit: at most Limit calls per
// Every, counted under Name.
type RateWindow struct {
	Name  string
	Every time.Duration
	Limit int64
}

// ErrRateLimited is CountCall's answer when a window is full.
var ErrRateLimited = errors.New("store: rate limited")

// CountCall counts one call of the conglomerate against every window, in
// one transaction on rows every replica shares. When a window is full
// nothing is counted and the answer is ErrRateLimited with the time until
// that window ends. Windows are fixed (aligned to Every from the Unix
// epoch); counters of ended windows are deleted as calls come.
func (s *Store) CountCall(ctx context.Context, cong ConglomerateScope, at time.Time, windows []RateWindow) (retryAfter time.Duration, err error) {
	if err := cong.check("count call"); err != nil {
		return 0, err
	}
	at = at.UTC()
	err = s.InTx(ctx, func(tx *Store) error {
		db := tx.db.WithContext(ctx)
		if err := db.Where("conglomerate_id = ? AND expires_at <= ?", cong.id, at).Delete(&rateCounter{}).Error; err != nil {
			return wrap("count call", err)
		}
		for _, w := range windows {
			start := at.Truncate(w.Every)
			row := rateCounter{ConglomerateID: cong.id, Name: w.Name, WindowStart: start, Count: 1, ExpiresAt: start.Add(w.Every)}
			err := db.Clauses(clause.OnConflict{
				Columns:   []clause.Column{{Name: "conglomerate_id"}, {Name: "name"}, {Name: "window_start"}},
				DoUpdates: clause.Assignments(map[string]any{"count": gorm.Expr(tx.existing("rate_counters", "count") + " + 1")}),
			}).Create(&row).Error
			if err != nil {
				return wrap("count call", err)
			}
			var n []int64
			if err := db.Model(&rateCounter{}).Where("conglomerate_id = ? AND name = ? AND window_start = ?", cong.id, w.Name, start).
				Pluck("count", &n).Error; err != nil {
				return wrap("count call", err)
			}
			if len(n) == 1 && n[0] > w.Limit {
				retryAfter = row.ExpiresAt.Sub(at)
				return ErrRateLimited
			}
		}
		return nil
	})
	return retryAfter, err
}

// rateCounter is a row of rate_counters.
type rateCounter struct {
	ConglomerateID string    `gorm:"primaryKey;size:36"`
	Name           string    `gorm:"primaryKey;size:64"`
	WindowStart    time.Time `gorm:"primaryKey"`
	Count          int64
	ExpiresAt      time.Time
}

func (rateCounter) TableName() string { return "rate_counters" }
