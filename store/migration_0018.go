package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0018Founding adds founding interviews (one open per user, by a
// unique index on open_key) and companies' generation: rows made before it
// are generation 2, new companies get the current generation from the
// model.
func migration0018Founding() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0018_founding",
		Migrate: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.CreateTable(&m0018FoundingInterview{}); err != nil {
				return err
			}
			return m.AddColumn(&m0018Company{}, "Generation")
		},
		Rollback: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.DropColumn(&m0018Company{}, "Generation"); err != nil {
				return err
			}
			return m.DropTable("founding_interviews")
		},
	}
}

type m0018Company struct {
	ID         string `gorm:"primaryKey;size:36"`
	Generation int    `gorm:"not null;default:2"`
}

func (m0018Company) TableName() string { return "companies" }

type m0018Conglomerate struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0018Conglomerate) TableName() string { return "conglomerates" }

type m0018FoundingInterview struct {
	ID             string `gorm:"primaryKey;size:36"`
	UserID         string `gorm:"size:36;not null;index:idx_founding_user,priority:1"`
	ConglomerateID string `gorm:"size:36;not null;index:idx_founding_conglomerate"`
	// Interviews go with their account.
	Conglomerate       *m0018Conglomerate `gorm:"foreignKey:ConglomerateID;constraint:OnDelete:CASCADE"`
	Kind               string             `gorm:"size:16;not null"`
	State              string             `gorm:"size:16;not null"`
	OpenKey            *string            `gorm:"size:36;uniqueIndex:idx_founding_open"`
	Idea               string             `gorm:"type:text;not null"`
	CompanyID          *string            `gorm:"size:36;index:idx_founding_company"`
	Transcript         string             `gorm:"type:text;not null"`
	Proposal           *string            `gorm:"type:text"`
	RejectedReason     string             `gorm:"size:1000;not null"`
	SegmentRunning     bool               `gorm:"not null"`
	SegmentHeartbeatAt *time.Time
	WorkflowStartedAt  *time.Time
	AnalyticsSessionID string `gorm:"size:128;not null"`
	ClientMobile       *bool
	FirstPassStatus    string    `gorm:"size:16;not null"`
	FirstPassTurnID    *string   `gorm:"size:36"`
	FirstPassError     string    `gorm:"size:40;not null"`
	FirstPassDetail    string    `gorm:"size:1000;not null"`
	CreatedAt          time.Time `gorm:"not null;index:idx_founding_user,priority:2"`
	UpdatedAt          time.Time `gorm:"not null"`
	EndedAt            *time.Time
}

func (m0018FoundingInterview) TableName() string { return "founding_interviews" }
