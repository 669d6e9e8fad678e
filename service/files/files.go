// Package files holds the use cases of a company's files on object
// storage: upload, list, delete (one, or a folder), download links, and
// the sweeper that removes blobs no row names. REST, the agents' tools and
// the connector's upload_file call these functions, so every rule (paths,
// limits, quota, rate limit, ownership) is written here once.
package files

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"mime"
	"time"

	"holdco/models"
	"holdco/service"
	"holdco/store"
)

// BlobStore keeps the bytes of files (providers/blob/local and
// providers/blob/s3blob).
type BlobStore interface {
	// Put stores body under key; size is its exact length, or -1 when
	// unknown. It returns the bytes stored.
	Put(ctx context.Context, key string, body io.Reader, size int64, contentType string) (int64, error)
	// Delete removes a blob; a missing blob is not an error.
	Delete(ctx context.Context, key string) error
	// Open reads a blob; a missing one is an error wrapping
	// fs.ErrNotExist.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// DownloadURL is a URL that serves the blob as an attachment named
	// filename, valid for ttl. It is a credential: never logged.
	DownloadURL(ctx context.Context, key, filename, contentType string, ttl time.Duration) (string, error)
	// List returns the blobs under prefix, a folder ending in "/"
	// ("runs/<id>/"), at any depth, sorted by key; an empty folder is an
	// empty list.
	List(ctx context.Context, prefix string) ([]models.BlobInfo, error)
}

// Limits are the file settings (config section Blob).
type Limits struct {
	// MaxFileBytes is the largest file (default 25 MiB).
	MaxFileBytes int64
	// QuotaBytes is what one company's files may take in all (default
	// 1 GiB).
	QuotaBytes int64
	// URLTTL is how long a download link works (default 5 minutes).
	URLTTL time.Duration
}

// Defaults of Limits.
const (
	DefaultMaxFileBytes = 25 << 20
	DefaultQuotaBytes   = 1 << 30
	DefaultURLTTL       = 5 * time.Minute
	// UploadGrace is the longest an upload may take between recording its
	// blob and committing the row; after it the sweeper deletes the blob
	// and the upload fails.
	UploadGrace = time.Hour
	// maxContentTypeLength bounds a stored content type.
	maxContentTypeLength = 255
)

// Service is the files use cases.
type Service struct {
	core   *service.Core
	store  *store.Store
	blobs  BlobStore
	limits Limits
	logger *slog.Logger
}

// New builds the use cases; blobs nil answers every use case that needs
// object storage with upstream_unavailable.
func New(core *service.Core, blobs BlobStore, limits Limits) *Service {
	if limits.MaxFileBytes <= 0 {
		limits.MaxFileBytes = DefaultMaxFileBytes
	}
	if limits.QuotaBytes <= 0 {
		limits.QuotaBytes = DefaultQuotaBytes
	}
	if limits.URLTTL <= 0 {
		limits.URLTTL = DefaultURLTTL
	}
	return &Service{
		core: core, store: core.Store(), blobs: blobs, limits: limits,
		logger: core.Logger().With("component", "files"),
	}
}

// Limits are the effective limits.
func (s *Service) Limits() Limits { return s.limits }

func (s *Service) needBlobs() error {
	if s.blobs == nil {
		return models.Errorf(models.CodeUpstreamUnavailable, "File storage is not configured on this server.")
	}
	return nil
}

// UploadInput is one file to store.
type UploadInput struct {
	// Path is where the file goes; empty is Filename, and a path ending in
	// "/" is a folder the file goes into under Filename. Uploading to a
	// path that holds a file replaces that file.
	Path string
	// Source labels who uploaded it (upload, agent, connector, …).
	Source string
	// Filename is the client's name of the file.
	Filename string
	// ContentType is stored and served on download (invalid or empty:
	// application/octet-stream).
	ContentType string
	// Size is the exact length of Body, or -1 when unknown.
	Size int64
	Body io.Reader
}

