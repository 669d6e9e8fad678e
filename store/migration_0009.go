package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0009WebLoginCodes creates the one-time codes browser sign-in
// hands the frontend instead of a session token (stored hashed).
func migration0009WebLoginCodes() *gormigrate.Migration {
	type user struct {
		ID string `gorm:"primaryKey;size:36"`
	}
	type webLoginCode struct {
		CodeHash  string    `gorm:"primaryKey;size:64"`
		UserID    string    `gorm:"size:36;not null"`
		User      *user     `gorm:"foreignKey:UserID;constraint:OnDelete:CASCADE"`
		CreatedAt time.Time `gorm:"not null"`
		ExpiresAt time.Time `gorm:"not null"`
		UsedAt    *time.Time
	}
	return &gormigrate.Migration{
		ID: "0009_web_login_codes",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&webLoginCode{})
		},
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("web_login_codes") },
	}
}
