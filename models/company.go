package models

import (
	"regexp"
	"time"

	"gorm.io/gorm"
)

// CompanyStatus is the lifecycle state of a company. Archive is
// irreversible.
type CompanyStatus string

const (
	CompanyActive   CompanyStatus = "active"
	CompanyPaused   CompanyStatus = "paused"
	CompanyArchived CompanyStatus = "archived"
)

// Valid reports whether s is one of the known statuses.
func (s CompanyStatus) Valid() bool {
	switch s {
	case CompanyActive, CompanyPaused, CompanyArchived:
		return true
	}
	return false
}

// MaxHandleLen is the longest company handle; the beacon's `s` parameter
// carries a handle and allows 1 to 64 characters.
const MaxHandleLen = 64

// handlePattern is a lower-case slug: letters, digits and inner hyphens.
var handlePattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`)

// ValidHandle reports whether h is a well-formed company handle: a
// lower-case slug of 1 to MaxHandleLen characters that neither starts nor
// ends with a hyphen.
func ValidHandle(h string) bool {
	return len(h) >= 1 && len(h) <= MaxHandleLen && handlePattern.MatchString(h)
}

// Company is one AI-operated business inside a conglomerate.
type Company struct {
	ID             string `gorm:"primaryKey;size:36"`
	ConglomerateID string `gorm:"size:36;index:idx_companies_conglomerate_id"` // NULL (read as "") once its conglomerate is deleted with the account
	Name           string `gorm:"size:200;not null"`
	// Handle is unique across the platform (not per conglomerate): it names
	// the company in public URLs and the analytics beacon.
	Handle  string        `gorm:"size:64;not null;uniqueIndex:idx_companies_handle"`
	Status  CompanyStatus `gorm:"size:16;not null"`
	Idea    string        `gorm:"type:text;not null"`
	Mission string        `gorm:"type:text;not null"`
	// ChatDisabled stops the company's agent from taking messages (the
	// owner's switch, `agent_chat: false`); scheduled runs and tasks are
	// not affected by it.
	ChatDisabled bool `gorm:"not null;default:false"`
	// Generation is the company's generation: CurrentCompanyGeneration for
	// companies founded now, 2 for older ones (a v3 upgrade interview
	// switches them).
	Generation int `gorm:"not null"`
	ArchivedAt *time.Time
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// BeforeCreate gives a new company its UUID and the initial status.
func (c *Company) BeforeCreate(*gorm.DB) error {
	ensureID(&c.ID)
	if c.Status == "" {
		c.Status = CompanyActive
	}
	if c.Generation == 0 {
		c.Generation = CurrentCompanyGeneration
	}
	return nil
}
