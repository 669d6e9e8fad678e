package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0026PageSessionsAndAttempts makes the SSO cookie of holdco's
// own pages an opaque session id (web_sessions.cookie_hash: the hash of
// the cookie's value; such a session is never a REST bearer) and adds the
// counters of the sign-in rate limits (per limit, key and window), shared
// by every replica.
func migration0026PageSessionsAndAttempts() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0026_page_sessions_attempts",
		Migrate: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.AddColumn(&m0026WebSession{}, "CookieHash"); err != nil {
				return err
			}
			if err := m.CreateIndex(&m0026WebSession{}, "idx_web_sessions_cookie_hash"); err != nil {
				return err
			}
			return m.CreateTable(&m0026AttemptCounter{})
		},
		Rollback: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.DropTable("attempt_counters"); err != nil {
				return err
			}
			if err := m.DropIndex(&m0026WebSession{}, "idx_web_sessions_cookie_hash"); err != nil {
				return err
			}
			return m.DropColumn(&m0026WebSession{}, "CookieHash")
		},
	}
}

type m0026WebSession struct {
	ID         string  `gorm:"primaryKey;size:36"`
	CookieHash *string `gorm:"size:64;uniqueIndex:idx_web_sessions_cookie_hash"`
}

func (m0026WebSession) TableName() string { return "web_sessions" }

type m0026AttemptCounter struct {
	// Name is the limit and its window, e.g. device_start/1m.
	Name string `gorm:"primaryKey;size:64"`
	// KeyHash is the SHA-256 of what is counted (an address, a mailbox).
	KeyHash     string    `gorm:"primaryKey;size:64"`
	WindowStart time.Time `gorm:"primaryKey"`
	Count       int64     `gorm:"not null"`
	ExpiresAt   time.Time `gorm:"not null;index:idx_attempt_counters_expires"`
}

func (m0026AttemptCounter) TableName() string { return "attempt_counters" }