// Admission is an upload that passed the checks made before its body is
// read: authentication, ownership, the rate limit, and the announced size
// against the file limit and the quota left.
type Admission struct {
	s       *Service
	company service.AuthorizedCompany
	// capBytes is the most the body may hold: the file limit, or less when
	// the quota left is smaller.
	capBytes int64
	used     int64
}

// Admit checks an upload before its body is read. maxBytes is the most the
// file can hold as far as the caller knows (the request's Content-Length
// less the form's overhead), or -1 when unknown.
func (s *Service) Admit(ctx context.Context, companyID string, maxBytes int64) (*Admission, error) {
	co, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return nil, err
	}
	if err := s.needBlobs(); err != nil {
		return nil, err
	}
	if wait, err := s.store.TakeToken(ctx, uploadBucket, co.ID, s.core.Now()); errors.Is(err, store.ErrRateLimited) {
		secs := max(int64(math.Ceil(wait.Seconds())), 1)
		return nil, models.Errorf(models.CodeRateLimited, "Too many uploads for this company: at most %d a minute (bursts of %d). Retry in %d s.", UploadsPerMinute, UploadBurst, secs).
			With("retry_after_seconds", secs)
	} else if err != nil {
		return nil, err
	}
	_, used, err := s.store.Files().FileUsage(ctx, co.Scope)
	if err != nil {
		return nil, err
	}
	a := &Admission{s: s, company: co, used: used, capBytes: min(s.limits.MaxFileBytes, max(s.limits.QuotaBytes-used, 0))}
	if maxBytes >= 0 {
		if err := a.checkSize(maxBytes); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// Company is the authorized company.
func (a *Admission) Company() service.AuthorizedCompany { return a.company }

func (a *Admission) checkSize(size int64) error {
	l := a.s.limits
	if size > l.MaxFileBytes {
		return tooLargeFile(size, l.MaxFileBytes)
	}
	if a.used+size > l.QuotaBytes {
		return quotaFull(a.used, l.QuotaBytes, size)
	}
	return nil
}

func tooLargeFile(size, limit int64) error {
	e := models.Errorf(models.CodeTooLarge, "The file is larger than the limit of %d bytes per file.", limit).With("limit_bytes", limit)
	if size >= 0 {
		e = e.With("size_bytes", size)
	}
	return e
}

func quotaFull(used, quota, size int64) error {
	e := models.Errorf(models.CodeTooLarge, "The company's files would exceed its quota: %d of %d bytes used.", used, quota).
		With("used_bytes", used).With("quota_bytes", quota)
	if size >= 0 {
		e = e.With("size_bytes", size)
	}
	return e
}

// Upload admits and stores a file whose inputs are all at hand (agents'
// tools, the connector). REST admits first and streams (Admit, Stage,
// Commit).
//
// A call (service.Call in ctx: an agent's tool call, a client's
// idempotency key) stores its blob under a key derived from the call:
// the same call made again after a crash or a lost answer finds the file
// it stored (StoredByCall) and answers it instead of storing it again.
func (s *Service) Upload(ctx context.Context, companyID string, in UploadInput) (models.CompanyFile, error) {
	if service.Keyed(ctx) {
		co, err := s.core.AuthorizeCompany(ctx, companyID, false)
		if err != nil {
			return models.CompanyFile{}, err
		}
		ctx = service.WithAuthorizedCompany(ctx, co)
		if f, ok, err := s.StoredByCall(ctx, companyID); err != nil || ok {
			return f, err
		}
	}
	a, err := s.Admit(ctx, companyID, in.Size)
	if err != nil {
		return models.CompanyFile{}, err
	}
	return a.Upload(ctx, in)
}

// StoredByCall is the file the call in ctx stored (ok false: none yet, or
// ctx carries no call). A use case whose effect ends in a stored file
// (generate_image) asks it before doing its work again.
func (s *Service) StoredByCall(ctx context.Context, companyID string) (models.CompanyFile, bool, error) {
	if !service.Keyed(ctx) {
		return models.CompanyFile{}, false, nil
	}
	co, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.CompanyFile{}, false, err
	}
	f, err := s.store.Files().FileByBlobKey(ctx, co.Scope, callBlobKey(ctx, co.ID))
	if errors.Is(err, models.ErrNotFound) {
		return models.CompanyFile{}, false, nil
	}
	return f, err == nil, err
}

