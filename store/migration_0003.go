package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0003DevIdPUsers creates the local users of the embedded
// development identity provider.
func migration0003DevIdPUsers() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID:       "0003_dev_idp_users",
		Migrate:  func(tx *gorm.DB) error { return tx.Migrator().CreateTable(&m0003DevIdPUser{}) },
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("dev_idp_users") },
	}
}

// m0003DevIdPUser is the table as migration 0003 creates it. It is declared
// at package level only because a TableName method cannot be declared on a
// type local to a function.
type m0003DevIdPUser struct {
	ID           string    `gorm:"primaryKey;size:36"`
	Email        string    `gorm:"size:320;not null;uniqueIndex:idx_dev_idp_users_email"`
	Name         string    `gorm:"size:200;not null"`
	PasswordHash []byte    `gorm:"not null"`
	CreatedAt    time.Time `gorm:"not null"`
}

func (m0003DevIdPUser) TableName() string { return "dev_idp_users" }
