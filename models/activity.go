package models

import (
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// ActivityKind names what happened in a company's activity feed. The
// service writes events as things happen, in the same transaction as the
// change they describe.
type ActivityKind string

const (
	ActivityCompanyCreated     ActivityKind = "company_created"
	ActivityCompanyProvisioned ActivityKind = "company_provisioned"
	ActivityDocumentUpdated    ActivityKind = "document_updated"
	ActivityDocumentDeleted    ActivityKind = "document_deleted"
	ActivityFileUploaded       ActivityKind = "file_uploaded"
	ActivityFileDeleted        ActivityKind = "file_deleted"
	ActivityFilesDeleted       ActivityKind = "files_deleted"
	ActivityEmailReceived      ActivityKind = "email_received"
	ActivityEmailSent          ActivityKind = "email_sent"
	ActivityPaymentReceived    ActivityKind = "payment_received"
	ActivityRefundIssued       ActivityKind = "refund_issued"
	ActivitySubscriptionStart  ActivityKind = "subscription_started"
	ActivitySubscriptionCancel ActivityKind = "subscription_canceled"
	ActivityMilestoneReached   ActivityKind = "milestone_reached"
	ActivityTaskCreated        ActivityKind = "task_created"
	ActivityTaskUpdated        ActivityKind = "task_updated"
	ActivityTaskDeleted        ActivityKind = "task_deleted"
	ActivityTurnEnded          ActivityKind = "turn_ended"
	ActivityProspectAdded      ActivityKind = "prospect_added"
	ActivityProspectUpdated    ActivityKind = "prospect_updated"
	// ActivityRepositoryRecreated: heal found the company's repository
	// gone from its home and made a new one (a new first commit).
	ActivityRepositoryRecreated ActivityKind = "repository_recreated"
)

// ActivityActor says who caused an event.
type ActivityActor string

const (
	ActorUser     ActivityActor = "user"     // a person, through the web app, CLI or an assistant
	ActorAgent    ActivityActor = "agent"    // the company's agents (its company key)
	ActorCustomer ActivityActor = "customer" // the company's own customers (payments, email)
	ActorSystem   ActivityActor = "system"   // holdco itself (provisioning, milestones)
)

// MaxActivitySummary bounds an event's one-line summary; longer ones are
// cut on a rune boundary.
const MaxActivitySummary = 500

// ActivityInput is an event to record.
type ActivityInput struct {
	Kind    ActivityKind
	Actor   ActivityActor
	Summary string
	// Subject names what the event is about (a document type, a file id,
	// a payment id), for links from the feed.
	Subject string
	// Data carries small structured details (sizes, amounts); never
	// secrets.
	Data map[string]any
}

// ActivityEvent is one row of a company's activity feed.
type ActivityEvent struct {
	ID        string        `gorm:"primaryKey;size:36"`
	CompanyID string        `gorm:"size:36;not null"`
	Kind      ActivityKind  `gorm:"size:40;not null"`
	Actor     ActivityActor `gorm:"size:16;not null"`
	Summary   string        `gorm:"size:500;not null"`
	Subject   string        `gorm:"size:255;not null"`
	Data      string        `gorm:"type:text;not null"` // JSON object
	CreatedAt time.Time     `gorm:"not null"`
}

// BeforeCreate gives the event a time-ordered (version 7) UUID, so the id
// that breaks ties between equal timestamps follows insertion order.
func (e *ActivityEvent) BeforeCreate(*gorm.DB) error {
	if e.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return err
		}
		e.ID = id.String()
	}
	return nil
}

// ActivityCursor pages the feed newest first: events strictly before
// (CreatedAt, ID) in that order.
type ActivityCursor struct {
	Before   time.Time
	BeforeID string
}

// Activity feed page sizes.
const (
	DefaultActivityLimit = 50
	MaxActivityLimit     = 100
)

func (ActivityEvent) TableName() string { return "activity_events" }
