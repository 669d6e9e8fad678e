package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"holdco/models"
	"holdco/service/documents"
)

// DocumentSummaryResponse is a document in a list (without its content).
type DocumentSummaryResponse struct {
	DocumentType string    `json:"document_type" example:"strategy"`
	Title        string    `json:"title"`
	Visibility   string    `json:"visibility" enum:"visible,internal"`
	SizeBytes    int64     `json:"size_bytes"`
	Revision     int64     `json:"revision" doc:"1 when created, one more on every replacement."`
	UpdatedBy    string    `json:"updated_by" enum:"user,agent,customer,system"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// DocumentListResponse lists the visible documents of a company.
type DocumentListResponse struct {
	Documents []DocumentSummaryResponse `json:"documents"`
}

// DocumentResponse is one document with its Markdown content.
type DocumentResponse struct {
	CompanyID    string    `json:"company_id" format:"uuid"`
	DocumentType string    `json:"document_type"`
	Title        string    `json:"title"`
	Content      string    `json:"content" doc:"Markdown."`
	Visibility   string    `json:"visibility" enum:"visible,internal"`
	SizeBytes    int64     `json:"size_bytes"`
	Revision     int64     `json:"revision"`
	UpdatedBy    string    `json:"updated_by" enum:"user,agent,customer,system"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// UpsertDocumentRequest creates or replaces a document.
type UpsertDocumentRequest struct {
	Content    string  `json:"content" multiline:"true" doc:"Markdown, at most 262144 bytes (256 KiB) of UTF-8; more answers 413."`
	Title      *string `json:"title,omitempty" maxLength:"200" doc:"Defaults to the type's name (founding_plan → Founding plan)."`
	Visibility *string `json:"visibility,omitempty" enum:"visible,internal" doc:"Defaults to internal for agent_… types and visible otherwise. Internal documents are left out of the list."`
}

type documentHandlers struct{ svc *documents.Service }

// documentBodyLimit leaves room for JSON escaping around the largest
// content, so the size rule (413 with the numbers) answers, not the parser.
const documentBodyLimit = 4 * models.MaxDocumentBytes

func registerDocumentRoutes(api huma.API, h *documentHandlers) {
	tags := []string{"documents"}
	typeDoc := "Standard types: mission, founding_plan, strategy, brand, product, marketing, roadmap, customers, operations, agent_memory, agent_notes. " +
		"Any other lower-case slug (a letter, then letters, digits, `_` or `-`; at most 64 characters) is a custom type."
	huma.Register(api, huma.Operation{OperationID: "list-documents", Method: http.MethodGet, Path: "/companies/{company_id}/documents",
		Tags: tags, Summary: "List the company's visible documents", Security: bearerSecurity,
		Description: "Ordered by type, without content. Internal documents (the agents' working notes: agent_… types by default) are not listed; read them by type."}, h.list)
	huma.Register(api, huma.Operation{OperationID: "get-document", Method: http.MethodGet, Path: "/companies/{company_id}/documents/{document_type}",
		Tags: tags, Summary: "Get a document", Security: bearerSecurity, Description: typeDoc}, h.get)
	huma.Register(api, huma.Operation{OperationID: "upsert-document", Method: http.MethodPut, Path: "/companies/{company_id}/documents/{document_type}",
		Tags: tags, Summary: "Create or replace a document", Security: bearerSecurity, MaxBodyBytes: documentBodyLimit,
		Description: typeDoc + " One document per type: PUT replaces it whole. Content over 256 KiB answers 413 too_large with `size_bytes` and `limit_bytes`. " +
			"Every change is recorded in the activity feed."}, h.upsert)
	huma.Register(api, huma.Operation{OperationID: "delete-document", Method: http.MethodDelete, Path: "/companies/{company_id}/documents/{document_type}",
		Tags: tags, Summary: "Delete a document", Security: bearerSecurity, DefaultStatus: http.StatusNoContent}, h.delete)
}

func toDocumentResponse(d models.Document) DocumentResponse {
	return DocumentResponse{CompanyID: d.CompanyID, DocumentType: d.DocumentType, Title: d.Title, Content: d.Content,
		Visibility: string(d.Visibility), SizeBytes: d.SizeBytes, Revision: d.Revision, UpdatedBy: string(d.UpdatedBy),
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

func toDocumentSummaries(ds []models.DocumentSummary) []DocumentSummaryResponse {
	out := make([]DocumentSummaryResponse, 0, len(ds))
	for _, d := range ds {
		out = append(out, DocumentSummaryResponse{DocumentType: d.DocumentType, Title: d.Title, Visibility: string(d.Visibility),
			SizeBytes: d.SizeBytes, Revision: d.Revision, UpdatedBy: string(d.UpdatedBy), UpdatedAt: d.UpdatedAt})
	}
	return out
}

type documentListOutput struct{ Body DocumentListResponse }

func (h *documentHandlers) list(ctx context.Context, in *companyIDInput) (*documentListOutput, error) {
	ds, err := h.svc.List(ctx, in.CompanyID, documents.ListInput{})
	if err != nil {
		return nil, err
	}
	return &documentListOutput{Body: DocumentListResponse{Documents: toDocumentSummaries(ds)}}, nil
}

type documentInput struct {
	CompanyID    string `path:"company_id" format:"uuid"`
	DocumentType string `path:"document_type" maxLength:"64"`
}

type documentOutput struct{ Body DocumentResponse }

func (h *documentHandlers) get(ctx context.Context, in *documentInput) (*documentOutput, error) {
	d, err := h.svc.Get(ctx, in.CompanyID, in.DocumentType)
	if err != nil {
		return nil, err
	}
	return &documentOutput{Body: toDocumentResponse(d)}, nil
}

type upsertDocumentInput struct {
	CompanyID    string `path:"company_id" format:"uuid"`
	DocumentType string `path:"document_type" maxLength:"64"`
	Body         UpsertDocumentRequest
}

func (h *documentHandlers) upsert(ctx context.Context, in *upsertDocumentInput) (*documentOutput, error) {
	u := documents.UpsertInput{Content: in.Body.Content}
	if in.Body.Title != nil {
		u.Title = *in.Body.Title
	}
	if in.Body.Visibility != nil {
		u.Visibility = models.DocumentVisibility(*in.Body.Visibility)
	}
	d, _, err := h.svc.Upsert(ctx, in.CompanyID, in.DocumentType, u)
	if err != nil {
		return nil, err
	}
	return &documentOutput{Body: toDocumentResponse(d)}, nil
}

func (h *documentHandlers) delete(ctx context.Context, in *documentInput) (*struct{}, error) {
	return nil, h.svc.Delete(ctx, in.CompanyID, in.DocumentType)
}