// callBlobKey is the blob key of the upload of the call in ctx, a new
// one without a call.
func callBlobKey(ctx context.Context, companyID string) string {
	return companyID + "/" + service.EffectID(ctx, "file")
}

// Upload stores an admitted file.
func (a *Admission) Upload(ctx context.Context, in UploadInput) (models.CompanyFile, error) {
	if _, err := NormalizePath(in.Path, in.Filename); err != nil {
		return models.CompanyFile{}, err
	}
	if _, err := NormalizeSource(in.Source); err != nil {
		return models.CompanyFile{}, err
	}
	st, err := a.Stage(ctx, in.Body, in.Size, in.ContentType)
	if err != nil {
		return models.CompanyFile{}, err
	}
	return st.Commit(ctx, in.Path, in.Filename, in.Source)
}

// Staged is a blob written for an admitted upload, not yet a file: Commit
// makes it one, Discard drops it (and the sweeper drops it after
// UploadGrace if neither ran).
type Staged struct {
	a           *Admission
	key         string
	size        int64
	contentType string
	done        bool
}

// Stage writes body as the upload's blob, stopping with too_large as soon
// as it passes the file limit or the quota left.
func (a *Admission) Stage(ctx context.Context, body io.Reader, size int64, contentType string) (*Staged, error) {
	if size >= 0 {
		if err := a.checkSize(size); err != nil {
			return nil, err
		}
	}
	s := a.s
	st := &Staged{a: a, key: callBlobKey(ctx, a.company.ID), contentType: normalizeContentType(contentType)}
	if err := s.store.Files().RecordUploadIntent(ctx, a.company.Scope, st.key, s.core.Now().Add(UploadGrace)); err != nil {
		return nil, err
	}
	capped := &capReader{r: body, left: a.capBytes}
	var src io.Reader = capped
	var exact *exactReader
	if size >= 0 {
		exact = &exactReader{r: capped, left: size}
		src = exact
	}
	n, err := s.blobs.Put(ctx, st.key, src, size, st.contentType)
	if exact != nil && exact.mismatch {
		st.Discard(context.WithoutCancel(ctx))
		return nil, models.Errorf(models.CodeInvalidArgument, "The file's content is not the %d bytes its size announced.", size).WithField("size")
	}
	if capped.over {
		st.Discard(context.WithoutCancel(ctx))
		if a.capBytes < s.limits.MaxFileBytes {
			return nil, quotaFull(a.used, s.limits.QuotaBytes, -1)
		}
		return nil, tooLargeFile(-1, s.limits.MaxFileBytes)
	}
	if err != nil {
		st.Discard(context.WithoutCancel(ctx))
		if ctx.Err() != nil || errors.Is(err, errBodyRead) {
			return nil, models.Errorf(models.CodeBadRequest, "The upload ended before the whole file arrived.").Wrap(err)
		}
		return nil, models.Errorf(models.CodeUpstreamUnavailable, "File storage is unavailable; retry shortly.").Wrap(err)
	}
	st.size = n
	return st, nil
}

// Size is the bytes stored.
func (st *Staged) Size() int64 { return st.size }

