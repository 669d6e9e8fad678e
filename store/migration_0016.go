package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0016Turns adds agent turns and the messages of their sessions,
// and the owner's switch that stops a company's agent from taking
// messages.
func migration0016Turns() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0016_turns",
		Migrate: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.CreateTable(&m0016Turn{}, &m0016TurnMessage{}); err != nil {
				return err
			}
			return m.AddColumn(&m0016Company{}, "ChatDisabled")
		},
		Rollback: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.DropColumn(&m0016Company{}, "ChatDisabled"); err != nil {
				return err
			}
			return m.DropTable("turn_messages", "turns")
		},
	}
}

type m0016Company struct {
	ID           string `gorm:"primaryKey;size:36"`
	ChatDisabled bool   `gorm:"not null;default:false"`
}

func (m0016Company) TableName() string { return "companies" }

type m0016Turn struct {
	ID              string        `gorm:"primaryKey;size:36"`
	CompanyID       string        `gorm:"size:36;not null;index:idx_turns_company,priority:1"`
	Company         *m0016Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	ConglomerateID  string        `gorm:"size:36;not null"`
	SessionID       string        `gorm:"size:36;not null;index:idx_turns_session"`
	Trigger         string        `gorm:"size:16;not null"`
	TaskID          *string       `gorm:"size:36"`
	Status          string        `gorm:"size:16;not null"`
	Message         string        `gorm:"type:text;not null"`
	Attachments     string        `gorm:"type:text;not null"`
	Text            string        `gorm:"type:text;not null"`
	Answer          string        `gorm:"type:text;not null"`
	Question        string        `gorm:"type:text;not null"`
	ErrorCode       string        `gorm:"size:40;not null"`
	ErrorDetail     string        `gorm:"size:1000;not null"`
	CreditsCost     *int64
	SkipCreditCheck bool `gorm:"not null"`
	StartedAt       *time.Time
	EndedAt         *time.Time
	CreatedAt       time.Time `gorm:"not null;index:idx_turns_company,priority:2"`
	UpdatedAt       time.Time `gorm:"not null"`
}

func (m0016Turn) TableName() string { return "turns" }

type m0016TurnMessage struct {
	TurnID       string     `gorm:"primaryKey;size:36"`
	Turn         *m0016Turn `gorm:"foreignKey:TurnID;constraint:OnDelete:CASCADE"`
	Step         int        `gorm:"primaryKey"`
	Part         int        `gorm:"primaryKey"`
	SessionID    string     `gorm:"size:36;not null;index:idx_turn_messages_session"`
	Role         string     `gorm:"size:16;not null"`
	Content      string     `gorm:"type:text;not null"`
	Model        string     `gorm:"size:100;not null"`
	InputTokens  int64      `gorm:"not null"`
	OutputTokens int64      `gorm:"not null"`
	CreatedAt    time.Time  `gorm:"not null"`
}

func (m0016TurnMessage) TableName() string { return "turn_messages" }
