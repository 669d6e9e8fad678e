package models

import (
	"time"

	"gorm.io/gorm"
)

// EmailDirection says whether a company received a message or sent it.
type EmailDirection string

const (
	EmailInbound  EmailDirection = "inbound"
	EmailOutbound EmailDirection = "outbound"
)

// Valid reports whether d is a known direction.
func (d EmailDirection) Valid() bool { return d == EmailInbound || d == EmailOutbound }

// EmailBodyState says whether the message's body is stored. An inbound
// message whose body the provider did not deliver is `missing` until the
// admin backfill fetches it again.
type EmailBodyState string

const (
	EmailBodyPresent EmailBodyState = "present"
	EmailBodyMissing EmailBodyState = "missing"
)

// EmailDelivery is where an outbound message is: a row is written
// `sending` before the provider is called (the daily send limit counts it),
// then `sent` or `failed`. Inbound messages are `received`. A row still
// `sending` long after (the process stopped while the provider was being
// called) becomes `unknown`: the message may or may not have gone out, and
// holdco never resends it on its own.
type EmailDelivery string

const (
	EmailSending  EmailDelivery = "sending"
	EmailSent     EmailDelivery = "sent"
	EmailFailed   EmailDelivery = "failed"
	EmailUnknown  EmailDelivery = "unknown"
	EmailReceived EmailDelivery = "received"
)

// Email is one message of a company's inbox, received or sent.
type Email struct {
	ID        string         `gorm:"primaryKey;size:36"`
	CompanyID string         `gorm:"size:36;not null"`
	Direction EmailDirection `gorm:"size:16;not null"`
	Delivery  EmailDelivery  `gorm:"size:16;not null"`
	// ProviderMessageID is the provider's id of the message: the inbound
	// webhook's message id (unique per company, so a redelivery counts
	// once), or the Message-ID holdco gave a message it sent.
	ProviderMessageID string         `gorm:"size:255;not null"`
	FromAddress       string         `gorm:"size:320;not null"`
	ToAddress         string         `gorm:"size:320;not null"`
	ReplyTo           string         `gorm:"size:320;not null"`
	Subject           string         `gorm:"size:1000;not null"`
	TextBody          string         `gorm:"type:text;not null"`
	HTMLBody          string         `gorm:"type:text;not null"`
	BodyState         EmailBodyState `gorm:"size:16;not null"`
	// ReadAt is when the message was first opened; sent messages are read
	// when sent.
	ReadAt    *time.Time
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

// TableName is the table of every company's messages.
func (Email) TableName() string { return "company_emails" }

// BeforeCreate gives a new message its UUID.
func (e *Email) BeforeCreate(*gorm.DB) error {
	ensureID(&e.ID)
	return nil
}

// EmailBody is a message's content as a provider hands it over.
type EmailBody struct {
	Text string
	HTML string
}

// Empty reports whether the body has no content at all.
func (b EmailBody) Empty() bool { return b.Text == "" && b.HTML == "" }

// OutgoingEmail is a message for a sending provider, already validated:
// addresses parsed, no line break in any header value.
type OutgoingEmail struct {
	// MessageID is the Message-ID header without angle brackets.
	MessageID string
	FromName  string
	From      string
	// EnvelopeFrom is the SMTP MAIL FROM (bounces); empty is From.
	EnvelopeFrom string
	To           string
	ReplyTo      string
	Subject      string
	Text         string
}

// InboundEmail is one message delivered to a company's inbox by the
// provider's webhook (or the local provider). Body is nil when the provider
// left it out.
type InboundEmail struct {
	ProviderMessageID string
	Recipient         string
	From              string
	Subject           string
	Body              *EmailBody
	ReceivedAt        time.Time
}

// InboxCounts are the dashboard's numbers of a company's inbox.
type InboxCounts struct {
	Total    int64
	Unread   int64 // inbound messages not opened yet
	Received int64
	Sent     int64 // outbound messages, whatever their delivery state
}
