package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0017Prospects adds a company's prospects (leads), listed by
// (company, created_at), with one row per lower-cased email.
func migration0017Prospects() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0017_prospects",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0017Prospect{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("company_prospects")
		},
	}
}

type m0017Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0017Company) TableName() string { return "companies" }

type m0017Prospect struct {
	ID           string        `gorm:"primaryKey;size:36"`
	CompanyID    string        `gorm:"size:36;not null;index:idx_prospects_company,priority:1;uniqueIndex:idx_prospects_email,priority:1"`
	Company      *m0017Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	Name         string        `gorm:"size:200;not null"`
	Email        string        `gorm:"size:320;not null"`
	EmailKey     *string       `gorm:"size:320;uniqueIndex:idx_prospects_email,priority:2"`
	Organization string        `gorm:"size:200;not null"`
	Status       string        `gorm:"size:16;not null"`
	Notes        string        `gorm:"type:text;not null"`
	Source       string        `gorm:"size:500;not null"`
	CreatedAt    time.Time     `gorm:"not null;index:idx_prospects_company,priority:2"`
	UpdatedAt    time.Time     `gorm:"not null"`
}

func (m0017Prospect) TableName() string { return "company_prospects" }
