package models

import (
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// ProspectStatus is where a lead is in the company's sales pipeline.
type ProspectStatus string

const (
	ProspectNew       ProspectStatus = "new"
	ProspectContacted ProspectStatus = "contacted"
	ProspectReplied   ProspectStatus = "replied"
	ProspectQualified ProspectStatus = "qualified"
	ProspectWon       ProspectStatus = "won"
	ProspectLost      ProspectStatus = "lost"
)

// ProspectStatuses are all statuses, in pipeline order.
var ProspectStatuses = []ProspectStatus{ProspectNew, ProspectContacted, ProspectReplied, ProspectQualified, ProspectWon, ProspectLost}

// Valid reports whether s is a known status.
func (s ProspectStatus) Valid() bool {
	for _, x := range ProspectStatuses {
		if s == x {
			return true
		}
	}
	return false
}

// Prospect is a lead of a company: someone its agents may sell to, with
// where they stand and notes. EmailKey is the lower-cased email (unique per
// company when set).
type Prospect struct {
	ID           string         `gorm:"primaryKey;size:36"`
	CompanyID    string         `gorm:"size:36;not null;index:idx_prospects_company,priority:1;uniqueIndex:idx_prospects_email,priority:1"`
	Name         string         `gorm:"size:200;not null"`
	Email        string         `gorm:"size:320;not null"`
	EmailKey     *string        `gorm:"size:320;uniqueIndex:idx_prospects_email,priority:2"`
	Organization string         `gorm:"size:200;not null"`
	Status       ProspectStatus `gorm:"size:16;not null"`
	Notes        string         `gorm:"type:text;not null"`
	Source       string         `gorm:"size:500;not null"`
	CreatedAt    time.Time      `gorm:"not null;index:idx_prospects_company,priority:2"`
	UpdatedAt    time.Time      `gorm:"not null"`
}

func (Prospect) TableName() string { return "company_prospects" }

// BeforeCreate gives the prospect a time-ordered (version 7) UUID.
func (p *Prospect) BeforeCreate(*gorm.DB) error {
	if p.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		p.ID = id.String()
	}
	return nil
}

// ProspectChanges are the fields an update sets; nil leaves a field.
type ProspectChanges struct {
	Name, Email, Organization, Notes, Source *string
	Status                                   *ProspectStatus
}
