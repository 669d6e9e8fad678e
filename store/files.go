package store

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// Files: a company's files are rows naming blobs on object storage. Every
// change takes the company's usage row first (FOR UPDATE on Postgres; on
// SQLite transactions are IMMEDIATE), so the quota holds under concurrent
// uploads and two uploads to one path are serialized. A blob that a change
// orphans gets a blob_deletions row in the same transaction, which the
// worker's sweeper (or the caller right after the commit) turns into a
// delete on object storage.

// ErrUploadExpired: an upload's blob was claimed by the sweeper before the
// upload committed (it took longer than its grace); nothing was written.
var ErrUploadExpired = errors.New("store: upload expired before its commit")

// FileQuotaError is CommitFile's answer when the file does not fit in the
// company's quota; nothing was written.
type FileQuotaError struct {
	UsedBytes, QuotaBytes, SizeBytes int64
}

func (e *FileQuotaError) Error() string {
	return fmt.Sprintf("store: file quota: %d bytes used of %d, %d more asked", e.UsedBytes, e.QuotaBytes, e.SizeBytes)
}

// lockFileUsage creates the company's usage row if needed and returns it
// locked for the rest of the transaction.
func (s *Store) lockFileUsage(companyID string) (models.CompanyFileUsage, error) {
	if err := s.db.Clauses(clause.OnConflict{DoNothing: true}).Create(&models.CompanyFileUsage{CompanyID: companyID}).Error; err != nil {
		return models.CompanyFileUsage{}, err
	}
	q := s.db.Model(&models.CompanyFileUsage{}).Where("company_id = ?", companyID)
	if s.dialect == DialectPostgres {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var u models.CompanyFileUsage
	err := q.Take(&u).Error
	return u, err
}

func (s *Store) addFileUsage(companyID string, files, bytes int64) error {
	return s.db.Exec("UPDATE company_file_usage SET file_count = file_count + ?, bytes = bytes + ? WHERE company_id = ?", files, bytes, companyID).Error
}

// RecordUploadIntent records an upload's blob before it is written: until
// CommitFile removes the record, the sweeper deletes the blob from
// deleteAfter on (a crash or a failed upload leaves nothing behind).
func (s Files) RecordUploadIntent(ctx context.Context, scope CompanyScope, blobKey string, deleteAfter time.Time) error {
	if err := scope.check("record upload intent"); err != nil {
		return err
	}
	// A keyed upload tried again after a crash finds its own intent.
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&models.BlobDeletion{BlobKey: blobKey, CompanyID: scope.id, DeleteAfter: deleteAfter.UTC(), CreatedAt: now()}).Error
	return wrap("record upload intent", err)
}

