package files_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/blob/local"
	"holdco/service/companies"
	"holdco/service/files"
	"holdco/service/servicetest"
	"holdco/service/usecases"
)

// world is two users with a company each, and a local blob store served
// by a test sites server.
type world struct {
	e        *servicetest.Env
	svc      *files.Service
	blobs    *local.Store
	blobDir  string
	sites    *httptest.Server
	ada, bob context.Context
	adaCo    string
	bobCo    string
}

func newWorld(t *testing.T, limits files.Limits, wrap func(files.BlobStore) files.BlobStore) *world {
	t.Helper()
	mux := http.NewServeMux()
	sites := httptest.NewServer(mux)
	t.Cleanup(sites.Close)
	blobDir := t.TempDir()
	blobs, err := local.New(blobDir, []byte("files-test-signing-key-0123456789abcdef"), sites.URL)
	require.NoError(t, err)
	mux.Handle(local.PathPrefix, blobs.Handler())
	var store files.BlobStore = blobs
	if wrap != nil {
		store = wrap(blobs)
	}
	e := servicetest.NewWith(t, usecases.Options{Blobs: store, FileLimits: limits})
	w := &world{e: e, svc: e.Svc.Files, blobs: blobs, blobDir: blobDir, sites: sites}
	var adaCong, bobCong string
	w.ada, adaCong = e.User(t, "ada@example.com")
	w.bob, bobCong = e.User(t, "bob@example.com")
	c, err := e.Svc.CreateCompany(w.ada, adaCong, companies.CompanyInput{Name: "Ada Files"})
	require.NoError(t, err)
	w.adaCo = c.ID
	c, err = e.Svc.CreateCompany(w.bob, bobCong, companies.CompanyInput{Name: "Bob Files"})
	require.NoError(t, err)
	w.bobCo = c.ID
	return w
}

func (w *world) upload(t *testing.T, ctx context.Context, company, path, body string) (models.CompanyFile, error) {
	t.Helper()
	return w.svc.Upload(ctx, company, files.UploadInput{Path: path, Filename: "upload.bin", ContentType: "text/plain", Size: int64(len(body)), Body: strings.NewReader(body)})
}

func (w *world) exists(t *testing.T, key string) bool {
	t.Helper()
	ok, err := w.blobs.Exists(context.Background(), key)
	require.NoError(t, err)
	return ok
}

func codeOf(err error) models.ErrorCode { return models.ErrorCodeOf(err) }

func extra(t *testing.T, err error) map[string]any {
	t.Helper()
	var de *models.Error
	require.True(t, errors.As(err, &de), "%v", err)
	return de.Extra
}

func TestUploadListDownloadDelete(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	f, err := w.svc.Upload(w.ada, w.adaCo, files.UploadInput{Path: "reports/", Filename: "Q1 résumé.txt", ContentType: "text/plain; charset=utf-8", Size: -1, Body: strings.NewReader("hello")})
	require.NoError(t, err)
	assert.Equal(t, "reports/Q1 résumé.txt", f.Path, "a path ending in / is a folder")
	assert.Equal(t, int64(5), f.SizeBytes)
	assert.Equal(t, files.DefaultSource, f.Source)
	assert.NotContains(t, f.BlobKey, "reports", "blob keys never carry the path")

	_, err = w.upload(t, w.ada, w.adaCo, "a.txt", "abc")
	require.NoError(t, err)
	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	require.Len(t, l.Files, 2)
	assert.Equal(t, []string{"a.txt", "reports/Q1 résumé.txt"}, []string{l.Files[0].Path, l.Files[1].Path})
	assert.Equal(t, int64(2), l.FileCount)
	assert.Equal(t, int64(8), l.UsedBytes)
	assert.Equal(t, int64(files.DefaultQuotaBytes), l.QuotaBytes)
	assert.Equal(t, int64(files.DefaultMaxFileBytes), l.MaxFileBytes)

	d, err := w.svc.DownloadURL(w.ada, w.adaCo, f.ID)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(d.URL, w.sites.URL+local.PathPrefix), "downloads are on the sites origin")
	resp, err := w.sites.Client().Get(d.URL)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, "hello", string(body))
	assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, resp.Header.Get("Content-Disposition"), "filename*=UTF-8''Q1%20r%C3%A9sum%C3%A9.txt")

	require.NoError(t, w.svc.Delete(w.ada, w.adaCo, f.ID))
	assert.False(t, w.exists(t, f.BlobKey))
	assert.Equal(t, models.CodeNotFound, codeOf(w.svc.Delete(w.ada, w.adaCo, f.ID)))
	count, used, err := w.e.Store.Files().FileUsage(context.Background(), mustScope(t, w, w.ada, w.adaCo))
	require.NoError(t, err)
	assert.Equal(t, [2]int64{1, 3}, [2]int64{count, used})
}

