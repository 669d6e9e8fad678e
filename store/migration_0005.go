package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0005CompanyResources creates the provisioning state of each
// company's repository, database and hosting project.
func migration0005CompanyResources() *gormigrate.Migration {
	type company struct {
		ID string `gorm:"primaryKey;size:36"`
	}
	type companyResource struct {
		CompanyID string    `gorm:"primaryKey;size:36"`
		Company   *company  `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
		Kind      string    `gorm:"primaryKey;size:16"`
		Status    string    `gorm:"size:16;not null"`
		Ref       string    `gorm:"size:500;not null"`
		LastError string    `gorm:"type:text;not null"`
		Attempts  int       `gorm:"not null"`
		UpdatedAt time.Time `gorm:"not null"`
	}
	return &gormigrate.Migration{
		ID:       "0005_company_resources",
		Migrate:  func(tx *gorm.DB) error { return tx.Migrator().CreateTable(&companyResource{}) },
		Rollback: func(tx *gorm.DB) error { return tx.Migrator().DropTable("company_resources") },
	}
}
