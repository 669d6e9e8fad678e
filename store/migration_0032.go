package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0032SiteDeploys moves sites and repositories' records off the
// worker's disk: company_sites (a published site, its current deploy and
// sealed environment), site_deploys (the tree of main at a commit,
// exported to the blob store under immutable keys) and
// company_repositories (each repository's home and first commit).
func migration0032SiteDeploys() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0032_site_deploys",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0032SiteDeploy{}, &m0032CompanySite{}, &m0032CompanyRepository{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("company_sites", "site_deploys", "company_repositories")
		},
	}
}

type m0032Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0032Company) TableName() string { return "companies" }

type m0032SiteDeploy struct {
	ID          string        `gorm:"primaryKey;size:36"`
	CompanyID   string        `gorm:"size:36;not null;uniqueIndex:idx_site_deploys_commit,priority:1"`
	Company     *m0032Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	CommitID    string        `gorm:"size:64;not null;uniqueIndex:idx_site_deploys_commit,priority:2"`
	ManifestKey string        `gorm:"size:128;not null"`
	Files       int           `gorm:"not null"`
	Bytes       int64         `gorm:"not null"`
	CreatedAt   time.Time     `gorm:"not null"`
}

func (m0032SiteDeploy) TableName() string { return "site_deploys" }

type m0032CompanySite struct {
	CompanyID string           `gorm:"primaryKey;size:36"`
	Company   *m0032Company    `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	DeployID  *string          `gorm:"size:36"`
	Deploy    *m0032SiteDeploy `gorm:"foreignKey:DeployID;constraint:OnDelete:SET NULL"`
	EnvSealed []byte
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

func (m0032CompanySite) TableName() string { return "company_sites" }

type m0032CompanyRepository struct {
	CompanyID   string        `gorm:"primaryKey;size:36"`
	Company     *m0032Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	Home        string        `gorm:"size:300;not null"`
	FirstCommit string        `gorm:"size:64;not null"`
	CreatedAt   time.Time     `gorm:"not null"`
	UpdatedAt   time.Time     `gorm:"not null"`
}

func (m0032CompanyRepository) TableName() string { return "company_repositories" }
