package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

func newFileCompany(t *testing.T, s *store.Store, name string) store.CompanyScope {
	t.Helper()
	_, c := signUp(t, s, name)
	co, err := s.Companies().CreateCompany(context.Background(), s.SystemConglomerateScope(c.ID), models.Company{Name: name, Handle: handle(name)})
	require.NoError(t, err)
	return systemScope(t, s, co.ID)
}

// putFile records an upload intent and commits it, as the use case does.
func putFile(t *testing.T, s *store.Store, scope store.CompanyScope, path string, size, quota int64) (models.CompanyFile, error) {
	t.Helper()
	key := scope.ID() + "/" + uuid.NewString()
	require.NoError(t, s.Files().RecordUploadIntent(context.Background(), scope, key, time.Now().Add(time.Hour)))
	f, _, err := s.Files().CommitFile(context.Background(), scope, models.CompanyFile{Path: path, BlobKey: key, SizeBytes: size, ContentType: "text/plain", Source: "upload"}, quota)
	return f, err
}

func TestFilesAreScopedToTheirCompany(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	ada, bob := newFileCompany(t, s, "ada"), newFileCompany(t, s, "bob")
	f, err := putFile(t, s, ada, "a/x", 10, 1000)
	require.NoError(t, err)
	_, err = putFile(t, s, bob, "a/x", 7, 1000)
	require.NoError(t, err, "paths are unique per company only")

	_, err = s.Files().GetFile(ctx, bob, f.ID)
	assert.ErrorIs(t, err, models.ErrNotFound)
	_, err = s.Files().DeleteFile(ctx, bob, f.ID)
	assert.ErrorIs(t, err, models.ErrNotFound)
	owner, err := s.Files().FileCompany(ctx, f.ID)
	require.NoError(t, err)
	assert.Equal(t, ada.ID(), owner)

	for _, scope := range []store.CompanyScope{ada, bob} {
		files, err := s.Files().ListFiles(ctx, scope)
		require.NoError(t, err)
		require.Len(t, files, 1)
		assert.Equal(t, scope.ID(), files[0].CompanyID)
	}
	n, b, err := s.Files().FileUsage(ctx, bob)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{1, 7}, [2]int64{n, b})

	var zero store.CompanyScope
	_, err = s.Files().ListFiles(ctx, zero)
	assert.ErrorIs(t, err, store.ErrNoScope)
	_, _, err = s.Files().FileUsage(ctx, zero)
	assert.ErrorIs(t, err, store.ErrNoScope)
	_, err = s.Files().DeleteFilesUnderPrefix(ctx, zero, "a/")
	assert.ErrorIs(t, err, store.ErrNoScope)
}

// TestPrefixMatchesLiterally: the prefix is compared as text, so LIKE's
// wildcards and non-ASCII characters in it match only themselves.
func TestPrefixMatchesLiterally(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	c := newFileCompany(t, s, "wild")
	for _, p := range []string{"100%/a", "100x/a", "a_b/c", "axb/c", "café/menu", "cafe/menu", "Z/x", "z/x"} {
		_, err := putFile(t, s, c, p, 1, 1000)
		require.NoError(t, err)
	}
	for prefix, want := range map[string]string{"100%/": "100%/a", "a_b/": "a_b/c", "café/": "café/menu", "Z/": "Z/x"} {
		got, err := s.Files().DeleteFilesUnderPrefix(ctx, c, prefix)
		require.NoError(t, err)
		require.Len(t, got, 1, prefix)
		assert.Equal(t, want, got[0].Path)
	}
	files, err := s.Files().ListFiles(ctx, c)
	require.NoError(t, err)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	assert.Equal(t, []string{"100x/a", "axb/c", "cafe/menu", "z/x"}, paths, "byte order on both databases")
	n, b, err := s.Files().FileUsage(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{4, 4}, [2]int64{n, b})
}

func TestCommitFileQuotaAndReplacement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	c := newFileCompany(t, s, "quota")
	first, err := putFile(t, s, c, "f", 60, 100)
	require.NoError(t, err)
	_, err = putFile(t, s, c, "g", 50, 100)
	var qe *store.FileQuotaError
	require.True(t, errors.As(err, &qe), "%v", err)
	assert.Equal(t, store.FileQuotaError{UsedBytes: 60, QuotaBytes: 100, SizeBytes: 50}, *qe)

	key := c.ID() + "/" + uuid.NewString()
	require.NoError(t, s.Files().RecordUploadIntent(ctx, c, key, time.Now().Add(time.Hour)))
	saved, replaced, err := s.Files().CommitFile(ctx, c, models.CompanyFile{Path: "f", BlobKey: key, SizeBytes: 90, ContentType: "a/b", Source: "agent"}, 100)
	require.NoError(t, err)
	require.NotNil(t, replaced)
	assert.Equal(t, first.BlobKey, replaced.BlobKey)
	assert.Equal(t, first.ID, saved.ID)
	n, b, err := s.Files().FileUsage(ctx, c)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{1, 90}, [2]int64{n, b})

	due, err := s.Files().DueBlobDeletions(ctx, time.Now().Add(2*time.Hour), 100)
	require.NoError(t, err)
	var keys []string
	for _, d := range due {
		keys = append(keys, d.BlobKey)
	}
	assert.Contains(t, keys, first.BlobKey, "the replaced blob is queued")
	assert.NotContains(t, keys, key, "the committed blob is not")
}

func TestClaimedUploadCannotCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	c := newFileCompany(t, s, "claim")
	key := c.ID() + "/" + uuid.NewString()
	at := time.Now().UTC()
	require.NoError(t, s.Files().RecordUploadIntent(ctx, c, key, at))
	ok, err := s.Files().ClaimBlobDeletion(ctx, key, at.Add(time.Second), at.Add(time.Hour))
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.Files().ClaimBlobDeletion(ctx, key, at.Add(time.Second), at.Add(time.Hour))
	require.NoError(t, err)
	assert.False(t, ok, "claimed once")
	_, _, err = s.Files().CommitFile(ctx, c, models.CompanyFile{Path: "late", BlobKey: key, SizeBytes: 1, ContentType: "a/b", Source: "upload"}, 100)
	assert.ErrorIs(t, err, store.ErrUploadExpired)
	files, err := s.Files().ListFiles(ctx, c)
	require.NoError(t, err)
	assert.Empty(t, files)
	require.NoError(t, s.Files().CompleteBlobDeletion(ctx, key))
}