// Commit makes the staged blob the file at path (see UploadInput).
func (st *Staged) Commit(ctx context.Context, path, filename, source string) (models.CompanyFile, error) {
	a, s := st.a, st.a.s
	p, err := NormalizePath(path, filename)
	if err == nil {
		source, err = NormalizeSource(source)
	}
	if err != nil {
		st.Discard(context.WithoutCancel(ctx))
		return models.CompanyFile{}, err
	}
	f := models.CompanyFile{Path: p, BlobKey: st.key, SizeBytes: st.size, ContentType: st.contentType, Source: source}
	var replaced *models.CompanyFile
	err = s.store.InTx(ctx, func(tx *store.Store) error {
		var err error
		f, replaced, err = tx.Files().CommitFile(ctx, a.company.Scope, f, s.limits.QuotaBytes)
		if err != nil {
			return err
		}
		return recordActivity(ctx, tx, a.company.Scope, fileUploaded(ctx, f, replaced != nil))
	})
	var qe *store.FileQuotaError
	switch {
	case errors.As(err, &qe):
		st.Discard(context.WithoutCancel(ctx))
		return models.CompanyFile{}, quotaFull(qe.UsedBytes, qe.QuotaBytes, qe.SizeBytes)
	case errors.Is(err, store.ErrUploadExpired):
		st.done = true // the sweeper owns the blob now
		return models.CompanyFile{}, models.Errorf(models.CodeConflict, "The upload took longer than %s and was dropped; upload again.", UploadGrace)
	case err != nil:
		st.Discard(context.WithoutCancel(ctx))
		return models.CompanyFile{}, err
	}
	st.done = true
	if replaced != nil {
		s.deleteBlobNow(context.WithoutCancel(ctx), a.company.Scope, replaced.BlobKey)
	}
	return f, nil
}

// Discard deletes a staged blob that will not be committed (best effort:
// the sweeper deletes it after UploadGrace otherwise).
func (st *Staged) Discard(ctx context.Context) {
	if st.done {
		return
	}
	st.done = true
	st.a.s.deleteBlobNow(ctx, st.a.company.Scope, st.key)
}

// deleteBlobNow deletes a blob whose deletion is queued and forgets the
// queue entry; a failure leaves it to the sweeper.
func (s *Service) deleteBlobNow(ctx context.Context, scope store.CompanyScope, key string) {
	if err := s.blobs.Delete(ctx, key); err != nil {
		s.logger.WarnContext(ctx, "blob delete failed; the sweeper retries", "company", scope.ID(), "error", err)
		return
	}
	if err := s.store.Files().BlobDeleted(ctx, scope, key); err != nil {
		s.logger.WarnContext(ctx, "forgetting a deleted blob failed; the sweeper retries", "company", scope.ID(), "error", err)
	}
}

func normalizeContentType(ct string) string {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || ct == "" {
		return "application/octet-stream"
	}
	out := mime.FormatMediaType(mt, params)
	if out == "" || len(out) > maxContentTypeLength {
		return "application/octet-stream"
	}
	return out
}

// errBodyRead marks a failure to read the client's body (as opposed to
// the blob store's).
var errBodyRead = errors.New("files: reading the upload")

// capReader reads at most left bytes; one more marks it over and fails.
type capReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		c.over = true
		return 0, errors.New("files: body over the limit")
	}
	c.left -= int64(n)
	if err != nil && err != io.EOF {
		err = errors.Join(errBodyRead, err)
	}
	return n, err
}

