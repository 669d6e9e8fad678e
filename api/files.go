package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"

	"holdco/models"
	"holdco/service"
	"holdco/service/files"
	"holdco/service/identity"
)

// CompanyFileResponse is one of a company's files.
type CompanyFileResponse struct {
	ID          string    `json:"id" format:"uuid"`
	CompanyID   string    `json:"company_id" format:"uuid"`
	Path        string    `json:"path" doc:"Normalized path (NFC, segments separated by /); unique per company."`
	Name        string    `json:"name" doc:"Last segment of the path: what a download is saved as."`
	SizeBytes   int64     `json:"size_bytes"`
	ContentType string    `json:"content_type"`
	Source      string    `json:"source" doc:"Who stored it: upload (REST), agent, connector, …"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at" doc:"Changes when an upload to the same path replaces the file."`
}

// FileListResponse is a company's files with their usage and limits.
type FileListResponse struct {
	Files        []CompanyFileResponse `json:"files" doc:"Ordered by path (byte order)."`
	FileCount    int64                 `json:"file_count"`
	UsedBytes    int64                 `json:"used_bytes"`
	QuotaBytes   int64                 `json:"quota_bytes" doc:"What one company's files may take in all."`
	MaxFileBytes int64                 `json:"max_file_bytes" doc:"The largest file accepted."`
}

// PrefixDeleteResponse is what a folder delete removed.
type PrefixDeleteResponse struct {
	Prefix       string `json:"prefix" doc:"The prefix as applied: normalized, ending in exactly one /."`
	DeletedCount int64  `json:"deleted_count"`
	DeletedBytes int64  `json:"deleted_bytes"`
}

