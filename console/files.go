package console

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"holdco/models"
	"holdco/service/documents"
	"holdco/service/files"
)

// formOverhead is what a multipart form adds around the file, at most.
const formOverhead = 16 << 10

type filesData struct {
	List   files.FileList
	Prefix string
	Shown  []models.CompanyFile
	More   bool
}

// filesShown bounds the files listed on one page (a prefix narrows it).
const filesShown = 200

func (c *Console) filesPage(w http.ResponseWriter, r *http.Request) {
	req, co, ok := c.openCompany(w, r)
	if !ok {
		return
	}
	list, err := c.svc.Files.List(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	d := filesData{List: list, Prefix: r.URL.Query().Get("prefix")}
	for _, f := range list.Files {
		if strings.HasPrefix(f.Path, d.Prefix) {
			if len(d.Shown) == filesShown {
				d.More = true
				break
			}
			d.Shown = append(d.Shown, f)
		}
	}
	c.render(w, r, http.StatusOK, "files", c.companyPage(req, "Files", "files", co, d))
}

// uploadFile streams one file of a multipart form (path, then file) to
// the files use case, as REST's upload does: admitted before the body is
// read, then stored as it arrives.
func (c *Console) uploadFile(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	maxBytes := int64(-1)
	if r.ContentLength >= 0 {
		maxBytes = max(r.ContentLength-formOverhead, 0)
	}
	adm, err := c.svc.Files.Admit(req.ctx, req.companyID, maxBytes)
	if err != nil {
		c.uploadFailed(w, r, req, err)
		return
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		c.uploadFailed(w, r, req, models.Errorf(models.CodeUnsupportedMediaType, "Send the file as multipart/form-data with a file field."))
		return
	}
	body := http.MaxBytesReader(w, r.Body, c.svc.Files.Limits().MaxFileBytes+formOverhead)
	mr := multipart.NewReader(body, params["boundary"])
	var path string
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.As(err, new(*http.MaxBytesError)) {
				err = models.Errorf(models.CodeTooLarge, "The file is larger than the limit of %d bytes.", c.svc.Files.Limits().MaxFileBytes)
			} else {
				err = models.Errorf(models.CodeBadRequest, "The upload was cut off; try again.").Wrap(err)
			}
			c.uploadFailed(w, r, req, err)
			return
		}
		switch part.FormName() {
		case "path":
			b, _ := io.ReadAll(io.LimitReader(part, 2048))
			path = string(b)
		case "file":
			if part.FileName() == "" {
				c.uploadFailed(w, r, req, models.Errorf(models.CodeInvalidArgument, "Choose a file to upload.").WithField("file"))
				return
			}
			f, err := adm.Upload(req.ctx, files.UploadInput{Path: path, Source: "upload", Filename: part.FileName(),
				ContentType: part.Header.Get("Content-Type"), Size: -1, Body: part})
			if err != nil {
				if errors.As(err, new(*http.MaxBytesError)) {
					err = models.Errorf(models.CodeTooLarge, "The file is larger than the limit of %d bytes.", c.svc.Files.Limits().MaxFileBytes)
				}
				c.uploadFailed(w, r, req, err)
				return
			}
			if r.Header.Get("X-CSRF-Token") != "" { // the page's script: it shows progress and reloads
				writeJSON(w, http.StatusOK, map[string]any{"id": f.ID, "path": f.Path, "size_bytes": f.SizeBytes})
				return
			}
			http.Redirect(w, r, Path+"/c/"+req.companyID+"/files", http.StatusSeeOther)
			return
		}
	}
	c.uploadFailed(w, r, req, models.Errorf(models.CodeInvalidArgument, "Choose a file to upload.").WithField("file"))
}

func (c *Console) uploadFailed(w http.ResponseWriter, r *http.Request, req *request, err error) {
	if r.Header.Get("X-CSRF-Token") != "" {
		c.failJSON(w, err)
		return
	}
	c.fail(w, r, req, err)
}

func (c *Console) downloadFile(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, false)
	if !ok {
		return
	}
	d, err := c.svc.Files.DownloadURL(req.ctx, req.companyID, r.PathValue("file"))
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	// The signed link lives on the sites origin, never this one.
	headers(w, csp)
	http.Redirect(w, r, d.URL, http.StatusSeeOther)
}

func (c *Console) deleteFile(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	if err := c.svc.Files.Delete(req.ctx, req.companyID, r.PathValue("file")); err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+req.companyID+"/files", http.StatusSeeOther)
}

// Documents

type documentsData struct {
	Documents []models.DocumentSummary
}

func (c *Console) documentsPage(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, false)
	if !ok {
		return
	}
	if t := r.URL.Query().Get("type"); t != "" {
		http.Redirect(w, r, Path+"/c/"+req.companyID+"/docs/"+url.PathEscape(t)+"?edit", http.StatusSeeOther)
		return
	}
	co, err := c.svc.Companies.GetCompany(req.ctx, req.companyID)
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	docs, err := c.svc.Documents.List(req.ctx, req.companyID, documents.ListInput{})
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	sort.SliceStable(docs, func(i, j int) bool { return docs[i].UpdatedAt.After(docs[j].UpdatedAt) })
	c.render(w, r, http.StatusOK, "documents", c.companyPage(req, "Documents", "docs", co, documentsData{Documents: docs}))
}

type documentData struct {
	Type     string
	Document *models.Document
	Edit     bool
}

func (c *Console) documentPage(w http.ResponseWriter, r *http.Request) {
	req, co, ok := c.openCompany(w, r)
	if !ok {
		return
	}
	d := documentData{Type: r.PathValue("type"), Edit: r.URL.Query().Has("edit")}
	doc, err := c.svc.Documents.Get(req.ctx, req.companyID, d.Type)
	switch {
	case models.IsCode(err, models.CodeNotFound):
		d.Edit = true // a new document of this type
	case err != nil:
		c.fail(w, r, req, err)
		return
	default:
		d.Document = &doc
	}
	c.render(w, r, http.StatusOK, "document", c.companyPage(req, d.Type, "docs", co, d))
}

func (c *Console) saveDocument(w http.ResponseWriter, r *http.Request) {
	req, ok := c.companyRequest(w, r, true)
	if !ok {
		return
	}
	typ := r.PathValue("type")
	_, _, err := c.svc.Documents.Upsert(req.ctx, req.companyID, typ, documents.UpsertInput{Content: r.FormValue("content"),
		Title: r.FormValue("title"), Visibility: models.DocumentVisibility(r.FormValue("visibility"))})
	if err != nil {
		c.fail(w, r, req, err)
		return
	}
	http.Redirect(w, r, Path+"/c/"+req.companyID+"/docs/"+typ, http.StatusSeeOther)
}
