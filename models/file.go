package models

import "time"

// CompanyFile is one file a company keeps on object storage. The row holds
// what the company named it (Path) and its metadata; the bytes are a blob
// under BlobKey, a random key that never contains anything a user typed.
// A path is unique per company: uploading to it again replaces the file
// (same id, new blob).
type CompanyFile struct {
	ID          string    `gorm:"primaryKey;size:36"`
	CompanyID   string    `gorm:"size:36;not null;uniqueIndex:idx_company_files_path,priority:1"`
	Path        string    `gorm:"size:1024;not null;uniqueIndex:idx_company_files_path,priority:2"`
	BlobKey     string    `gorm:"size:128;not null;index:idx_company_files_blob_key"`
	SizeBytes   int64     `gorm:"not null"`
	ContentType string    `gorm:"size:255;not null"`
	Source      string    `gorm:"size:64;not null"`
	CreatedAt   time.Time `gorm:"not null"`
	UpdatedAt   time.Time `gorm:"not null"`
}

// CompanyFileUsage is what a company's files take: kept in the same
// transactions as the file rows, and locked by them, so the quota holds
// under concurrent uploads.
type CompanyFileUsage struct {
	CompanyID string `gorm:"primaryKey;size:36"`
	FileCount int64  `gorm:"not null"`
	Bytes     int64  `gorm:"not null"`
}

// TableName keeps the singular name: one row per company.
func (CompanyFileUsage) TableName() string { return "company_file_usage" }

// BlobDeletion is a blob that must end up removed from object storage:
// written in the same transaction as the row change that orphans it (a file
// deleted or replaced), or before an upload writes its blob (removed again
// when the upload commits). The worker's sweeper deletes the blobs of rows
// due at DeleteAfter, so neither a crash nor a failed delete leaves a blob
// behind.
type BlobDeletion struct {
	BlobKey   string `gorm:"primaryKey;size:128"`
	CompanyID string `gorm:"size:36;not null"`
	// DeleteAfter is when the sweeper may delete the blob: at once for an
	// orphaned blob, after the longest an upload may take for an upload's.
	DeleteAfter time.Time `gorm:"not null;index:idx_blob_deletions_delete_after"`
	// Attempts counts the sweeper's claims; an upload commits only while it
	// is 0 (the sweeper has not started deleting its blob).
	Attempts  int       `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

// BlobInfo describes one stored blob, as a blob store lists it (the value
// type the adapters under providers/blob return).
type BlobInfo struct {
	Key     string
	Size    int64
	ModTime time.Time
}