// exactReader fails (marking mismatch) when the body is shorter or longer
// than the size the caller announced, before the blob store sees more.
type exactReader struct {
	r        io.Reader
	left     int64
	mismatch bool
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left == 0 {
		var one [1]byte
		if n, _ := e.r.Read(one[:]); n > 0 {
			e.mismatch = true
			return 0, errors.New("files: body longer than its size")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		e.mismatch = true
		return n, io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// FileList is a company's files with their usage and the limits.
type FileList struct {
	Files        []models.CompanyFile
	FileCount    int64
	UsedBytes    int64
	QuotaBytes   int64
	MaxFileBytes int64
}

// List returns the company's files ordered by path (byte order).
func (s *Service) List(ctx context.Context, companyID string) (FileList, error) {
	co, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return FileList{}, err
	}
	files, err := s.store.Files().ListFiles(ctx, co.Scope)
	if err != nil {
		return FileList{}, err
	}
	count, used, err := s.store.Files().FileUsage(ctx, co.Scope)
	if err != nil {
		return FileList{}, err
	}
	return FileList{Files: files, FileCount: count, UsedBytes: used, QuotaBytes: s.limits.QuotaBytes, MaxFileBytes: s.limits.MaxFileBytes}, nil
}

// fileOf reads one of the company's files: a file of another company is
// forbidden, a missing one not_found.
func (s *Service) fileOf(ctx context.Context, co service.AuthorizedCompany, fileID string) (models.CompanyFile, error) {
	f, err := s.store.Files().GetFile(ctx, co.Scope, fileID)
	if errors.Is(err, models.ErrNotFound) {
		return f, s.missingFile(ctx, co, fileID)
	}
	return f, err
}

func (s *Service) missingFile(ctx context.Context, co service.AuthorizedCompany, fileID string) error {
	owner, err := s.store.Files().FileCompany(ctx, fileID)
	switch {
	case errors.Is(err, models.ErrNotFound):
		return models.Errorf(models.CodeNotFound, "File %s does not exist.", fileID)
	case err != nil:
		return err
	case owner != co.ID:
		return models.Errorf(models.CodeForbidden, "File %s belongs to another company.", fileID)
	}
	return models.Errorf(models.CodeNotFound, "File %s does not exist.", fileID)
}

// Delete deletes one file: the row first (with its blob queued for
// deletion, in one transaction), then the blob, best effort; the worker's
// sweeper deletes what is left.
func (s *Service) Delete(ctx context.Context, companyID, fileID string) error {
	co, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return err
	}
	if err := s.needBlobs(); err != nil {
		return err
	}
	var f models.CompanyFile
	err = s.store.InTx(ctx, func(tx *store.Store) error {
		var err error
		if f, err = tx.Files().DeleteFile(ctx, co.Scope, fileID); err != nil {
			return err
		}
		return recordActivity(ctx, tx, co.Scope, fileDeleted(ctx, f))
	})
	if errors.Is(err, models.ErrNotFound) {
		return s.missingFile(ctx, co, fileID)
	}
	if err != nil {
		return err
	}
	s.deleteBlobNow(context.WithoutCancel(ctx), co.Scope, f.BlobKey)
	return nil
}

// PrefixDeleteResult is what DeletePrefix removed.
type PrefixDeleteResult struct {
	Prefix       string
	DeletedCount int64
	DeletedBytes int64
	// BlobsPending counts blobs whose delete failed now; the sweeper
	// deletes them.
	BlobsPending int64
}

// DeletePrefix deletes every file under a folder: prefix is normalized to
// end in exactly one "/", so "a" never touches "ab/…". Rows first (one
// transaction), then blobs.
func (s *Service) DeletePrefix(ctx context.Context, companyID, prefix string) (PrefixDeleteResult, error) {
	co, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return PrefixDeleteResult{}, err
	}
	p, err := NormalizePrefix(prefix)
	if err != nil {
		return PrefixDeleteResult{}, err
	}
	if err := s.needBlobs(); err != nil {
		return PrefixDeleteResult{}, err
	}
	var deleted []models.CompanyFile
	err = s.store.InTx(ctx, func(tx *store.Store) error {
		var err error
		if deleted, err = tx.Files().DeleteFilesUnderPrefix(ctx, co.Scope, p); err != nil || len(deleted) == 0 {
			return err
		}
		return recordActivity(ctx, tx, co.Scope, filesDeleted(ctx, p, deleted))
	})
	if err != nil {
		return PrefixDeleteResult{}, err
	}
	res := PrefixDeleteResult{Prefix: p, DeletedCount: int64(len(deleted))}
	bg := context.WithoutCancel(ctx)
	for _, f := range deleted {
		res.DeletedBytes += f.SizeBytes
		if err := s.blobs.Delete(bg, f.BlobKey); err != nil {
			res.BlobsPending++
			continue
		}
		if err := s.store.Files().BlobDeleted(bg, co.Scope, f.BlobKey); err != nil {
			s.logger.WarnContext(ctx, "forgetting a deleted blob failed; the sweeper retries", "company", co.ID, "error", err)
		}
	}
	if res.BlobsPending > 0 {
		s.logger.WarnContext(ctx, "blob deletes failed; the sweeper retries", "company", co.ID, "blobs", res.BlobsPending)
	}
	return res, nil
}

