package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0015Tasks adds a company's tasks, listed by (company, status,
// created_at, id): the company's list filtered by status and the
// dashboard's open tasks read the index newest first.
func migration0015Tasks() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0015_tasks",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0015Task{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("company_tasks")
		},
	}
}

type m0015Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0015Company) TableName() string { return "companies" }

type m0015Task struct {
	ID            string        `gorm:"primaryKey;size:36;index:idx_company_tasks_status,priority:4"`
	CompanyID     string        `gorm:"size:36;not null;index:idx_company_tasks_status,priority:1;index:idx_company_tasks_recent,priority:1"`
	Company       *m0015Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	Title         string        `gorm:"size:200;not null"`
	Description   string        `gorm:"type:text;not null"`
	Status        string        `gorm:"size:16;not null;index:idx_company_tasks_status,priority:2"`
	Priority      string        `gorm:"size:16;not null"`
	CreatedBy     string        `gorm:"size:16;not null"`
	DueAt         *time.Time
	LastRunID     *string   `gorm:"size:36"`
	FailureReason string    `gorm:"size:1000;not null"`
	CreatedAt     time.Time `gorm:"not null;index:idx_company_tasks_status,priority:3;index:idx_company_tasks_recent,priority:2"`
	UpdatedAt     time.Time `gorm:"not null"`
}

func (m0015Task) TableName() string { return "company_tasks" }
