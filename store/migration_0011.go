package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0011ActivityDocumentsMilestones adds the company's activity
// feed (read newest first by (company, created_at, id)), its documents (one
// per type) and its milestones (one per kind, by the primary key).
func migration0011ActivityDocumentsMilestones() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0011_activity_documents_milestones",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0011ActivityEvent{}, &m0011Document{}, &m0011Milestone{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("company_milestones", "company_documents", "activity_events")
		},
	}
}

type m0011Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0011Company) TableName() string { return "companies" }

type m0011ActivityEvent struct {
	ID        string        `gorm:"primaryKey;size:36;index:idx_activity_events_feed,priority:3"`
	CompanyID string        `gorm:"size:36;not null;index:idx_activity_events_feed,priority:1"`
	Company   *m0011Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	Kind      string        `gorm:"size:40;not null"`
	Actor     string        `gorm:"size:16;not null"`
	Summary   string        `gorm:"size:500;not null"`
	Subject   string        `gorm:"size:255;not null"`
	Data      string        `gorm:"type:text;not null"`
	CreatedAt time.Time     `gorm:"not null;index:idx_activity_events_feed,priority:2"`
}

func (m0011ActivityEvent) TableName() string { return "activity_events" }

type m0011Document struct {
	CompanyID    string        `gorm:"primaryKey;size:36"`
	Company      *m0011Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	DocumentType string        `gorm:"primaryKey;size:64"`
	Title        string        `gorm:"size:200;not null"`
	Content      string        `gorm:"type:text;not null"`
	Visibility   string        `gorm:"size:16;not null"`
	SizeBytes    int64         `gorm:"not null"`
	Revision     int64         `gorm:"not null"`
	UpdatedBy    string        `gorm:"size:16;not null"`
	CreatedAt    time.Time     `gorm:"not null"`
	UpdatedAt    time.Time     `gorm:"not null"`
}

func (m0011Document) TableName() string { return "company_documents" }

type m0011Milestone struct {
	CompanyID string        `gorm:"primaryKey;size:36"`
	Company   *m0011Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	Kind      string        `gorm:"primaryKey;size:32"`
	ReachedAt time.Time     `gorm:"not null"`
	SeenAt    *time.Time
}

func (m0011Milestone) TableName() string { return "company_milestones" }