// Download is a short-lived link to a file's bytes.
type Download struct {
	URL       string
	ExpiresAt time.Time
}

// DownloadURL signs (or presigns) a link to the file, valid for the
// configured TTL. The URL is a credential: it must not be logged.
func (s *Service) DownloadURL(ctx context.Context, companyID, fileID string) (Download, error) {
	co, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return Download{}, err
	}
	f, err := s.fileOf(ctx, co, fileID)
	if err != nil {
		return Download{}, err
	}
	if err := s.needBlobs(); err != nil {
		return Download{}, err
	}
	at := s.core.Now()
	u, err := s.blobs.DownloadURL(ctx, f.BlobKey, Name(f.Path), f.ContentType, s.limits.URLTTL)
	if err != nil {
		return Download{}, models.Errorf(models.CodeUpstreamUnavailable, "File storage is unavailable; retry shortly.").Wrap(err)
	}
	return Download{URL: u, ExpiresAt: at.Add(s.limits.URLTTL)}, nil
}

// Read returns a file of the company with its content, for the agents'
// tools and the connector; a file over limit bytes is too_large (they
// download instead). A row whose blob is gone (a sweep raced a delete) is
// not_found.
func (s *Service) Read(ctx context.Context, companyID, fileID string, limit int64) (models.CompanyFile, []byte, error) {
	co, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.CompanyFile{}, nil, err
	}
	f, err := s.fileOf(ctx, co, fileID)
	if err != nil {
		return models.CompanyFile{}, nil, err
	}
	if f.SizeBytes > limit {
		return models.CompanyFile{}, nil, models.Errorf(models.CodeTooLarge,
			"The file is %d bytes; at most %d can be read here. Download it instead.", f.SizeBytes, limit).
			With("size_bytes", f.SizeBytes).With("limit_bytes", limit)
	}
	if err := s.needBlobs(); err != nil {
		return models.CompanyFile{}, nil, err
	}
	rc, err := s.blobs.Open(ctx, f.BlobKey)
	if errors.Is(err, fs.ErrNotExist) {
		return models.CompanyFile{}, nil, models.Errorf(models.CodeNotFound, "File %s has no content any more.", fileID)
	}
	if err != nil {
		return models.CompanyFile{}, nil, models.Errorf(models.CodeUpstreamUnavailable, "File storage is unavailable; retry shortly.").Wrap(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return models.CompanyFile{}, nil, models.Errorf(models.CodeUpstreamUnavailable, "File storage is unavailable; retry shortly.").Wrap(err)
	}
	if int64(len(data)) != f.SizeBytes {
		return models.CompanyFile{}, nil, models.Errorf(models.CodeUpstreamUnavailable, "The stored file does not match its record; retry shortly.")
	}
	return f, data, nil
}

// Core is the core the use cases run on.
func (s *Service) Core() *service.Core { return s.core }

// Get returns one of the company's files (its row, not its bytes).
func (s *Service) Get(ctx context.Context, companyID, fileID string) (models.CompanyFile, error) {
	co, err := s.core.AuthorizeCompany(ctx, companyID, false)
	if err != nil {
		return models.CompanyFile{}, err
	}
	return s.fileOf(ctx, co, fileID)
}
