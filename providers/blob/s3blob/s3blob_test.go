package s3blob_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"holdco/providers/blob/blobtest"
	"holdco/providers/blob/s3blob"
)

var _ blobtest.Store = (*s3blob.Store)(nil)

// newServer starts a real S3-protocol server (gofakes3, in memory) with
// a bucket, and returns an adapter pointed at it.
func newServer(t testing.TB) (*s3blob.Store, *httptest.Server) {
	t.Helper()
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	require.NoError(t, backend.CreateBucket("holdco-files"))
	s, err := s3blob.New(context.Background(), s3blob.Config{
		Bucket: "holdco-files", Region: "us-east-1", Endpoint: srv.URL, PathStyle: true,
		AccessKeyID: "test", SecretAccessKey: "test-secret",
	})
	require.NoError(t, err)
	return s, srv
}

func TestContract(t *testing.T) {
	s, srv := newServer(t)
	blobtest.Run(t, s, srv.Client())
}

// TestListFollowsPages lists a folder larger than one page.
func TestListFollowsPages(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	s = s.WithListPageSize(2)
	run := "runs/" + uuid.NewString() + "/"
	var want []string
	for i := range 5 {
		key := fmt.Sprintf("%s%06d-model.jsonl", run, i)
		_, err := s.Put(ctx, key, strings.NewReader("x\n"), 2, "")
		require.NoError(t, err)
		want = append(want, key)
	}
	got, err := s.List(ctx, run)
	require.NoError(t, err)
	var keys []string
	for _, b := range got {
		keys = append(keys, b.Key)
	}
	require.Equal(t, want, keys)
}

// TestListLeavesOutForeignKeys: an object holdco would never have stored
// is not listed (it could not be opened either).
func TestListLeavesOutForeignKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t)
	run := "runs/" + uuid.NewString() + "/"
	require.NoError(t, s.RawPut(ctx, run+"Notes.TXT", "by hand"))
	require.NoError(t, s.RawPut(ctx, run+"trace.jsonl", "ok\n"))
	got, err := s.List(ctx, run)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, run+"trace.jsonl", got[0].Key)
}
