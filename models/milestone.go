package models

import "time"

// MilestoneKind names a milestone on a company's shelf. The only kind is
// first_dollar: the company's first revenue.
type MilestoneKind string

const MilestoneFirstDollar MilestoneKind = "first_dollar"

// MilestoneKinds lists every kind in the order a company reaches them
// (the next goal is the first one not reached).
var MilestoneKinds = []MilestoneKind{MilestoneFirstDollar}

// MilestoneGoal describes a milestone for the shelf.
func (k MilestoneKind) Goal() string {
	switch k {
	case MilestoneFirstDollar:
		return "Earn the first dollar from a customer."
	}
	return string(k)
}

// Milestone is a milestone a company reached; (company, kind) is unique, so
// reaching one twice is impossible by construction.
type Milestone struct {
	CompanyID string        `gorm:"primaryKey;size:36"`
	Kind      MilestoneKind `gorm:"primaryKey;size:32"`
	ReachedAt time.Time     `gorm:"not null"`
	SeenAt    *time.Time
}

func (Milestone) TableName() string { return "company_milestones" }
