package models

import (
	"regexp"
	"time"
)

// DocumentVisibility decides whether the company page lists a document.
type DocumentVisibility string

const (
	// DocumentVisible documents are listed for the company's people.
	DocumentVisible DocumentVisibility = "visible"
	// DocumentInternal documents are the agents' working notes: readable
	// by type, left out of the list.
	DocumentInternal DocumentVisibility = "internal"
)

// Valid reports whether v is a known visibility.
func (v DocumentVisibility) Valid() bool { return v == DocumentVisible || v == DocumentInternal }

// Standard document types. Any other type matching DocumentTypePattern is
// a custom type.
const (
	DocMission      = "mission"
	DocFoundingPlan = "founding_plan"
	DocStrategy     = "strategy"
	DocBrand        = "brand"
	DocProduct      = "product"
	DocMarketing    = "marketing"
	DocRoadmap      = "roadmap"
	DocCustomers    = "customers"
	DocOperations   = "operations"
	DocAgentMemory  = "agent_memory"
	DocAgentNotes   = "agent_notes"
)

// StandardDocumentTypes are the types every company may have, each with
// its default visibility.
var StandardDocumentTypes = map[string]DocumentVisibility{
	DocMission: DocumentVisible, DocFoundingPlan: DocumentVisible, DocStrategy: DocumentVisible,
	DocBrand: DocumentVisible, DocProduct: DocumentVisible, DocMarketing: DocumentVisible,
	DocRoadmap: DocumentVisible, DocCustomers: DocumentVisible, DocOperations: DocumentVisible,
	DocAgentMemory: DocumentInternal, DocAgentNotes: DocumentInternal,
}

// Document limits.
const (
	MaxDocumentTypeLen  = 64
	MaxDocumentTitleLen = 200
	// MaxDocumentBytes is the largest content (UTF-8 bytes); more is
	// refused with too_large (413).
	MaxDocumentBytes = 256 << 10
)

// DocumentTypePattern is a lower-case slug: a letter, then letters, digits,
// underscores or hyphens, 1 to 64 characters.
var DocumentTypePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// DefaultVisibility is the visibility a document of this type gets when
// none is given: internal for the agents' types (agent_…), visible
// otherwise.
func DefaultVisibility(docType string) DocumentVisibility {
	if v, ok := StandardDocumentTypes[docType]; ok {
		return v
	}
	if len(docType) > 6 && docType[:6] == "agent_" {
		return DocumentInternal
	}
	return DocumentVisible
}

// Document is a company's document of one type (one per type).
type Document struct {
	CompanyID    string             `gorm:"primaryKey;size:36"`
	DocumentType string             `gorm:"primaryKey;size:64"`
	Title        string             `gorm:"size:200;not null"`
	Content      string             `gorm:"type:text;not null"`
	Visibility   DocumentVisibility `gorm:"size:16;not null"`
	SizeBytes    int64              `gorm:"not null"`
	Revision     int64              `gorm:"not null"`
	UpdatedBy    ActivityActor      `gorm:"size:16;not null"`
	CreatedAt    time.Time          `gorm:"not null"`
	UpdatedAt    time.Time          `gorm:"not null"`
}

// DocumentSummary is a document without its content (lists, dashboard).
type DocumentSummary struct {
	DocumentType string
	Title        string
	Visibility   DocumentVisibility
	SizeBytes    int64
	Revision     int64
	UpdatedBy    ActivityActor
	UpdatedAt    time.Time
}

func (Document) TableName() string { return "company_documents" }
