package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0014CompanySales adds a company's own sales: the products it
// sells on its conglomerate's connected account, its customers' payments
// (unique by the provider's payment, so a replayed or doubly reported
// payment counts once) and their subscriptions (unique by the provider's
// subscription).
func migration0014CompanySales() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0014_company_sales",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0014Product{}, &m0014Payment{}, &m0014Subscription{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("company_subscriptions", "company_payments", "company_products")
		},
	}
}

type m0014Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0014Company) TableName() string { return "companies" }

type m0014Product struct {
	ID                string        `gorm:"primaryKey;size:36"`
	CompanyID         string        `gorm:"size:36;not null;index:idx_company_products_company,priority:1"`
	Company           *m0014Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	ConglomerateID    string        `gorm:"size:36;not null"`
	ProviderAccountID string        `gorm:"size:64;not null"`
	ProviderProductID string        `gorm:"size:64;not null;uniqueIndex:idx_company_products_provider"`
	ProviderPriceID   string        `gorm:"size:64;not null"`
	Name              string        `gorm:"size:200;not null"`
	Description       string        `gorm:"type:text;not null"`
	PriceCents        int64         `gorm:"not null"`
	Currency          string        `gorm:"size:3;not null"`
	Interval          string        `gorm:"size:8;not null"`
	Active            bool          `gorm:"not null"`
	CreatedAt         time.Time     `gorm:"not null;index:idx_company_products_company,priority:2"`
}

func (m0014Product) TableName() string { return "company_products" }

type m0014Payment struct {
	ID                string        `gorm:"primaryKey;size:36"`
	CompanyID         string        `gorm:"size:36;not null;index:idx_company_payments_company,priority:1"`
	Company           *m0014Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	ConglomerateID    string        `gorm:"size:36;not null"`
	ProviderAccountID string        `gorm:"size:64;not null"`
	ProviderPaymentID string        `gorm:"size:255;not null;uniqueIndex:idx_company_payments_provider"`
	ProductID         string        `gorm:"size:36;not null"`
	SubscriptionID    string        `gorm:"size:64;not null"`
	AmountCents       int64         `gorm:"not null"`
	RefundedCents     int64         `gorm:"not null"`
	Currency          string        `gorm:"size:3;not null"`
	PaidAt            time.Time     `gorm:"not null;index:idx_company_payments_company,priority:2"`
	CreatedAt         time.Time     `gorm:"not null"`
}

func (m0014Payment) TableName() string { return "company_payments" }

type m0014Subscription struct {
	ID                     string        `gorm:"primaryKey;size:36"`
	CompanyID              string        `gorm:"size:36;not null;index:idx_company_subscriptions_company,priority:1"`
	Company                *m0014Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	ConglomerateID         string        `gorm:"size:36;not null"`
	ProviderAccountID      string        `gorm:"size:64;not null"`
	ProviderSubscriptionID string        `gorm:"size:64;not null;uniqueIndex:idx_company_subscriptions_provider"`
	ProductID              string        `gorm:"size:36;not null"`
	Status                 string        `gorm:"size:24;not null"`
	CurrentPeriodEnd       *time.Time
	CancelAtPeriodEnd      bool `gorm:"not null"`
	StartedAt              *time.Time
	CanceledAt             *time.Time
	ProviderUpdatedAt      time.Time `gorm:"not null"`
	CreatedAt              time.Time `gorm:"not null;index:idx_company_subscriptions_company,priority:2"`
	UpdatedAt              time.Time `gorm:"not null"`
}

func (m0014Subscription) TableName() string { return "company_subscriptions" }
