package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// AttemptWindow is one window of an attempt limit: at most Limit attempts
// per Every, counted under Name (the limit and its window, e.g.
// device_start/1m).
type AttemptWindow struct {
	Name  string
	Every time.Duration
	Limit int64
}

// attemptCounter is a row of attempt_counters. What is counted (an
// address, a mailbox) is kept only as its hash.
type attemptCounter struct {
	Name        string    `gorm:"primaryKey;size:64"`
	KeyHash     string    `gorm:"primaryKey;size:64"`
	WindowStart time.Time `gorm:"primaryKey"`
	Count       int64
	ExpiresAt   time.Time
}

func (attemptCounter) TableName() string { return "attempt_counters" }

func attemptKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// CountAttempt counts one attempt of key against every window, in one
// transaction on rows every replica shares. When a window is already full
// the attempt is not counted and the answer is ErrRateLimited with the
// time until that window ends. Windows are fixed (aligned to Every from
// the Unix epoch); counters of ended windows (of any key) are deleted as
// attempts come.
func (s Identity) CountAttempt(ctx context.Context, key string, at time.Time, windows ...AttemptWindow) (retryAfter time.Duration, err error) {
	at = at.UTC()
	hash := attemptKey(key)
	err = s.store().InTx(ctx, func(tx *Store) error {
		db := tx.db.WithContext(ctx)
		for _, w := range windows {
			// Ended windows of every key go, so the table holds only live
			// windows whoever stops coming back.
			if err := db.Where("name = ? AND expires_at <= ?", w.Name, at).Delete(&attemptCounter{}).Error; err != nil {
				return wrap("count attempt", err)
			}
			start := at.Truncate(w.Every)
			row := attemptCounter{Name: w.Name, KeyHash: hash, WindowStart: start, Count: 1, ExpiresAt: start.Add(w.Every)}
			err := db.Clauses(clause.OnConflict{
				Columns:   []clause.Column{{Name: "name"}, {Name: "key_hash"}, {Name: "window_start"}},
				DoUpdates: clause.Assignments(map[string]any{"count": gorm.Expr(tx.existing("attempt_counters", "count") + " + 1")}),
			}).Create(&row).Error
			if err != nil {
				return wrap("count attempt", err)
			}
			var n []int64
			if err := db.Model(&attemptCounter{}).Where("name = ? AND key_hash = ? AND window_start = ?", w.Name, hash, start).
				Pluck("count", &n).Error; err != nil {
				return wrap("count attempt", err)
			}
			if len(n) == 1 && n[0] > w.Limit {
				retryAfter = row.ExpiresAt.Sub(at)
				return ErrRateLimited // rolls the count back
			}
		}
		return nil
	})
	return retryAfter, err
}

// AttemptsFull reports whether one of the windows of key is full at at,
// without counting anything, and if so the time until it ends.
func (s Identity) AttemptsFull(ctx context.Context, key string, at time.Time, windows ...AttemptWindow) (retryAfter time.Duration, full bool, err error) {
	at = at.UTC()
	hash := attemptKey(key)
	for _, w := range windows {
		start := at.Truncate(w.Every)
		var n []int64
		if err := s.db.WithContext(ctx).Model(&attemptCounter{}).Where("name = ? AND key_hash = ? AND window_start = ?", w.Name, hash, start).
			Pluck("count", &n).Error; err != nil {
			return 0, false, wrap("read attempts", err)
		}
		if len(n) == 1 && n[0] >= w.Limit {
			return start.Add(w.Every).Sub(at), true, nil
		}
	}
	return 0, false, nil
}
