package models

import (
	"time"

	"gorm.io/gorm"
)

// User is a person who signs in through the external identity provider.
//
// Users are soft-deleted (DeletedAt): the row stays so that NormalizedEmail
// can block a deleted account from signing up again, and so that rows that
// point at the user keep a valid target.
type User struct {
	ID    string `gorm:"primaryKey;size:36"`
	Email string `gorm:"size:320;not null"`
	// NormalizedEmail is the lower-cased mailbox used for look-ups and for
	// refusing re-signup of deleted accounts; it is indexed but not unique,
	// because deleted rows keep theirs.
	NormalizedEmail string `gorm:"size:320;not null;index:idx_users_normalized_email"`
	Name            string `gorm:"size:200;not null"`
	// Issuer and Subject identify the user at the identity provider ("iss"
	// and "sub" of its ID token). They are unique together; both are nil for
	// a user without an external identity, and NULLs never collide in the
	// unique index on either SQLite or Postgres.
	Issuer    *string `gorm:"size:255;uniqueIndex:idx_users_identity,priority:1"`
	Subject   *string `gorm:"size:255;uniqueIndex:idx_users_identity,priority:2"`
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt gorm.DeletedAt `gorm:"index:idx_users_deleted_at"`
}

// BeforeCreate gives a new user its UUID.
func (u *User) BeforeCreate(*gorm.DB) error {
	ensureID(&u.ID)
	return nil
}
