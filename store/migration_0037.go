package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0037AnalyticsInbox adds capture's inbox: each row is the events
// of one group commit (encoded, store/analytics_inbox.go), acknowledged
// once the row is committed and folded into analytics_events and the
// rollups later, in larger transactions, and deleted in the transaction
// that folds it.
func migration0037AnalyticsInbox() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0037_analytics_inbox",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0037Inbox{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("analytics_inbox")
		},
	}
}

type m0037Inbox struct {
	ID        int64     `gorm:"primaryKey;autoIncrement"`
	Events    int       `gorm:"not null"`
	Data      []byte    `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

func (m0037Inbox) TableName() string { return "analytics_inbox" }
