package models

import (
	"time"

	"gorm.io/gorm"
)

// DevIdPUser is a local user of the embedded development identity
// provider. Its ID is the subject the provider asserts, so it must survive
// restarts.
type DevIdPUser struct {
	ID           string `gorm:"primaryKey;size:36"`
	Email        string `gorm:"size:320;not null;uniqueIndex:idx_dev_idp_users_email"`
	Name         string `gorm:"size:200;not null"`
	PasswordHash []byte `gorm:"not null"`
	CreatedAt    time.Time
}

func (u *DevIdPUser) BeforeCreate(*gorm.DB) error { ensureID(&u.ID); return nil }

// TableName pins the table name (gorm would derive dev_id_p_users).
func (DevIdPUser) TableName() string { return "dev_idp_users" }
