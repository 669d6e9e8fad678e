//go:build faults

package files_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/blob/local"
	"holdco/providers/blob/s3blob"
	"holdco/service/files"
)

// switchable is an S3 server that can go down: while down, every
// connection is cut without an answer (a crashed or unreachable store).
type switchable struct {
	down atomic.Bool
	next http.Handler
}

func (s *switchable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.down.Load() {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	s.next.ServeHTTP(w, r)
}

// TestFaultS3DownDuringUploadsAndDownloads (docs/reliability.md, "S3
// store down"): an upload while the store is down answers
// upstream_unavailable (503), leaves no file and no used bytes; a read
// answers upstream_unavailable; once the store is back both work and the
// quota counts the one file.
func TestFaultS3DownDuringUploadsAndDownloads(t *testing.T) {
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("holdco-files"))
	sw := &switchable{next: gofakes3.New(backend).Server()}
	srv := httptest.NewServer(sw)
	t.Cleanup(srv.Close)
	s3, err := s3blob.New(context.Background(), s3blob.Config{Bucket: "holdco-files", Region: "us-east-1", Endpoint: srv.URL, PathStyle: true,
		AccessKeyID: "test", SecretAccessKey: "test-secret"})
	require.NoError(t, err)
	w := newWorld(t, files.Limits{}, func(files.BlobStore) files.BlobStore { return s3 })

	kept, err := w.upload(t, w.ada, w.adaCo, "kept.txt", "kept")
	require.NoError(t, err)
	sw.down.Store(true)
	_, err = w.upload(t, w.ada, w.adaCo, "lost.txt", strings.Repeat("x", 4096))
	require.Error(t, err)
	assert.Equal(t, models.CodeUpstreamUnavailable, codeOf(err), "%v", err)
	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	assert.EqualValues(t, 1, l.FileCount, "no half-visible file")
	assert.Equal(t, int64(4), l.UsedBytes, "the quota counts only the stored file")
	_, _, err = w.svc.Read(w.ada, w.adaCo, kept.ID, 1<<20)
	assert.Equal(t, models.CodeUpstreamUnavailable, codeOf(err), "%v", err)

	sw.down.Store(false)
	_, body, err := w.svc.Read(w.ada, w.adaCo, kept.ID, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, "kept", string(body))
	_, err = w.upload(t, w.ada, w.adaCo, "lost.txt", "back")
	require.NoError(t, err, "uploads work again once the store is back")
	l, err = w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	assert.Equal(t, int64(8), l.UsedBytes)
}

// TestFaultBlobDirectoryFull (docs/reliability.md, "Disk full"): the
// local blob directory is a 1 MiB tmpfs; an upload that does not fit
// answers upstream_unavailable, leaves no file, no used bytes and no
// partial blob on the disk; a small upload after it works. Needs root
// (mount); skipped otherwise.
func TestFaultBlobDirectoryFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := filepath.Join(t.TempDir(), "blobs")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	blobs, err := local.New(dir, []byte("faults-test-signing-key-0123456789abcdef"), "http://sites.test")
	require.NoError(t, err)
	w := newWorld(t, files.Limits{}, func(files.BlobStore) files.BlobStore { return blobs })

	_, err = w.upload(t, w.ada, w.adaCo, "big.bin", strings.Repeat("x", 2<<20))
	require.Error(t, err)
	assert.Equal(t, models.CodeUpstreamUnavailable, codeOf(err), "%v", err)
	l, err := w.svc.List(w.ada, w.adaCo)
	require.NoError(t, err)
	assert.EqualValues(t, 0, l.FileCount)
	assert.Equal(t, int64(0), l.UsedBytes)
	var left int64
	require.NoError(t, filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			left += fi.Size()
		}
		return err
	}))
	assert.Less(t, left, int64(64<<10), "the partial blob was removed (%d bytes left)", left)
	f, err := w.upload(t, w.ada, w.adaCo, "small.txt", "fits")
	require.NoError(t, err, "the disk has room again")
	assert.Equal(t, int64(4), f.SizeBytes)
}
