package files_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"holdco/providers/blob/local"
	"holdco/providers/blob/s3blob"
	"holdco/service/companies"
	"holdco/service/files"
	"holdco/service/servicetest"
	"holdco/service/usecases"
)

// BenchmarkUpload3MB measures an upload of a 3 MB file (the connector's
// upload_file limit) through the use case: admission, the blob write and
// the commit, replacing the same path each time (so the quota stays
// flat). MB/s is the throughput.
//
//	go test ./service/files -run '^$' -bench Upload3MB
func BenchmarkUpload3MB(b *testing.B) {
	data := make([]byte, 3<<20)
	_, _ = rand.Read(data)
	b.Run("local", func(b *testing.B) {
		blobs, err := local.New(b.TempDir(), []byte("bench-signing-key-0123456789abcdef0123"), "http://sites.test")
		require.NoError(b, err)
		benchUpload(b, blobs, data)
	})
	b.Run("s3", func(b *testing.B) {
		backend := s3mem.New()
		srv := httptest.NewServer(gofakes3.New(backend).Server())
		defer srv.Close()
		require.NoError(b, backend.CreateBucket("bench"))
		blobs, err := s3blob.New(context.Background(), s3blob.Config{Bucket: "bench", Region: "us-east-1", Endpoint: srv.URL, PathStyle: true,
			AccessKeyID: "bench", SecretAccessKey: "bench"})
		require.NoError(b, err)
		b.Run("known-size", func(b *testing.B) { benchUpload(b, blobs, data) })
		b.Run("streamed", func(b *testing.B) { benchUploadSize(b, blobs, data, -1) })
	})
}

func benchUpload(b *testing.B, blobs files.BlobStore, data []byte) {
	benchUploadSize(b, blobs, data, int64(len(data)))
}

func benchUploadSize(b *testing.B, blobs files.BlobStore, data []byte, size int64) {
	e := servicetest.NewWith(b, usecases.Options{Blobs: blobs})
	ctx, cong := e.User(b, "bench@example.com")
	c, err := e.Svc.CreateCompany(ctx, cong, companies.CompanyInput{Name: "Bench"})
	require.NoError(b, err)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.Clock.Advance(time.Second) // the per-company rate limit refills
		_, err := e.Svc.Files.Upload(ctx, c.ID, files.UploadInput{Path: "bench.bin", ContentType: "application/octet-stream", Size: size, Body: bytes.NewReader(data)})
		if err != nil {
			b.Fatal(err)
		}
	}
}