func toFileResponse(f models.CompanyFile) CompanyFileResponse {
	return CompanyFileResponse{ID: f.ID, CompanyID: f.CompanyID, Path: f.Path, Name: files.Name(f.Path), SizeBytes: f.SizeBytes,
		ContentType: f.ContentType, Source: f.Source, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

type fileHandlers struct {
	svc    *files.Service
	auth   *identity.Service
	logger *slog.Logger
}

// formOverheadBytes is what a multipart body may hold besides the file
// (boundaries, part headers, the path and source fields): the
// Content-Length pre-check refuses a body larger than the file limit plus
// this, and the body as a whole is capped at it.
const formOverheadBytes = 64 << 10

// maxFieldBytes bounds the path and source fields.
const maxFieldBytes = 4 << 10

const uploadPath = "/companies/{company_id}/files"

func registerFileRoutes(api huma.API, engine *gin.Engine, h *fileHandlers) {
	tags := []string{"files"}
	// The upload is a gin handler: huma would read the whole multipart body
	// before any handler runs, and authentication, ownership, the rate
	// limit and the size pre-check must come before the body is read. The
	// operation is still documented here.
	documentUpload(api.OpenAPI(), tags)
	engine.POST("/companies/:company_id/files", h.upload)

	huma.Register(api, huma.Operation{OperationID: "list-files", Method: http.MethodGet, Path: uploadPath,
		Tags: tags, Summary: "List a company's files", Security: bearerSecurity,
		Description: "A flat list ordered by path, with the usage totals and the limits."}, h.list)
	huma.Register(api, huma.Operation{OperationID: "delete-files-under-prefix", Method: http.MethodDelete, Path: uploadPath,
		Tags: tags, Summary: "Delete a folder", Security: bearerSecurity,
		Description: "Deletes every file whose path starts with `prefix`, normalized to end in exactly one `/` (`a` and `a/` delete `a/x`, never `ab/x`). " +
			"Rows are deleted first, in one transaction; then the blobs (a blob whose delete fails is removed by the worker's sweeper)."}, h.deletePrefix)
	huma.Register(api, huma.Operation{OperationID: "delete-file", Method: http.MethodDelete, Path: uploadPath + "/{file_id}",
		Tags: tags, Summary: "Delete a file", Security: bearerSecurity, DefaultStatus: http.StatusNoContent,
		Description: "The row first, then a best-effort blob delete; the worker's sweeper removes a blob left behind. " +
			"404 when missing, 403 when the file is another company's."}, h.deleteOne)
	huma.Register(api, huma.Operation{OperationID: "download-file", Method: http.MethodGet, Path: uploadPath + "/{file_id}/download",
		Tags: tags, Summary: "Download a file", Security: bearerSecurity, DefaultStatus: http.StatusFound,
		Description: "302 to a short-lived signed URL (5 minutes by default) on the sites origin or the object store, never the API's origin. " +
			"The URL is a credential: it is not logged, and the answer is not cached.",
		Responses: map[string]*huma.Response{"302": {Description: "Redirect to the signed download URL", Headers: map[string]*huma.Param{
			"Location":      {Description: "The signed URL", Schema: &huma.Schema{Type: "string", Format: "uri"}},
			"Cache-Control": {Description: "no-store", Schema: &huma.Schema{Type: "string"}},
		}}}}, h.download)
}

// documentUpload adds the upload operation to the OpenAPI document (its
// handler is the gin route).
func documentUpload(oapi *huma.OpenAPI, tags []string) {
	reg := oapi.Components.Schemas
	errorRef := &huma.MediaType{Schema: reg.Schema(reflect.TypeFor[models.ErrorBody](), true, "ErrorBody")}
	errResp := func(desc string) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": errorRef}}
	}
	oapi.AddOperation(&huma.Operation{
		OperationID: "upload-file", Method: http.MethodPost, Path: uploadPath, Tags: tags, Security: bearerSecurity,
		Summary: "Upload a file",
		Description: "Multipart form: `file` (required), `path` and `source` (optional). Authentication, ownership and the rate limit " +
			"(60 uploads a minute per company, bursts of 20; 429 with Retry-After) are checked before the body is read, and a Content-Length " +
			"that cannot fit the per-file limit or the quota left is refused at once with 413 `too_large` and the numbers " +
			"(`limit_bytes` or `used_bytes` and `quota_bytes`, with `size_bytes`). A body without Content-Length (chunked) is streamed " +
			"and cut at the limit with the same 413. `path` defaults to the file's name; a path ending in `/` is a folder the file goes into. " +
			"Paths are normalized to NFC and refused (422) with `..` or `.` segments, a leading `/`, empty segments, NUL, control characters " +
			"or backslashes, over 1024 bytes or 255 per segment. Uploading to a path that holds a file replaces it: same id, new content.",
		Parameters: []*huma.Param{{Name: "company_id", In: "path", Required: true, Schema: &huma.Schema{Type: "string", Format: "uuid"}}},
		RequestBody: &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"multipart/form-data": {Schema: &huma.Schema{
			Type:     "object",
			Required: []string{"file"},
			Properties: map[string]*huma.Schema{
				"file":   {Type: "string", Format: "binary", Description: "The file; its part's Content-Type is stored and served on download."},
				"path":   {Type: "string", MaxLength: intPtr(files.MaxPathBytes), Description: "Where the file goes; default: its file name."},
				"source": {Type: "string", MaxLength: intPtr(files.MaxSourceLength), Description: "Who stores it (lower-case label); default upload."},
			},
		}}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "The stored file", Content: map[string]*huma.MediaType{"application/json": {Schema: reg.Schema(reflect.TypeFor[CompanyFileResponse](), true, "CompanyFileResponse")}}},
			"401": errResp("No or invalid credential"),
			"403": errResp("Another account's company"),
			"404": errResp("No such company"),
			"413": errResp("Over the per-file limit or the company's quota"),
			"415": errResp("Not a multipart/form-data body"),
			"429": errResp("Upload rate limit"),
		},
	})
}

func intPtr(n int) *int { return &n }