func mustScope(t *testing.T, w *world, ctx context.Context, companyID string) storeScope {
	t.Helper()
	co, err := w.e.Svc.Files.Admit(ctx, companyID, 0)
	require.NoError(t, err)
	return co.Company().Scope
}

func TestUploadToAnExistingPathReplacesTheFile(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	first, err := w.upload(t, w.ada, w.adaCo, "notes/plan.md", "first version")
	require.NoError(t, err)
	second, err := w.upload(t, w.ada, w.adaCo, "notes/plan.md", "v2")
	require.NoError(t, err)
	assert.Equal(t, first.ID, second.ID, "the file keeps its id")
	assert.Equal(t, int64(2), second.SizeBytes)
	assert.False(t, w.exists(t, first.BlobKey), "the replaced blob is deleted")
	assert.True(t, w.exists(t, second.BlobKey))
	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	assert.Equal(t, int64(1), l.FileCount)
	assert.Equal(t, int64(2), l.UsedBytes)
}

func TestPathRules(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	for _, p := range []string{"../x", "a/../b", "a/./b", "/abs", "a//b", "a/b\x00", "a\nb", "a\u0085b", `a\b`, strings.Repeat("a", 1025), strings.Repeat("b", 256) + "/c"} {
		_, err := w.upload(t, w.ada, w.adaCo, p, "x")
		assert.Equal(t, models.CodeInvalidArgument, codeOf(err), "%q", p)
	}
	f, err := w.upload(t, w.ada, w.adaCo, "cafe\u0301/menu.txt", "x")
	require.NoError(t, err)
	assert.Equal(t, "caf\u00e9/menu.txt", f.Path, "NFC")
	_, err = w.svc.Upload(w.ada, w.adaCo, files.UploadInput{Source: "Not A Label", Filename: "x", Size: 1, Body: strings.NewReader("x")})
	assert.Equal(t, models.CodeInvalidArgument, codeOf(err))
	_, err = w.svc.Upload(w.ada, w.adaCo, files.UploadInput{Size: 1, Body: strings.NewReader("x")})
	assert.Equal(t, models.CodeInvalidArgument, codeOf(err), "no path and no file name")

	for in, want := range map[string]string{"a": "a/", "a/": "a/", "a//": "a/", "caf\u0065\u0301": "caf\u00e9/"} {
		got, err := files.NormalizePrefix(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "/", "../a", "/a"} {
		_, err := files.NormalizePrefix(in)
		assert.Error(t, err, "%q", in)
	}
}

func TestLimitAndQuotaAnswerTooLargeWithTheNumbers(t *testing.T) {
	w := newWorld(t, files.Limits{MaxFileBytes: 100, QuotaBytes: 250}, nil)
	_, err := w.upload(t, w.ada, w.adaCo, "big", strings.Repeat("x", 101))
	require.Equal(t, models.CodeTooLarge, codeOf(err))
	assert.Equal(t, map[string]any{"limit_bytes": int64(100), "size_bytes": int64(101)}, extra(t, err))

	// Unknown size: cut while streaming.
	_, err = w.svc.Upload(w.ada, w.adaCo, files.UploadInput{Path: "stream", Size: -1, Body: strings.NewReader(strings.Repeat("x", 101))})
	require.Equal(t, models.CodeTooLarge, codeOf(err))
	assert.Equal(t, int64(100), extra(t, err)["limit_bytes"])

	for _, p := range []string{"one", "two"} {
		_, err = w.upload(t, w.ada, w.adaCo, p, strings.Repeat("x", 100))
		require.NoError(t, err)
	}
	_, err = w.upload(t, w.ada, w.adaCo, "three", strings.Repeat("x", 100))
	require.Equal(t, models.CodeTooLarge, codeOf(err))
	assert.Equal(t, map[string]any{"used_bytes": int64(200), "quota_bytes": int64(250), "size_bytes": int64(100)}, extra(t, err))

	// A smaller replacement always fits.
	_, err = w.upload(t, w.ada, w.adaCo, "two", "small")
	require.NoError(t, err)
	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	assert.Equal(t, int64(105), l.UsedBytes)
	assert.Len(t, dueDeletions(t, w), 0, "refused uploads leave no blob behind")
}

// TestQuotaHoldsUnderConcurrentUploads: 20 uploads of 100 bytes at once
// against a quota of 1000 bytes: exactly 10 fit.
func TestQuotaHoldsUnderConcurrentUploads(t *testing.T) {
	w := newWorld(t, files.Limits{MaxFileBytes: 100, QuotaBytes: 1000}, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, tooLarge := 0, 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := w.upload(t, w.ada, w.adaCo, "f/"+string(rune('a'+i)), strings.Repeat("x", 100))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case codeOf(err) == models.CodeTooLarge:
				tooLarge++
			default:
				t.Errorf("upload: %v", err)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 10, ok)
	assert.Equal(t, 10, tooLarge)
	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	assert.Equal(t, int64(1000), l.UsedBytes)
	assert.Len(t, l.Files, 10)
}

func TestPrefixDeleteTakesWholeSegmentsOnly(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	keep := map[string]bool{"ab/x": true, "a": true, "b/a/x": true, "a_/x": true}
	var gone []models.CompanyFile
	for _, p := range []string{"a/x", "a/y/z", "ab/x", "a", "b/a/x", "a_/x"} {
		f, err := w.upload(t, w.ada, w.adaCo, p, p)
		require.NoError(t, err)
		if !keep[p] {
			gone = append(gone, f)
		}
	}
	_, err := w.upload(t, w.bob, w.bobCo, "a/x", "bob's")
	require.NoError(t, err)

	res, err := w.svc.DeletePrefix(w.ada, w.adaCo, "a")
	require.NoError(t, err)
	assert.Equal(t, files.PrefixDeleteResult{Prefix: "a/", DeletedCount: 2, DeletedBytes: 8}, res)
	for _, f := range gone {
		assert.False(t, w.exists(t, f.BlobKey), f.Path)
	}
	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	var paths []string
	for _, f := range l.Files {
		paths = append(paths, f.Path)
	}
	assert.Equal(t, []string{"a", "a_/x", "ab/x", "b/a/x"}, paths)
	lb, err := w.svc.List(w.bob, w.bobCo)
	require.NoError(t, err)
	assert.Len(t, lb.Files, 1, "another company's a/ is untouched")

	res, err = w.svc.DeletePrefix(w.ada, w.adaCo, "nothing/")
	require.NoError(t, err)
	assert.Equal(t, int64(0), res.DeletedCount)
}

func TestAnotherTenantsFileIsForbiddenAMissingOneNotFound(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	bobs, err := w.upload(t, w.bob, w.bobCo, "secret.txt", "bob")
	require.NoError(t, err)

	_, err = w.svc.DownloadURL(w.ada, w.adaCo, bobs.ID)
	assert.Equal(t, models.CodeForbidden, codeOf(err))
	assert.Equal(t, models.CodeForbidden, codeOf(w.svc.Delete(w.ada, w.adaCo, bobs.ID)))
	_, err = w.svc.DownloadURL(w.ada, w.bobCo, bobs.ID)
	assert.Equal(t, models.CodeForbidden, codeOf(err), "bob's company")
	_, err = w.svc.List(w.ada, w.bobCo)
	assert.Equal(t, models.CodeForbidden, codeOf(err))
	_, err = w.upload(t, w.ada, w.bobCo, "x", "x")
	assert.Equal(t, models.CodeForbidden, codeOf(err))
	_, err = w.svc.DeletePrefix(w.ada, w.bobCo, "a")
	assert.Equal(t, models.CodeForbidden, codeOf(err))

	_, err = w.svc.DownloadURL(w.ada, w.adaCo, "00000000-0000-4000-8000-000000000000")
	assert.Equal(t, models.CodeNotFound, codeOf(err))
	assert.True(t, w.exists(t, bobs.BlobKey))
	_, err = w.svc.List(context.Background(), w.adaCo)
	assert.Equal(t, models.CodeUnauthenticated, codeOf(err))
}

func TestUploadRateLimitPerCompany(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	for i := range files.UploadBurst {
		_, err := w.upload(t, w.ada, w.adaCo, "r/"+string(rune('a'+i)), "x")
		require.NoError(t, err, i)
	}
	_, err := w.upload(t, w.ada, w.adaCo, "r/over", "x")
	require.Equal(t, models.CodeRateLimited, codeOf(err))
	assert.Equal(t, int64(1), extra(t, err)["retry_after_seconds"])
	_, err = w.upload(t, w.bob, w.bobCo, "mine", "x")
	require.NoError(t, err, "another company has its own budget")
	w.e.Clock.Advance(time.Second)
	_, err = w.upload(t, w.ada, w.adaCo, "r/later", "x")
	require.NoError(t, err, "one upload a second refills")
}

// Two replicas on one database share the company's upload budget: a
// burst of 20 across both, not 20 each.
func TestUploadRateLimitIsSharedByReplicas(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	replica := w.e.Replica(t).Files
	ok := 0
	for i := range 2 * files.UploadBurst {
		svc := w.svc
		if i%2 == 1 {
			svc = replica
		}
		_, err := svc.Upload(w.ada, w.adaCo, files.UploadInput{Path: fmt.Sprintf("r/%d", i), Filename: "x.txt", ContentType: "text/plain", Size: 1, Body: strings.NewReader("x")})
		if err == nil {
			ok++
			continue
		}
		require.Equal(t, models.CodeRateLimited, codeOf(err))
		assert.Equal(t, int64(1), extra(t, err)["retry_after_seconds"])
	}
	assert.Equal(t, files.UploadBurst, ok)
}

// failingDeletes is a blob store whose deletes fail while failing is set:
// the blob store is down, or the process died right after the commit.
type failingDeletes struct {
	files.BlobStore
	mu      sync.Mutex
	failing bool
}

func (f *failingDeletes) Delete(ctx context.Context, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing {
		return errors.New("blob store unreachable")
	}
	return f.BlobStore.Delete(ctx, key)
}

func (f *failingDeletes) set(v bool) { f.mu.Lock(); f.failing = v; f.mu.Unlock() }

func dueDeletions(t *testing.T, w *world) []models.BlobDeletion {
	t.Helper()
	d, err := w.e.Store.Files().DueBlobDeletions(context.Background(), time.Now().Add(48*time.Hour), 1000)
	require.NoError(t, err)
	return d
}

// TestCrashBetweenRowDeleteAndBlobDelete: the row delete commits, the blob
// delete does not happen; the file is gone for every reader at once and
// the worker's sweeper removes the blob.
func TestCrashBetweenRowDeleteAndBlobDelete(t *testing.T) {
	var fd *failingDeletes
	w := newWorld(t, files.Limits{}, func(b files.BlobStore) files.BlobStore { fd = &failingDeletes{BlobStore: b}; return fd })
	one, err := w.upload(t, w.ada, w.adaCo, "one.txt", "1")
	require.NoError(t, err)
	two, err := w.upload(t, w.ada, w.adaCo, "dir/two.txt", "22")
	require.NoError(t, err)

	// The crash: the blob delete after the row delete never happens.
	fd.set(true)
	require.NoError(t, w.svc.Delete(w.ada, w.adaCo, one.ID), "the row delete is what the caller sees")
	res, err := w.svc.DeletePrefix(w.ada, w.adaCo, "dir")
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.BlobsPending)

	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	assert.Empty(t, l.Files, "no visible file")
	_, err = w.svc.DownloadURL(w.ada, w.adaCo, one.ID)
	assert.Equal(t, models.CodeNotFound, codeOf(err))
	assert.True(t, w.exists(t, one.BlobKey) && w.exists(t, two.BlobKey), "blobs left behind")

	sweeper := &files.BlobSweeper{Store: w.e.Store, Blobs: fd, Logger: quiet()}
	n, err := sweeper.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, n, "the store is still down: nothing deleted, retried later")
	fd.set(false)
	sweeper.Now = func() time.Time { return time.Now().Add(10 * time.Minute) }
	n, err = sweeper.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.False(t, w.exists(t, one.BlobKey))
	assert.False(t, w.exists(t, two.BlobKey))
	assert.Empty(t, dueDeletions(t, w))
}

