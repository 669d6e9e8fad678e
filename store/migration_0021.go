package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0021DomainsAds adds the conglomerates' domain pools and the
// companies' ad campaigns. A domain is held by one paid purchase at a
// time (unique among order_pending and registered rows); a company has at
// most one attached domain.
func migration0021DomainsAds() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0021_domains_ads",
		Migrate: func(tx *gorm.DB) error {
			m := tx.Migrator()
			if err := m.CreateTable(&m0021DomainPurchase{}, &m0021AdCampaign{}); err != nil {
				return err
			}
			for _, q := range []string{
				"CREATE UNIQUE INDEX idx_domain_purchases_held ON domain_purchases (domain) WHERE state IN ('order_pending', 'registered')",
				"CREATE UNIQUE INDEX idx_domain_purchases_attached ON domain_purchases (attached_company_id) WHERE attached_company_id IS NOT NULL",
				"CREATE INDEX idx_domain_purchases_unstarted ON domain_purchases (updated_at) WHERE state = 'order_pending' AND NOT workflow_started",
				"CREATE INDEX idx_ad_campaigns_pending ON ad_campaigns (updated_at) WHERE reconcile_pending",
			} {
				if err := tx.Exec(q).Error; err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("ad_campaigns", "domain_purchases")
		},
	}
}

type m0021Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0021Company) TableName() string { return "companies" }

type m0021Conglomerate struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0021Conglomerate) TableName() string { return "conglomerates" }

type m0021DomainPurchase struct {
	ID                string             `gorm:"primaryKey;size:36"`
	ConglomerateID    string             `gorm:"size:36;not null;index:idx_domain_purchases_pool,priority:1"`
	Conglomerate      *m0021Conglomerate `gorm:"foreignKey:ConglomerateID;constraint:OnDelete:CASCADE"`
	CompanyID         string             `gorm:"size:36;not null"`
	Company           *m0021Company      `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	Domain            string             `gorm:"size:253;not null"`
	PriceCents        int64              `gorm:"not null"`
	Currency          string             `gorm:"size:3;not null"`
	State             string             `gorm:"size:20;not null"`
	AttachedCompanyID *string            `gorm:"size:36"`
	CheckoutID        string             `gorm:"size:255;not null"`
	OrderID           string             `gorm:"size:255;not null"`
	WorkflowStarted   bool               `gorm:"not null"`
	FailureReason     string             `gorm:"size:500;not null"`
	RefundedCredits   int64              `gorm:"not null"`
	PaidAt            *time.Time
	RegisteredAt      *time.Time
	CreatedAt         time.Time `gorm:"not null;index:idx_domain_purchases_pool,priority:2"`
	UpdatedAt         time.Time `gorm:"not null"`
}

func (m0021DomainPurchase) TableName() string { return "domain_purchases" }

type m0021AdCampaign struct {
	CompanyID        string        `gorm:"primaryKey;size:36"`
	Company          *m0021Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	ConglomerateID   string        `gorm:"size:36;not null;index:idx_ad_campaigns_conglomerate"`
	DailyCap         int64         `gorm:"not null"`
	State            string        `gorm:"size:24;not null"`
	ReconcilePending bool          `gorm:"not null"`
	CreativeVersion  int64         `gorm:"not null"`
	Headline         string        `gorm:"size:200;not null"`
	Body             string        `gorm:"size:1000;not null"`
	CallToAction     string        `gorm:"size:40;not null"`
	LinkURL          string        `gorm:"size:500;not null"`
	RegenerationDay  *time.Time
	RegenerationsDay int64 `gorm:"not null"`
	Day              *time.Time
	ReservedToday    int64 `gorm:"not null"`
	SpentToday       int64 `gorm:"not null"`
	ImpressionsToday int64 `gorm:"not null"`
	ClicksToday      int64 `gorm:"not null"`
	TotalSpent       int64 `gorm:"not null"`
	TotalImpressions int64 `gorm:"not null"`
	TotalClicks      int64 `gorm:"not null"`
	StateChangedAt   *time.Time
	CreatedAt        time.Time `gorm:"not null"`
	UpdatedAt        time.Time `gorm:"not null"`
}

func (m0021AdCampaign) TableName() string { return "ad_campaigns" }
