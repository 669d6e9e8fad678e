package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0003DevIdPUsers creates the local users of the embedded
// development identity provider.
func migration0003DevIdPUsers() *gormigrate.Migration {
	type devIdPUser struct {
		ID           string    `gorm:"primaryKey;size:36"`
		Email        string    `gorm:"size:320;not null;uniqueIndex:idx_dev_idp_users_email"`
		Name         string    `gorm:"size:200;not null"`
		PasswordHash []byte    `gorm:"not null"`
		CreatedAt    time.Time `gorm:"not null"`
	}
	return &gormigrate.Migration{
		ID:       "0003_dev_idp_users",
		Migrate:  func(tx *gorm.DB) error { return tx.Migrator().CreateTable(&devIdPUser{}) },
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("dev_idp_users") },
	}
}
