package store

import (
	"context"
	"math"
	"time"

	"gorm.io/gorm/clause"
)

// TokenBucket is a rate limit as a token bucket: it holds Burst tokens
// and refills PerMinute of them a minute; each request takes one. Name
// names the limit (e.g. file_uploads/company).
type TokenBucket struct {
	Name      string
	PerMinute float64
	Burst     float64
}

// rateBucket is a row of rate_buckets: the tokens left in one key's bucket
// at UpdatedAt, and when it is full again (FullAt; a full bucket limits
// nothing, so its row may go). What is limited (an address, a company) is
// kept only as its hash.
type rateBucket struct {
	Name      string `gorm:"primaryKey;size:64"`
	KeyHash   string `gorm:"primaryKey;size:64"`
	Tokens    float64
	UpdatedAt time.Time
	FullAt    time.Time
}

func (rateBucket) TableName() string { return "rate_buckets" }

// TakeToken takes one token from key's bucket at at, in one transaction
// on a row every replica shares: the bucket is refilled for the time since
// its last use, then one token is taken. An empty bucket takes nothing and
// answers ErrRateLimited with the time until a token is there. Requests of
// one key are serialized (a row lock on Postgres; SQLite transactions are
// IMMEDIATE). Buckets of the limit that are full again are deleted as
// requests come, so the table holds only buckets that limit something.
func (s *Store) TakeToken(ctx context.Context, b TokenBucket, key string, at time.Time) (retryAfter time.Duration, err error) {
	granted, retryAfter, err := s.TakeTokens(ctx, b, key, 1, at)
	if err == nil && granted == 0 {
		err = ErrRateLimited
	}
	return retryAfter, err
}

// TakeTokens is TakeToken for up to n tokens at once (a process taking
// its share of a limit in chunks, service/analytics): it takes as many
// whole tokens as the bucket holds, at most n, in the same one
// transaction. granted < n (possibly 0, not an error) comes with the time
// until the bucket holds the rest (at most the burst).
func (s *Store) TakeTokens(ctx context.Context, b TokenBucket, key string, n int, at time.Time) (granted int, retryAfter time.Duration, err error) {
	if n <= 0 {
		return 0, 0, nil
	}
	at = at.UTC()
	hash := attemptKey(key)
	perSecond := b.PerMinute / 60
	err = s.InTx(ctx, func(tx *Store) error {
		granted, retryAfter = 0, 0
		db := tx.db.WithContext(ctx)
		if err := db.Where("name = ? AND full_at <= ?", b.Name, at).Delete(&rateBucket{}).Error; err != nil {
			return wrap("take tokens", err)
		}
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&rateBucket{Name: b.Name, KeyHash: hash, Tokens: b.Burst, UpdatedAt: at, FullAt: at}).Error; err != nil {
			return wrap("take tokens", err)
		}
		q := db.Where("name = ? AND key_hash = ?", b.Name, hash)
		if tx.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		var row rateBucket
		if err := q.Take(&row).Error; err != nil {
			return wrap("take tokens", err)
		}
		tokens := row.Tokens
		if elapsed := at.Sub(row.UpdatedAt.UTC()); elapsed > 0 {
			tokens = math.Min(b.Burst, tokens+elapsed.Seconds()*perSecond)
		}
		granted = int(math.Min(float64(n), math.Floor(tokens)))
		if granted < n {
			rest := math.Min(float64(n-granted), b.Burst)
			retryAfter = time.Duration((rest - (tokens - float64(granted))) / perSecond * float64(time.Second))
		}
		if granted == 0 {
			return nil
		}
		tokens -= float64(granted)
		updatedAt := at
		if row.UpdatedAt.UTC().After(at) { // another replica's clock is ahead: keep its instant
			updatedAt = row.UpdatedAt.UTC()
		}
		fullAt := updatedAt.Add(time.Duration((b.Burst - tokens) / perSecond * float64(time.Second)))
		return wrap("take tokens", db.Model(&rateBucket{}).Where("name = ? AND key_hash = ?", b.Name, hash).
			Updates(map[string]any{"tokens": tokens, "updated_at": updatedAt, "full_at": fullAt}).Error)
	})
	if err != nil {
		return 0, 0, err
	}
	return granted, retryAfter, nil
}