// upload is POST /companies/{company_id}/files. Everything that can refuse
// the request without its body runs first; such a refusal closes the
// connection rather than wait for a body that may never come.
func (h *fileHandlers) upload(c *gin.Context) {
	r := c.Request
	if typ, msg := textFailure(c.Param("company_id"), ruleSingleLine); typ != "" {
		h.refuse(c, &HTTPValidationError{Detail: []ValidationError{{Loc: []any{"path", "company_id"}, Msg: msg, Type: typ}}})
		return
	}
	companyID, ok := canonicalUUID(c.Param("company_id"))
	if !ok {
		h.refuse(c, &HTTPValidationError{Detail: []ValidationError{{Loc: []any{"path", "company_id"}, Msg: "Input should be a valid UUID", Type: "uuid_parsing"}}})
		return
	}
	p, err := h.auth.Authenticate(r.Context(), bearerToken(r.Header.Get("Authorization")))
	if err != nil {
		h.refuse(c, err)
		return
	}
	ctx := service.WithPrincipal(r.Context(), p)
	maxBytes := int64(-1)
	if r.ContentLength >= 0 {
		maxBytes = max(r.ContentLength-formOverheadBytes, 0)
	}
	adm, err := h.svc.Admit(ctx, companyID, maxBytes)
	if err != nil {
		h.refuse(c, err)
		return
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		h.refuse(c, models.Errorf(models.CodeUnsupportedMediaType, "Send the file as multipart/form-data with a file field."))
		return
	}
	body := http.MaxBytesReader(c.Writer, r.Body, h.svc.Limits().MaxFileBytes+formOverheadBytes)
	f, err := h.readForm(ctx, adm, multipart.NewReader(body, params["boundary"]))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			err = models.Errorf(models.CodeTooLarge, "The request body is larger than the file limit of %d bytes plus %d bytes of form.", h.svc.Limits().MaxFileBytes, formOverheadBytes).
				With("limit_bytes", h.svc.Limits().MaxFileBytes)
		}
		if models.IsCode(err, models.CodeTooLarge) {
			h.refuse(c, err) // the rest of the body is not wanted
			return
		}
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, toFileResponse(f))
}

// readForm reads the parts in any order: path and source are small
// fields; the file is streamed to the blob store as it arrives and becomes
// a file once every part has been read.
func (h *fileHandlers) readForm(ctx context.Context, adm *files.Admission, mr *multipart.Reader) (models.CompanyFile, error) {
	var path, source string
	var staged *files.Staged
	var filename string
	discard := func() {
		if staged != nil {
			staged.Discard(context.WithoutCancel(ctx))
		}
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			discard()
			if errors.As(err, new(*http.MaxBytesError)) {
				return models.CompanyFile{}, err
			}
			return models.CompanyFile{}, models.Errorf(models.CodeBadRequest, "The multipart body is malformed.").Wrap(err)
		}
		switch name := part.FormName(); name {
		case "path", "source":
			b, err := io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
			if err != nil {
				discard()
				return models.CompanyFile{}, models.Errorf(models.CodeBadRequest, "The multipart body is malformed.").Wrap(err)
			}
			if len(b) > maxFieldBytes {
				discard()
				return models.CompanyFile{}, models.Errorf(models.CodeInvalidArgument, "The %s field is longer than %d bytes.", name, maxFieldBytes).WithField(name)
			}
			if typ, msg := textFailure(string(b), ruleSingleLine); typ != "" {
				discard()
				return models.CompanyFile{}, &HTTPValidationError{Detail: []ValidationError{{Loc: []any{"body", name}, Msg: msg, Type: typ}}}
			}
			if name == "path" {
				path = string(b)
			} else {
				source = string(b)
			}
		case "file":
			if staged != nil {
				discard()
				return models.CompanyFile{}, models.Errorf(models.CodeInvalidArgument, "Send one file per upload.").WithField("file")
			}
			filename = part.FileName()
			if path != "" {
				if _, err := files.NormalizePath(path, filename); err != nil {
					return models.CompanyFile{}, err // refused before the file is stored
				}
			}
			if staged, err = adm.Stage(ctx, part, -1, part.Header.Get("Content-Type")); err != nil {
				return models.CompanyFile{}, err
			}
		default:
			// Unknown fields are ignored, as in JSON bodies (the whole
			// body is capped).
			if _, err := io.Copy(io.Discard, part); err != nil {
				discard()
				return models.CompanyFile{}, models.Errorf(models.CodeBadRequest, "The multipart body is malformed.").Wrap(err)
			}
		}
	}
	if staged == nil {
		return models.CompanyFile{}, &HTTPValidationError{Detail: []ValidationError{{Loc: []any{"body", "file"}, Msg: "Field required", Type: "missing"}}}
	}
	return staged.Commit(ctx, path, filename, source)
}

