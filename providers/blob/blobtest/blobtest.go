// Package blobtest is the contract every blob store adapter passes: the
// same tests run over the local adapter and the S3 adapter (against a real
// S3-protocol server).
package blobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
)

// Store is what an adapter offers (service/files.BlobStore, plus Exists
// for the tests and the sweeper's checks).
type Store interface {
	Put(ctx context.Context, key string, body io.Reader, size int64, contentType string) (int64, error)
	Delete(ctx context.Context, key string) error
	Exists(ctx context.Context, key string) (bool, error)
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	DownloadURL(ctx context.Context, key, filename, contentType string, ttl time.Duration) (string, error)
	List(ctx context.Context, prefix string) ([]models.BlobInfo, error)
}

// Key is a fresh key of holdco's shape.
func Key() string { return uuid.NewString() + "/" + uuid.NewString() }

// Run runs the contract over s; client fetches its download URLs.
func Run(t *testing.T, s Store, client *http.Client) {
	ctx := context.Background()
	get := func(t *testing.T, u string) (*http.Response, []byte) {
		t.Helper()
		resp, err := client.Get(u)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, b
	}

	t.Run("put known size, download as attachment", func(t *testing.T) {
		data := make([]byte, 300_000)
		_, _ = rand.Read(data)
		key := Key()
		n, err := s.Put(ctx, key, bytes.NewReader(data), int64(len(data)), "application/pdf")
		require.NoError(t, err)
		assert.Equal(t, int64(len(data)), n)
		ok, err := s.Exists(ctx, key)
		require.NoError(t, err)
		assert.True(t, ok)

		u, err := s.DownloadURL(ctx, key, "Résumé \"final\".pdf", "application/pdf", 5*time.Minute)
		require.NoError(t, err)
		resp, body := get(t, u)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
		assert.True(t, bytes.Equal(data, body), "downloaded bytes differ")
		assert.Equal(t, "application/pdf", resp.Header.Get("Content-Type"))
		assert.Equal(t, `attachment; filename="R_sum_ _final_.pdf"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22.pdf`, resp.Header.Get("Content-Disposition"))
	})

	t.Run("put unknown size", func(t *testing.T) {
		key := Key()
		n, err := s.Put(ctx, key, io.MultiReader(strings.NewReader("hello "), strings.NewReader("world")), -1, "text/plain")
		require.NoError(t, err)
		assert.Equal(t, int64(11), n)
		u, err := s.DownloadURL(ctx, key, "hello.txt", "", time.Minute)
		require.NoError(t, err)
		resp, body := get(t, u)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "hello world", string(body))
		assert.Equal(t, "application/octet-stream", resp.Header.Get("Content-Type"), "no stored type: octet-stream")
	})

	t.Run("a body shorter than announced is refused and not stored", func(t *testing.T) {
		key := Key()
		_, err := s.Put(ctx, key, strings.NewReader("short"), 50, "text/plain")
		require.Error(t, err)
		ok, err := s.Exists(ctx, key)
		require.NoError(t, err)
		assert.False(t, ok)
	})

	t.Run("open reads back what was put; a missing blob is fs.ErrNotExist", func(t *testing.T) {
		key := Key()
		_, err := s.Put(ctx, key, strings.NewReader("read me back"), 12, "text/plain")
		require.NoError(t, err)
		rc, err := s.Open(ctx, key)
		require.NoError(t, err)
		got, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		assert.Equal(t, "read me back", string(got))
		_, err = s.Open(ctx, Key())
		assert.ErrorIs(t, err, fs.ErrNotExist)
		_, err = s.Open(ctx, "../etc/passwd")
		assert.Error(t, err)
		assert.NotErrorIs(t, err, fs.ErrNotExist)
	})

	t.Run("delete, twice", func(t *testing.T) {
		key := Key()
		_, err := s.Put(ctx, key, strings.NewReader("x"), 1, "")
		require.NoError(t, err)
		require.NoError(t, s.Delete(ctx, key))
		ok, err := s.Exists(ctx, key)
		require.NoError(t, err)
		assert.False(t, ok)
		require.NoError(t, s.Delete(ctx, key), "deleting a missing blob is not an error")
	})

	t.Run("keys holdco never makes are refused", func(t *testing.T) {
		for _, key := range []string{"../etc/passwd", "/abs", "a//b", "A/B", "a/../b", "", "a/b/", strings.Repeat("a", 200),
			"a/..", "a/.jsonl", "a/b..jsonl", "a/b.JSONL", "a/b.c.d", "a.b/c", "a/b.", "a/b.jsonl/c"} {
			_, err := s.Put(ctx, key, strings.NewReader("x"), 1, "")
			assert.Error(t, err, key)
			_, err = s.DownloadURL(ctx, key, "x", "", time.Minute)
			assert.Error(t, err, key)
			assert.Error(t, s.Delete(ctx, key), key)
		}
	})
	t.Run("list a folder: every key under it, sorted, with size and time", func(t *testing.T) {
		before := time.Now().Add(-time.Minute)
		run := "runs/" + uuid.NewString() + "/"
		other := "runs/" + uuid.NewString() + "/"
		put := func(key, body string) {
			t.Helper()
			_, err := s.Put(ctx, key, strings.NewReader(body), int64(len(body)), "application/x-ndjson")
			require.NoError(t, err)
		}
		put(run+"trace.jsonl", "{\"a\":1}\n{\"b\":2}\n")
		put(run+"000002-tool-01.jsonl", "two\n")
		put(run+"000001-model.jsonl", "one\n")
		put(run+"deeper/x.jsonl", "x")
		put(other+"trace.jsonl", "not this run")
		put(strings.TrimSuffix(run, "/")+"0/trace.jsonl", "a sibling whose name extends the folder's")

		got, err := s.List(ctx, run)
		require.NoError(t, err)
		var keys []string
		for _, b := range got {
			keys = append(keys, b.Key)
			assert.WithinRange(t, b.ModTime, before, time.Now().Add(time.Minute), b.Key)
		}
		assert.Equal(t, []string{run + "000001-model.jsonl", run + "000002-tool-01.jsonl", run + "deeper/x.jsonl", run + "trace.jsonl"}, keys)
		require.Len(t, got, 4)
		assert.Equal(t, int64(4), got[0].Size)
		assert.Equal(t, int64(16), got[3].Size)

		require.NoError(t, s.Delete(ctx, run+"000001-model.jsonl"))
		got, err = s.List(ctx, run)
		require.NoError(t, err)
		assert.Len(t, got, 3, "a deleted blob is not listed")

		got, err = s.List(ctx, "runs/"+uuid.NewString()+"/")
		require.NoError(t, err)
		assert.Empty(t, got, "a folder with nothing in it is an empty list")
		got, err = s.List(ctx, run+"trace.jsonl/")
		assert.Error(t, err, "a key is not a folder")
		assert.Empty(t, got)

		for _, prefix := range []string{"", "runs", "/runs/", "../", "runs/../", "runs//", "RUNS/", "runs/x.y/"} {
			_, err := s.List(ctx, prefix)
			assert.Error(t, err, "prefix %q", prefix)
		}
	})
}
