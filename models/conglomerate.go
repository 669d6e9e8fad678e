package models

import (
	"time"

	"gorm.io/gorm"
)

// Conglomerate is the account: it holds the companies, the shared credit
// balance and the account settings. It is hard-deleted, so it has no
// DeletedAt.
type Conglomerate struct {
	ID          string `gorm:"primaryKey;size:36"`
	Name        string `gorm:"size:200;not null"`
	OwnerUserID string `gorm:"size:36;not null;index:idx_conglomerates_owner_user_id"`
	// TrialStartedAt starts the free trial; the trial length is a service
	// rule, not stored.
	TrialStartedAt time.Time `gorm:"not null"`
	// DailyCreditCap limits the credits spent per day across all companies;
	// nil means no cap.
	DailyCreditCap *int64
	// Billing is the plan, subscription, auto top-up and payout state.
	Billing   Billing `gorm:"embedded"`
	CreatedAt time.Time
	UpdatedAt time.Time
}

// BeforeCreate gives a new conglomerate its UUID.
func (c *Conglomerate) BeforeCreate(*gorm.DB) error {
	ensureID(&c.ID)
	return nil
}

// Role is what a member may do in a conglomerate.
type Role string

const (
	RoleOwner  Role = "owner"
	RoleMember Role = "member"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleOwner, RoleMember:
		return true
	}
	return false
}

// Membership says that a user belongs to a conglomerate. It is the table
// every tenant check goes through.
type Membership struct {
	ConglomerateID string `gorm:"primaryKey;size:36"`
	UserID         string `gorm:"primaryKey;size:36;index:idx_memberships_user_id"`
	Role           Role   `gorm:"size:16;not null"`
	CreatedAt      time.Time
}