// refuse answers before the body was read: the connection is closed after
// the answer (full duplex, so the server writes it without first
// draining a body that may never arrive).
func (h *fileHandlers) refuse(c *gin.Context, err error) {
	_ = http.NewResponseController(c.Writer).EnableFullDuplex()
	c.Header("Connection", "close")
	h.fail(c, err)
}

// fail renders err like the huma operations do.
func (h *fileHandlers) fail(c *gin.Context, err error) {
	var ve *HTTPValidationError
	if errors.As(err, &ve) {
		writeJSON(c.Writer, http.StatusUnprocessableEntity, ve)
		return
	}
	var de *models.Error
	if !errors.As(err, &de) {
		h.logger.ErrorContext(c.Request.Context(), "request failed: upload", "error", err)
		writeError(c.Writer, models.CodeInternal, "An unexpected error occurred; it has been logged. Retry, and contact support with the X-Request-Id if it persists.")
		return
	}
	status := StatusOf(de.Code)
	switch {
	case de.Code == models.CodeInvalidArgument:
		writeJSON(c.Writer, http.StatusUnprocessableEntity, &HTTPValidationError{Detail: []ValidationError{{Loc: []any{"body", orBody(de.Field)}, Msg: de.Detail, Type: "value_error"}}})
		return
	case status >= 500:
		h.logger.ErrorContext(c.Request.Context(), "request failed: upload", "error", de)
	case status == http.StatusUnauthorized:
		c.Header("WWW-Authenticate", "Bearer")
	}
	setRetryAfter(c.Writer.Header(), de)
	body := models.BodyOf(de)
	writeJSON(c.Writer, status, body)
}

func orBody(field string) string {
	if field == "" {
		return "file"
	}
	return field
}

// setRetryAfter turns a rate_limited error's retry_after_seconds into the
// Retry-After header.
func setRetryAfter(h http.Header, de *models.Error) {
	if v, ok := de.Extra["retry_after_seconds"].(int64); ok && de.Code == models.CodeRateLimited {
		h.Set("Retry-After", strconv.FormatInt(max(v, 1), 10))
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

type fileListOutput struct{ Body FileListResponse }

func (h *fileHandlers) list(ctx context.Context, in *companyIDInput) (*fileListOutput, error) {
	l, err := h.svc.List(ctx, in.CompanyID)
	if err != nil {
		return nil, err
	}
	out := &fileListOutput{Body: FileListResponse{Files: make([]CompanyFileResponse, 0, len(l.Files)), FileCount: l.FileCount,
		UsedBytes: l.UsedBytes, QuotaBytes: l.QuotaBytes, MaxFileBytes: l.MaxFileBytes}}
	for _, f := range l.Files {
		out.Body.Files = append(out.Body.Files, toFileResponse(f))
	}
	return out, nil
}

type prefixDeleteInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	Prefix    string `query:"prefix" required:"true" minLength:"1" maxLength:"1024" doc:"A folder: normalized to end in exactly one /."`
}

type prefixDeleteOutput struct{ Body PrefixDeleteResponse }

func (h *fileHandlers) deletePrefix(ctx context.Context, in *prefixDeleteInput) (*prefixDeleteOutput, error) {
	res, err := h.svc.DeletePrefix(ctx, in.CompanyID, in.Prefix)
	if err != nil {
		return nil, err
	}
	return &prefixDeleteOutput{Body: PrefixDeleteResponse{Prefix: res.Prefix, DeletedCount: res.DeletedCount, DeletedBytes: res.DeletedBytes}}, nil
}

type fileIDInput struct {
	CompanyID string `path:"company_id" format:"uuid"`
	FileID    string `path:"file_id" format:"uuid"`
}

func (h *fileHandlers) deleteOne(ctx context.Context, in *fileIDInput) (*struct{}, error) {
	return nil, h.svc.Delete(ctx, in.CompanyID, in.FileID)
}

type downloadOutput struct {
	Location     string `header:"Location"`
	CacheControl string `header:"Cache-Control"`
}

func (h *fileHandlers) download(ctx context.Context, in *fileIDInput) (*downloadOutput, error) {
	d, err := h.svc.DownloadURL(ctx, in.CompanyID, in.FileID)
	if err != nil {
		return nil, err
	}
	return &downloadOutput{Location: d.URL, CacheControl: "no-store"}, nil
}