// TestUncommittedUploadIsSwept: a blob written but never committed (the
// process died between the two) is deleted once its grace has passed, and
// an upload that commits after the sweeper claimed its blob fails cleanly.
func TestUncommittedUploadIsSwept(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	adm, err := w.svc.Admit(w.ada, w.adaCo, 5)
	require.NoError(t, err)
	staged, err := adm.Stage(w.ada, strings.NewReader("bytes"), 5, "text/plain")
	require.NoError(t, err)
	due := dueDeletions(t, w)
	require.Len(t, due, 1)
	key := due[0].BlobKey
	assert.True(t, w.exists(t, key))

	sweeper := &files.BlobSweeper{Store: w.e.Store, Blobs: w.blobs, Logger: quiet()}
	n, err := sweeper.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, n, "an upload in progress is left alone")
	assert.True(t, w.exists(t, key))

	sweeper.Now = func() time.Time { return time.Now().Add(files.UploadGrace + time.Minute) }
	n, err = sweeper.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.False(t, w.exists(t, key))

	_, err = staged.Commit(w.ada, "late.txt", "", "")
	assert.Equal(t, models.CodeConflict, codeOf(err))
	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	assert.Empty(t, l.Files, "no row names a deleted blob")
}

// TestPartialUploadsACrashCutAreSwept: a process that dies while an
// upload's body arrives leaves the local store's temporary file in tmp/;
// no row or blob_deletions record names it, so the sweeper deletes such
// files once no upload can still be writing them (files.UploadGrace).
func TestPartialUploadsACrashCutAreSwept(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	done, err := w.upload(t, w.ada, w.adaCo, "kept.txt", "kept")
	require.NoError(t, err)
	// What the crash leaves: Put's temporary file, half written.
	partial := filepath.Join(w.blobDir, "tmp", "put-1234567890")
	require.NoError(t, os.WriteFile(partial, bytes.Repeat([]byte("x"), 1<<20), 0o600))

	sweeper := &files.BlobSweeper{Store: w.e.Store, Blobs: w.blobs, Logger: quiet()}
	n, err := sweeper.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, n, "an upload may still be writing it")
	assert.FileExists(t, partial)

	sweeper.Now = func() time.Time { return time.Now().Add(files.UploadGrace + time.Minute) }
	n, err = sweeper.Sweep(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.NoFileExists(t, partial)
	assert.True(t, w.exists(t, done.BlobKey), "committed blobs are untouched")
	entries, err := os.ReadDir(filepath.Join(w.blobDir, "tmp"))
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestBlobStoreNotConfigured(t *testing.T) {
	e := servicetest.New(t)
	svc := files.New(e.Svc.Files.Core(), nil, files.Limits{})
	ctx, cong := e.User(t, "ada@example.com")
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "No Blobs"})
	require.NoError(t, err)
	_, err = svc.Upload(ctx, c.ID, files.UploadInput{Filename: "x", Size: 1, Body: bytes.NewReader([]byte("x"))})
	assert.Equal(t, models.CodeUpstreamUnavailable, codeOf(err))
}

