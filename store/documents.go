package store

import (
	"context"
	"errors"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"holdco/models"
)

// documentSummaryColumns are the columns of a document without its content.
const documentSummaryColumns = "document_type, title, visibility, size_bytes, revision, updated_by, updated_at"

// ListDocuments returns the scope's company's documents without content,
// ordered by type; internal ones only when includeInternal.
func (s Companies) ListDocuments(ctx context.Context, c CompanyScope, includeInternal bool) ([]models.DocumentSummary, error) {
	if err := c.check("list documents"); err != nil {
		return nil, err
	}
	q := s.db.WithContext(ctx).Model(&models.Document{}).Select(documentSummaryColumns).Where("company_id = ?", c.id)
	if !includeInternal {
		q = q.Where("visibility = ?", models.DocumentVisible)
	}
	docs := []models.DocumentSummary{}
	err := q.Order("document_type").Scan(&docs).Error
	return docs, wrap("list documents", err)
}

// GetDocument returns the scope's company's document of that type, or
// models.ErrNotFound.
func (s Companies) GetDocument(ctx context.Context, c CompanyScope, docType string) (models.Document, error) {
	var d models.Document
	if err := c.check("get document"); err != nil {
		return d, err
	}
	err := s.db.WithContext(ctx).Where("company_id = ? AND document_type = ?", c.id, docType).Take(&d).Error
	return d, wrap("get document", err)
}

// PutDocument creates or replaces the scope's company's document of d's
// type and records the activity event with it. It answers the stored row
// and whether it was created. The revision counts replacements, so
// readers can tell versions apart.
func (s Companies) PutDocument(ctx context.Context, c CompanyScope, d models.Document, event models.ActivityInput) (models.Document, bool, error) {
	if err := c.check("put document"); err != nil {
		return d, false, err
	}
	created := false
	err := s.store().InTx(ctx, func(tx *Store) error {
		var old models.Document
		q := tx.db.WithContext(ctx)
		if tx.dialect == DialectPostgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"}) // SQLite transactions already write-lock
		}
		err := q.Select("created_at, revision").Where("company_id = ? AND document_type = ?", c.id, d.DocumentType).Take(&old).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			created = true
		case err != nil:
			return wrap("put document", err)
		}
		at := now()
		d.CompanyID, d.UpdatedAt, d.SizeBytes = c.id, at, int64(len(d.Content))
		if created {
			d.CreatedAt, d.Revision = at, 1
		} else {
			d.CreatedAt, d.Revision = old.CreatedAt, old.Revision+1
		}
		// The upsert also covers two creators racing past the read.
		if err := tx.db.WithContext(ctx).Clauses(clause.OnConflict{
			Columns: []clause.Column{{Name: "company_id"}, {Name: "document_type"}},
			DoUpdates: clause.Assignments(map[string]any{
				"title": d.Title, "content": d.Content, "visibility": d.Visibility, "size_bytes": d.SizeBytes,
				"updated_by": d.UpdatedBy, "updated_at": d.UpdatedAt,
				"revision": clause.Expr{SQL: tx.existing("company_documents", "revision") + " + 1"},
			}),
		}).Create(&d).Error; err != nil {
			return wrap("put document", err)
		}
		if event.Data == nil {
			event.Data = map[string]any{}
		}
		event.Data["created"], event.Data["revision"], event.Data["size_bytes"] = created, d.Revision, d.SizeBytes
		return tx.Companies().RecordActivity(ctx, c, event)
	})
	return d, created, err
}

// DeleteDocument deletes the scope's company's document of that type and
// records the event with it; models.ErrNotFound when there is none.
func (s Companies) DeleteDocument(ctx context.Context, c CompanyScope, docType string, event models.ActivityInput) error {
	if err := c.check("delete document"); err != nil {
		return err
	}
	return s.store().InTx(ctx, func(tx *Store) error {
		res := tx.db.WithContext(ctx).Where("company_id = ? AND document_type = ?", c.id, docType).Delete(&models.Document{})
		if res.Error != nil {
			return wrap("delete document", res.Error)
		}
		if res.RowsAffected == 0 {
			return wrap("delete document", models.ErrNotFound)
		}
		return tx.Companies().RecordActivity(ctx, c, event)
	})
}

// RecentDocuments returns the scope's company's visible documents most
// recently updated first, at most limit of them, and whether there are
// more: one index range of limit+1 rows, for the dashboard (a count would
// read every document).
func (s Companies) RecentDocuments(ctx context.Context, c CompanyScope, limit int) ([]models.DocumentSummary, bool, error) {
	if err := c.check("recent documents"); err != nil {
		return nil, false, err
	}
	docs := []models.DocumentSummary{}
	err := s.db.WithContext(ctx).Model(&models.Document{}).Select(documentSummaryColumns).
		Where("company_id = ? AND visibility = ?", c.id, models.DocumentVisible).
		Order("updated_at DESC").Limit(limit + 1).Scan(&docs).Error
	if err != nil {
		return nil, false, wrap("recent documents", err)
	}
	if len(docs) > limit {
		return docs[:limit], true, nil
	}
	return docs, false, nil
}