// FileByBlobKey is the company's file whose content is the blob key
// (models.ErrNotFound when none is): a keyed upload's blob key names its
// call, so the same call made again finds the file it stored.
func (s Files) FileByBlobKey(ctx context.Context, scope CompanyScope, blobKey string) (models.CompanyFile, error) {
	var f models.CompanyFile
	if err := scope.check("file by blob key"); err != nil {
		return f, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ? AND blob_key = ?", scope.id, blobKey).Take(&f).Error
	return f, wrap("file by blob key", err)
}

// CommitFile stores f (its blob already written under f.BlobKey, recorded
// by RecordUploadIntent) at f.Path. A file already at that path is
// replaced: the row keeps its id and creation time, takes the new blob,
// and the old blob is queued for deletion (returned as replaced, to be
// deleted by the caller after the commit). The company's usage after the
// change must stay within quotaBytes (a smaller replacement always
// passes), else *FileQuotaError. ErrUploadExpired when the sweeper has
// claimed the blob already.
func (s Files) CommitFile(ctx context.Context, scope CompanyScope, f models.CompanyFile, quotaBytes int64) (saved models.CompanyFile, replaced *models.CompanyFile, err error) {
	if err := scope.check("commit file"); err != nil {
		return models.CompanyFile{}, nil, err
	}
	f.CompanyID = scope.id
	at := now()
	err = s.store().InTx(ctx, func(tx *Store) error {
		usage, err := tx.lockFileUsage(scope.id)
		if err != nil {
			return err
		}
		var old models.CompanyFile
		found := true
		if err := tx.db.Where("company_id = ? AND path = ?", scope.id, f.Path).Take(&old).Error; err != nil {
			if !errors.Is(translate(err), models.ErrNotFound) {
				return err
			}
			found = false
		}
		delta, files := f.SizeBytes, int64(1)
		if found {
			delta, files = f.SizeBytes-old.SizeBytes, 0
		}
		if delta > 0 && usage.Bytes+delta > quotaBytes {
			return &FileQuotaError{UsedBytes: usage.Bytes, QuotaBytes: quotaBytes, SizeBytes: f.SizeBytes}
		}
		res := tx.db.Where("blob_key = ? AND company_id = ? AND attempts = 0", f.BlobKey, scope.id).Delete(&models.BlobDeletion{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrUploadExpired
		}
		if found {
			f.ID, f.CreatedAt, f.UpdatedAt = old.ID, old.CreatedAt, at
			if err := tx.db.Model(&models.CompanyFile{}).Where("id = ?", old.ID).Updates(map[string]any{
				"blob_key": f.BlobKey, "size_bytes": f.SizeBytes, "content_type": f.ContentType, "source": f.Source, "updated_at": at,
			}).Error; err != nil {
				return err
			}
			if err := tx.db.Create(&models.BlobDeletion{BlobKey: old.BlobKey, CompanyID: scope.id, DeleteAfter: at, CreatedAt: at}).Error; err != nil {
				return err
			}
			replaced = &old
		} else {
			f.ID, f.CreatedAt, f.UpdatedAt = uuid.NewString(), at, at
			if err := tx.db.Create(&f).Error; err != nil {
				return err
			}
		}
		return tx.addFileUsage(scope.id, files, delta)
	})
	var qe *FileQuotaError
	switch {
	case errors.As(err, &qe), errors.Is(err, ErrUploadExpired):
		return models.CompanyFile{}, nil, err
	case err != nil:
		return models.CompanyFile{}, nil, wrap("commit file", err)
	}
	return f, replaced, nil
}

// FileUsage is how many files the company keeps and their bytes, in one
// query.
func (s Files) FileUsage(ctx context.Context, scope CompanyScope) (count, bytes int64, err error) {
	if err := scope.check("file usage"); err != nil {
		return 0, 0, err
	}
	var u []models.CompanyFileUsage
	if err := s.db.WithContext(ctx).Where("company_id = ?", scope.id).Limit(1).Find(&u).Error; err != nil {
		return 0, 0, wrap("file usage", err)
	}
	if len(u) == 0 {
		return 0, 0, nil
	}
	return u[0].FileCount, u[0].Bytes, nil
}

// pathOrder sorts paths by their bytes on both dialects (Postgres would
// otherwise use the database's collation).
func (s *Store) pathOrder() string {
	if s.dialect == DialectPostgres {
		return `path COLLATE "C"`
	}
	return "path"
}

// ListFiles returns the company's files ordered by path (byte order).
func (s Files) ListFiles(ctx context.Context, scope CompanyScope) ([]models.CompanyFile, error) {
	if err := scope.check("list files"); err != nil {
		return nil, err
	}
	out := []models.CompanyFile{}
	err := s.db.WithContext(ctx).Where("company_id = ?", scope.id).Order(s.store().pathOrder()).Find(&out).Error
	return out, wrap("list files", err)
}

// GetFile reads one of the company's files; another company's or a
// missing one is models.ErrNotFound.
func (s Files) GetFile(ctx context.Context, scope CompanyScope, id string) (models.CompanyFile, error) {
	var f models.CompanyFile
	if err := scope.check("get file"); err != nil {
		return f, err
	}
	err := s.db.WithContext(ctx).Where("id = ? AND company_id = ?", id, scope.id).Take(&f).Error
	return f, wrap("get file", err)
}

// FileCompany is the company a file belongs to, for telling a missing file
// (404) from another tenant's (403) after the authorization step. It
// reveals no more than that the id exists.
func (s Files) FileCompany(ctx context.Context, id string) (string, error) {
	var ids []string
	if err := s.db.WithContext(ctx).Model(&models.CompanyFile{}).Where("id = ?", id).Limit(1).Pluck("company_id", &ids).Error; err != nil {
		return "", wrap("file company", err)
	}
	if len(ids) == 0 {
		return "", wrap("file company", models.ErrNotFound)
	}
	return ids[0], nil
}

// DeleteFile deletes one of the company's files and queues its blob for
// deletion, in one transaction; the caller then deletes the blob
// (DeleteBlobNow). A missing file is models.ErrNotFound.
func (s Files) DeleteFile(ctx context.Context, scope CompanyScope, id string) (models.CompanyFile, error) {
	if err := scope.check("delete file"); err != nil {
		return models.CompanyFile{}, err
	}
	var f models.CompanyFile
	err := s.store().InTx(ctx, func(tx *Store) error {
		if _, err := tx.lockFileUsage(scope.id); err != nil {
			return err
		}
		if err := tx.db.Where("id = ? AND company_id = ?", id, scope.id).Take(&f).Error; err != nil {
			return err
		}
		return tx.deleteFileRows(scope.id, []models.CompanyFile{f})
	})
	return f, wrap("delete file", err)
}

// DeleteFilesUnderPrefix deletes every file of the company whose path
// starts with prefix (the caller makes it end in "/", so only whole
// segments match) and queues their blobs, in one transaction.
func (s Files) DeleteFilesUnderPrefix(ctx context.Context, scope CompanyScope, prefix string) ([]models.CompanyFile, error) {
	if err := scope.check("delete files under prefix"); err != nil {
		return nil, err
	}
	var files []models.CompanyFile
	err := s.store().InTx(ctx, func(tx *Store) error {
		if _, err := tx.lockFileUsage(scope.id); err != nil {
			return err
		}
		// substr counts characters on both dialects; LIKE would need its
		// wildcards escaped.
		if err := tx.db.Where("company_id = ? AND substr(path, 1, ?) = ?", scope.id, utf8.RuneCountInString(prefix), prefix).
			Order(tx.pathOrder()).Find(&files).Error; err != nil {
			return err
		}
		return tx.deleteFileRows(scope.id, files)
	})
	return files, wrap("delete files under prefix", err)
}

// deleteFileRows deletes files (locked usage row held) and queues their
// blobs.
func (s *Store) deleteFileRows(companyID string, files []models.CompanyFile) error {
	if len(files) == 0 {
		return nil
	}
	at := now()
	ids := make([]string, len(files))
	dels := make([]models.BlobDeletion, len(files))
	var bytes int64
	for i, f := range files {
		ids[i] = f.ID
		dels[i] = models.BlobDeletion{BlobKey: f.BlobKey, CompanyID: companyID, DeleteAfter: at, CreatedAt: at}
		bytes += f.SizeBytes
	}
	for chunk := range chunks(ids, 500) {
		if err := s.db.Where("company_id = ? AND id IN ?", companyID, chunk).Delete(&models.CompanyFile{}).Error; err != nil {
			return err
		}
	}
	if err := s.db.CreateInBatches(dels, 500).Error; err != nil {
		return err
	}
	return s.addFileUsage(companyID, -int64(len(files)), -bytes)
}

func chunks[T any](xs []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(xs) > 0 {
			k := min(n, len(xs))
			if !yield(xs[:k]) {
				return
			}
			xs = xs[k:]
		}
	}
}

// BlobDeleted forgets a queued deletion once its blob is gone from object
// storage (the caller deleted it right after its commit).
func (s Files) BlobDeleted(ctx context.Context, scope CompanyScope, blobKey string) error {
	if err := scope.check("blob deleted"); err != nil {
		return err
	}
	err := s.db.WithContext(ctx).Where("blob_key = ? AND company_id = ?", blobKey, scope.id).Delete(&models.BlobDeletion{}).Error
	return wrap("blob deleted", err)
}

// DueBlobDeletions returns up to limit queued blob deletions due at at,
// oldest first, across tenants: for the worker's sweeper only (the rows
// hold random keys, nothing of a tenant's content).
func (s Files) DueBlobDeletions(ctx context.Context, at time.Time, limit int) ([]models.BlobDeletion, error) {
	var out []models.BlobDeletion
	err := s.db.WithContext(ctx).Where("delete_after <= ?", at.UTC()).Order("delete_after, blob_key").Limit(limit).Find(&out).Error
	return out, wrap("due blob deletions", err)
}

// ClaimBlobDeletion marks a due deletion as being worked on by the
// sweeper: its next attempt is at retryAt, and an upload whose blob it is
// can no longer commit. false when the row is gone or not due (an upload
// committed, or another sweeper claimed it).
func (s Files) ClaimBlobDeletion(ctx context.Context, blobKey string, at, retryAt time.Time) (bool, error) {
	res := s.db.WithContext(ctx).Model(&models.BlobDeletion{}).Where("blob_key = ? AND delete_after <= ?", blobKey, at.UTC()).
		Updates(map[string]any{"attempts": clause.Expr{SQL: "attempts + 1"}, "delete_after": retryAt.UTC()})
	return res.RowsAffected == 1, wrap("claim blob deletion", res.Error)
}

// CompleteBlobDeletion forgets a claimed deletion whose blob is gone.
func (s Files) CompleteBlobDeletion(ctx context.Context, blobKey string) error {
	err := s.db.WithContext(ctx).Where("blob_key = ?", blobKey).Delete(&models.BlobDeletion{}).Error
	return wrap("complete blob deletion", err)
}