func TestChangesWriteActivityEvents(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	f, err := w.upload(t, w.ada, w.adaCo, "docs/a.txt", "a")
	require.NoError(t, err)
	_, err = w.upload(t, w.ada, w.adaCo, "docs/a.txt", "aa")
	require.NoError(t, err)
	_, err = w.upload(t, w.ada, w.adaCo, "docs/b.txt", "b")
	require.NoError(t, err)
	require.NoError(t, w.svc.Delete(w.ada, w.adaCo, f.ID))
	_, err = w.svc.DeletePrefix(w.ada, w.adaCo, "docs")
	require.NoError(t, err)
	_, err = w.upload(t, w.ada, w.adaCo, "big", strings.Repeat("x", files.DefaultMaxFileBytes+1))
	require.Error(t, err)

	events, err := w.e.Store.Companies().ListActivity(context.Background(), mustScope(t, w, w.ada, w.adaCo), models.ActivityCursor{}, 100)
	require.NoError(t, err)
	var kinds []models.ActivityKind
	for _, e := range events {
		if strings.HasPrefix(string(e.Kind), "file") {
			kinds = append(kinds, e.Kind)
		}
	}
	assert.Equal(t, []models.ActivityKind{models.ActivityFilesDeleted, models.ActivityFileDeleted, models.ActivityFileUploaded, models.ActivityFileUploaded, models.ActivityFileUploaded}, kinds,
		"newest first; a refused upload writes nothing")
	assert.Equal(t, models.ActorUser, events[0].Actor)
}

func TestABodyOfAnotherSizeThanAnnouncedIsRefused(t *testing.T) {
	w := newWorld(t, files.Limits{}, nil)
	for _, body := range []string{"short", "much longer than ten"} {
		_, err := w.svc.Upload(w.ada, w.adaCo, files.UploadInput{Path: "x", Size: 10, Body: strings.NewReader(body)})
		assert.Equal(t, models.CodeInvalidArgument, codeOf(err), body)
	}
	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	assert.Empty(t, l.Files)
	assert.Empty(t, dueDeletions(t, w), "nothing left behind")
}
