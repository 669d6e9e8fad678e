package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0013CompanyEmail adds every company's messages, received and
// sent. Inbound messages are unique per company by the provider's message
// id (a redelivered webhook counts once); the list reads newest first by
// (created_at, id); the admin backfill finds missing bodies by body_state.
func migration0013CompanyEmail() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0013_company_email",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0013CompanyEmail{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("company_emails")
		},
	}
}

type m0013Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0013Company) TableName() string { return "companies" }

type m0013CompanyEmail struct {
	ID                string        `gorm:"primaryKey;size:36;index:idx_company_emails_list,priority:3"`
	CompanyID         string        `gorm:"size:36;not null;uniqueIndex:idx_company_emails_provider_id,priority:1;index:idx_company_emails_list,priority:1"`
	Company           *m0013Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	Direction         string        `gorm:"size:16;not null"`
	Delivery          string        `gorm:"size:16;not null"`
	ProviderMessageID string        `gorm:"size:255;not null;uniqueIndex:idx_company_emails_provider_id,priority:2"`
	FromAddress       string        `gorm:"size:320;not null"`
	ToAddress         string        `gorm:"size:320;not null"`
	ReplyTo           string        `gorm:"size:320;not null"`
	Subject           string        `gorm:"size:1000;not null"`
	TextBody          string        `gorm:"type:text;not null"`
	HTMLBody          string        `gorm:"type:text;not null"`
	BodyState         string        `gorm:"size:16;not null;index:idx_company_emails_body_state"`
	ReadAt            *time.Time
	CreatedAt         time.Time `gorm:"not null;index:idx_company_emails_list,priority:2"`
	UpdatedAt         time.Time `gorm:"not null"`
}

func (m0013CompanyEmail) TableName() string { return "company_emails" }
