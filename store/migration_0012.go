package store

import (
	"time"

	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// migration0012CompanyFiles adds the companies' files (rows naming blobs on
// object storage), their usage per company (the quota's lock) and the
// blob deletions the worker sweeps (orphaned and uncommitted blobs).
func migration0012CompanyFiles() *gormigrate.Migration {
	return &gormigrate.Migration{
		ID: "0012_company_files",
		Migrate: func(tx *gorm.DB) error {
			return tx.Migrator().CreateTable(&m0012CompanyFile{}, &m0012CompanyFileUsage{}, &m0012BlobDeletion{})
		},
		Rollback: func(tx *gorm.DB) error {
			return tx.Migrator().DropTable("blob_deletions", "company_file_usage", "company_files")
		},
	}
}

type m0012Company struct {
	ID string `gorm:"primaryKey;size:36"`
}

func (m0012Company) TableName() string { return "companies" }

type m0012CompanyFile struct {
	ID          string        `gorm:"primaryKey;size:36"`
	CompanyID   string        `gorm:"size:36;not null;uniqueIndex:idx_company_files_path,priority:1"`
	Company     *m0012Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	Path        string        `gorm:"size:1024;not null;uniqueIndex:idx_company_files_path,priority:2"`
	BlobKey     string        `gorm:"size:128;not null"`
	SizeBytes   int64         `gorm:"not null"`
	ContentType string        `gorm:"size:255;not null"`
	Source      string        `gorm:"size:64;not null"`
	CreatedAt   time.Time     `gorm:"not null"`
	UpdatedAt   time.Time     `gorm:"not null"`
}

func (m0012CompanyFile) TableName() string { return "company_files" }

type m0012CompanyFileUsage struct {
	CompanyID string        `gorm:"primaryKey;size:36"`
	Company   *m0012Company `gorm:"foreignKey:CompanyID;constraint:OnDelete:CASCADE"`
	FileCount int64         `gorm:"not null"`
	Bytes     int64         `gorm:"not null"`
}

func (m0012CompanyFileUsage) TableName() string { return "company_file_usage" }

// Blob deletions outlive their company (no foreign key): the blobs of a
// removed company must still be deleted.
type m0012BlobDeletion struct {
	BlobKey     string    `gorm:"primaryKey;size:128"`
	CompanyID   string    `gorm:"size:36;not null"`
	DeleteAfter time.Time `gorm:"not null;index:idx_blob_deletions_delete_after"`
	Attempts    int       `gorm:"not null"`
	CreatedAt   time.Time `gorm:"not null"`
}

func (m0012BlobDeletion) TableName() string { return "blob_deletions" }
