package store

import (
	"context"
	"time"
)

// lease is a row of leases: the process (Holder) that runs the background
// sweep Name until ExpiresAt, unless it renews it.
type lease struct {
	Name      string `gorm:"primaryKey;size:64"`
	Holder    string `gorm:"size:128;not null"`
	ExpiresAt time.Time
}

func (lease) TableName() string { return "leases" }

// TakeLease takes the lease name for holder until at+ttl, or renews it
// when holder already holds it, in one conditional statement: it answers
// true when holder holds the lease now, false when another holder's lease
// is still live (not expired at at). A holder that stops renewing loses the
// lease at its expiry. Holders compare expiries with their own clocks, so
// the clocks of a cluster must agree to well within ttl.
func (s *Store) TakeLease(ctx context.Context, name, holder string, at time.Time, ttl time.Duration) (bool, error) {
	at = at.UTC()
	res := s.db.WithContext(ctx).Exec(
		"INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?) "+
			"ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at "+
			"WHERE "+s.existing("leases", "holder")+" = excluded.holder OR "+s.existing("leases", "expires_at")+" <= ?",
		name, holder, at.Add(ttl), at)
	if res.Error != nil {
		return false, wrap("take lease", res.Error)
	}
	return res.RowsAffected == 1, nil
}

// ReleaseLease gives the lease name up if holder holds it, so another
// process takes it at its next try rather than at the expiry.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	return wrap("release lease", s.db.WithContext(ctx).Where("name = ? AND holder = ?", name, holder).Delete(&lease{}).Error)
}

// LeaseHolder says who holds the lease name at at ("" when no one: never
// taken, released or expired).
func (s *Store) LeaseHolder(ctx context.Context, name string, at time.Time) (string, error) {
	var holders []string
	err := s.db.WithContext(ctx).Model(&lease{}).Where("name = ? AND expires_at > ?", name, at.UTC()).Pluck("holder", &holders).Error
	if err != nil || len(holders) == 0 {
		return "", wrap("read lease", err)
	}
	return holders[0], nil
}
