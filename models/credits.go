package models

import "time"

// LedgerEntryType is the kind of a credit ledger entry.
type LedgerEntryType string

const (
	EntryGrantWelcome      LedgerEntryType = "GRANT_WELCOME"
	EntryTopUp             LedgerEntryType = "TOP_UP"
	EntryPlanGrant         LedgerEntryType = "PLAN_GRANT"
	EntryTokenUsagePartial LedgerEntryType = "TOKEN_USAGE_PARTIAL"
	EntryToolUsage         LedgerEntryType = "TOOL_USAGE"
	EntryAdSpend           LedgerEntryType = "AD_SPEND"
	EntryRefund            LedgerEntryType = "REFUND"
	EntryAdminAdjustment   LedgerEntryType = "ADMIN_ADJUSTMENT"
)

// Spends reports whether entries of this type use credits (count towards
// the daily cap).
func (t LedgerEntryType) Spends() bool {
	switch t {
	case EntryTokenUsagePartial, EntryToolUsage, EntryAdSpend:
		return true
	}
	return false
}

// Valid reports whether t is a known type.
func (t LedgerEntryType) Valid() bool {
	switch t {
	case EntryGrantWelcome, EntryTopUp, EntryPlanGrant, EntryTokenUsagePartial, EntryToolUsage, EntryAdSpend, EntryRefund, EntryAdminAdjustment:
		return true
	}
	return false
}

// CreditLedgerEntry is one append-only change of a conglomerate's credit
// balance, in whole credits (positive adds, negative spends).
type CreditLedgerEntry struct {
	ID             string          `gorm:"primaryKey;size:36"`
	ConglomerateID string          `gorm:"size:36;not null;index:idx_credit_entries_conglomerate,priority:1"`
	Type           LedgerEntryType `gorm:"size:32;not null"`
	Amount         int64           `gorm:"not null"`
	RunID          *string         `gorm:"size:64"`
	CompanyID      *string         `gorm:"size:36"`
	Reference      string          `gorm:"size:200;not null"`
	GroupKey       string          `gorm:"size:120;not null"`
	CreatedAt      time.Time       `gorm:"not null;index:idx_credit_entries_conglomerate,priority:2"`
}

// CreditLedgerGroup is a page line of the ledger, kept up to date with
// every entry: TOKEN_USAGE_PARTIAL and TOOL_USAGE entries with a run_id sum
// into one group per (type, run); every other entry is a group of its own.
type CreditLedgerGroup struct {
	ConglomerateID string          `gorm:"primaryKey;size:36;index:idx_credit_groups_page,priority:1"`
	GroupKey       string          `gorm:"primaryKey;size:120"`
	Type           LedgerEntryType `gorm:"size:32;not null"`
	RunID          *string         `gorm:"size:64"`
	CompanyID      *string         `gorm:"size:36"`
	Reference      string          `gorm:"size:200;not null"`
	Amount         int64           `gorm:"not null"`
	Entries        int64           `gorm:"not null"`
	FirstAt        time.Time       `gorm:"not null"`
	LastAt         time.Time       `gorm:"not null;index:idx_credit_groups_page,priority:2,sort:desc"`
}

// CreditAccount holds a conglomerate's balance (the sum of its entries,
// kept in the same transaction) and serializes its spends.
type CreditAccount struct {
	ConglomerateID string `gorm:"primaryKey;size:36"`
	Balance        int64  `gorm:"not null"`
	Groups         int64  `gorm:"not null"` // page groups, for the ledger's total
	// SpentToday counts the credits spent on SpentDay (a UTC midnight), so
	// the daily cap is checked without summing the day's entries.
	SpentDay   time.Time `gorm:"not null"`
	SpentToday int64     `gorm:"not null"`
	UpdatedAt  time.Time
}

// Table names are pinned: the ledger's tables are named in raw SQL too.
func (CreditLedgerEntry) TableName() string { return "credit_ledger_entries" }
func (CreditLedgerGroup) TableName() string { return "credit_ledger_groups" }
func (CreditAccount) TableName() string     { return "credit_accounts" }

// CreditReservation holds credits for one charge until it is settled (the
// ledger entry with the same id is written) or released. While it lives
// (until ExpiresAt) a spend or another reservation sees the balance minus
// the held credits.
type CreditReservation struct {
	ID             string          `gorm:"primaryKey;size:36"`
	ConglomerateID string          `gorm:"size:36;not null;index:idx_credit_reservations_live,priority:1"`
	Type           LedgerEntryType `gorm:"size:32;not null"`
	Amount         int64           `gorm:"not null"`
	RunID          *string         `gorm:"size:64"`
	CompanyID      *string         `gorm:"size:36"`
	CreatedAt      time.Time       `gorm:"not null"`
	ExpiresAt      time.Time       `gorm:"not null;index:idx_credit_reservations_live,priority:2"`
}

func (CreditReservation) TableName() string { return "credit_reservations" }
