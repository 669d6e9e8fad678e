// Package documents holds the use cases of a company's documents: one
// Markdown document per type (mission, founding plan, strategy, brand, …,
// or a custom lower-case slug), created or replaced whole. REST, the
// agents' tools and the connector call these functions, so the rules —
// types, visibility, the size limit, the activity event of every change —
// live only here.
package documents

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// Service is the documents use cases.
type Service struct {
	core  *service.Core
	store *store.Store
}

// New builds the documents use cases on core.
func New(core *service.Core) *Service { return &Service{core: core, store: core.Store()} }

// ListInput selects documents to list.
type ListInput struct {
	// IncludeInternal also lists the agents' internal documents (the
	// agents' own tools do; the company page does not).
	IncludeInternal bool
}

// List returns the company's documents without content, ordered by type.
func (s *Service) List(ctx context.Context, companyID string, in ListInput) ([]models.DocumentSummary, error) {
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return nil, err
	}
	return s.store.Companies().ListDocuments(ctx, c.Scope, in.IncludeInternal)
}

// Get returns the company's document of that type, internal ones included
// (whoever knows the type may read it).
func (s *Service) Get(ctx context.Context, companyID, docType string) (models.Document, error) {
	if err := CheckType(docType); err != nil {
		return models.Document{}, err
	}
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.Document{}, err
	}
	d, err := s.store.Companies().GetDocument(ctx, c.Scope, docType)
	if errors.Is(err, models.ErrNotFound) {
		return d, models.Errorf(models.CodeNotFound, "The company has no %s document.", docType).WithField("document_type")
	}
	return d, err
}

// UpsertInput is a document's new state. Title and Visibility are optional:
// an empty title becomes the type's readable name, an empty visibility the
// type's default (internal for agent_… types, visible otherwise).
type UpsertInput struct {
	Content    string
	Title      string
	Visibility models.DocumentVisibility
}

// Upsert creates or replaces the company's document of that type and
// answers it with whether it was created. Content over
// models.MaxDocumentBytes is too_large (413).
func (s *Service) Upsert(ctx context.Context, companyID, docType string, in UpsertInput) (models.Document, bool, error) {
	if err := CheckType(docType); err != nil {
		return models.Document{}, false, err
	}
	if n := len(in.Content); n > models.MaxDocumentBytes {
		return models.Document{}, false, models.Errorf(models.CodeTooLarge,
			"The document is %d bytes; a document holds at most %d bytes (256 KiB).", n, models.MaxDocumentBytes).
			WithField("content").With("size_bytes", n).With("limit_bytes", models.MaxDocumentBytes)
	}
	if err := service.CheckText(in.Content, true); err != nil {
		return models.Document{}, false, err.WithField("content")
	}
	title := strings.TrimSpace(in.Title)
	if title == "" {
		title = DefaultTitle(docType)
	}
	if utf8.RuneCountInString(title) > models.MaxDocumentTitleLen {
		return models.Document{}, false, models.Errorf(models.CodeInvalidArgument,
			"A title is at most %d characters.", models.MaxDocumentTitleLen).WithField("title")
	}
	if err := service.CheckText(title, false); err != nil {
		return models.Document{}, false, err.WithField("title")
	}
	vis := in.Visibility
	if vis == "" {
		vis = models.DefaultVisibility(docType)
	}
	if !vis.Valid() {
		return models.Document{}, false, models.Errorf(models.CodeInvalidArgument,
			"Visibility is %q or %q.", models.DocumentVisible, models.DocumentInternal).WithField("visibility")
	}
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.Document{}, false, err
	}
	actor := service.ActorOf(ctx)
	d := models.Document{DocumentType: docType, Title: title, Content: in.Content, Visibility: vis, UpdatedBy: actor}
	return s.store.Companies().PutDocument(ctx, c.Scope, d, models.ActivityInput{Kind: models.ActivityDocumentUpdated, Actor: actor,
		Summary: fmt.Sprintf("Document %q updated", title), Subject: docType,
		Data: map[string]any{"document_type": docType, "visibility": string(vis)}})
}

// Delete deletes the company's document of that type; a missing one is
// not_found.
func (s *Service) Delete(ctx context.Context, companyID, docType string) error {
	if err := CheckType(docType); err != nil {
		return err
	}
	c, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return err
	}
	err = s.store.Companies().DeleteDocument(ctx, c.Scope, docType, models.ActivityInput{Kind: models.ActivityDocumentDeleted,
		Actor: service.ActorOf(ctx), Summary: fmt.Sprintf("Document %s deleted", docType), Subject: docType,
		Data: map[string]any{"document_type": docType}})
	if errors.Is(err, models.ErrNotFound) {
		return models.Errorf(models.CodeNotFound, "The company has no %s document.", docType).WithField("document_type")
	}
	return err
}

// CheckType refuses a document type that is not a lower-case slug of 1 to
// 64 characters.
func CheckType(docType string) error {
	if !models.DocumentTypePattern.MatchString(docType) {
		return models.Errorf(models.CodeInvalidArgument,
			"A document type is a lower-case slug: a letter, then letters, digits, '_' or '-', at most %d characters.",
			models.MaxDocumentTypeLen).WithField("document_type")
	}
	return nil
}

// DefaultTitle is a type's readable name: "founding_plan" → "Founding plan".
func DefaultTitle(docType string) string {
	t := strings.NewReplacer("_", " ", "-", " ").Replace(docType)
	return strings.ToUpper(t[:1]) + t[1:]
}
