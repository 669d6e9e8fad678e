package gitrepo_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/gitrepo"
)

func TestCommitListAndReadNestedFiles(t *testing.T) {
	ctx := context.Background()
	s, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	id := uuid.NewString()
	_, err = s.Ensure(ctx, id, "Shop", "maps", true)
	require.NoError(t, err)
	first, err := s.Head(ctx, id)
	require.NoError(t, err)

	c1, err := s.Commit(ctx, id, []gitrepo.Change{
		{Path: "assets/css/site.css", Content: []byte("body{}")},
		{Path: "assets/app.js", Content: []byte("1")},
		{Path: "index.html", Content: []byte("<h1>new</h1>")},
		{Path: "a-b.txt", Content: []byte("dash sorts before the directory a/")},
		{Path: "a/x.txt", Content: []byte("x")},
	}, "Site v2", "holdco agent")
	require.NoError(t, err)
	assert.NotEqual(t, first, c1)
	got, err := s.ReadFile(ctx, id, "assets/css/site.css")
	require.NoError(t, err)
	assert.Equal(t, "body{}", string(got))
	got, err = s.ReadFile(ctx, id, "index.html")
	require.NoError(t, err)
	assert.Equal(t, "<h1>new</h1>", string(got))
	require.NoError(t, s.Check(ctx, id), "the repository stays valid")

	_, err = s.Commit(ctx, id, []gitrepo.Change{{Path: "assets/app.js", Delete: true}}, "drop js", "holdco agent")
	require.NoError(t, err)
	_, err = s.ReadFile(ctx, id, "assets/app.js")
	assert.ErrorIs(t, err, gitrepo.ErrNotFound)
	files, more, err := s.List(ctx, id, "", 100)
	require.NoError(t, err)
	assert.False(t, more)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	assert.Equal(t, []string{"README.md", "a-b.txt", "a/x.txt", "assets/css/site.css", "index.html"}, paths)
	files, more, err = s.List(ctx, id, "assets/", 100)
	require.NoError(t, err)
	assert.Len(t, files, 1)
	assert.False(t, more)
}

func TestConcurrentCommitsLoseNothing(t *testing.T) {
	ctx := context.Background()
	s, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	id := uuid.NewString()
	_, err = s.Ensure(ctx, id, "Shop", "maps", true)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Commit(ctx, id, []gitrepo.Change{{Path: fmt.Sprintf("notes/%02d.md", i), Content: []byte("x")}}, "note", "holdco agent")
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	files, _, err := s.List(ctx, id, "notes/", 100)
	require.NoError(t, err)
	assert.Len(t, files, 12, "every commit's file is on main")
}

// TestTwoStoresOnOneDirectoryLoseNoCommit: two workers sharing the
// repositories' volume (two Stores, no shared lock in memory) commit at
// once; main moves by compare-and-set, so every commit stays on it.
func TestTwoStoresOnOneDirectoryLoseNoCommit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, err := gitrepo.New(dir)
	require.NoError(t, err)
	b, err := gitrepo.New(dir)
	require.NoError(t, err)
	id := uuid.NewString()
	info, err := a.Ensure(ctx, id, "Shop", "maps", true)
	require.NoError(t, err)
	require.True(t, info.Exists)
	require.Equal(t, "local:"+id+".git", info.Home)
	require.NotEmpty(t, info.FirstCommit)

	var wg sync.WaitGroup
	for i := range 8 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			_, err := s.Commit(ctx, id, []gitrepo.Change{{Path: fmt.Sprintf("f%d.txt", i), Content: []byte("x")}}, "parallel", "agent")
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for i := range 8 {
		_, err := b.ReadFile(ctx, id, fmt.Sprintf("f%d.txt", i))
		assert.NoError(t, err, "commit %d is on main", i)
	}
	st, err := b.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, info.FirstCommit, st.FirstCommit)
}

func TestFilesReadObjectAndRestore(t *testing.T) {
	ctx := context.Background()
	s, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	id := uuid.NewString()
	_, err = s.Ensure(ctx, id, "Shop", "maps", true)
	require.NoError(t, err)
	first, err := s.Head(ctx, id)
	require.NoError(t, err)
	c, err := s.Commit(ctx, id, []gitrepo.Change{{Path: "index.html", Content: []byte("v2")}, {Path: "a/b.css", Content: []byte("b{}")}}, "v2", "agent")
	require.NoError(t, err)
	files, err := s.Files(ctx, id, c)
	require.NoError(t, err)
	require.Len(t, files, 3)
	assert.Equal(t, "README.md", files[0].Path)
	assert.Equal(t, "a/b.css", files[1].Path)
	body, err := s.ReadObject(ctx, id, files[1].ID)
	require.NoError(t, err)
	assert.Equal(t, "b{}", string(body))
	_, err = s.Files(ctx, id, "0123456789012345678901234567890123456789")
	assert.ErrorIs(t, err, gitrepo.ErrNotFound)

	back, err := s.Restore(ctx, id, first, "roll back", "holdco")
	require.NoError(t, err)
	page, err := s.ReadFile(ctx, id, "index.html")
	require.NoError(t, err)
	assert.Contains(t, string(page), "Coming soon")
	_, err = s.ReadFile(ctx, id, "a/b.css")
	assert.ErrorIs(t, err, gitrepo.ErrNotFound)
	head, _ := s.Head(ctx, id)
	assert.Equal(t, back, head)

	require.NoError(t, s.Delete(ctx, id))
	st, err := s.Status(ctx, id)
	require.NoError(t, err)
	assert.False(t, st.Exists, "the home says gone")
}

// A commit made for a call carries the call's key as a trailer: made again
// for the same call (after a crash lost its answer), even after other
// commits landed, the first commit is answered and main does not move.
func TestCommitOnceFindsTheCallsCommit(t *testing.T) {
	ctx := context.Background()
	s, err := gitrepo.New(t.TempDir())
	require.NoError(t, err)
	id := uuid.NewString()
	_, err = s.Ensure(ctx, id, "Shop", "maps", true)
	require.NoError(t, err)
	call := uuid.NewString()
	page := []gitrepo.Change{{Path: "index.html", Content: []byte("<h1>v2</h1>")}}

	c1, err := s.CommitOnce(ctx, id, page, "Site v2", "holdco agent", call)
	require.NoError(t, err)
	other, err := s.CommitOnce(ctx, id, []gitrepo.Change{{Path: "notes.md", Content: []byte("n")}}, "Notes", "holdco agent", uuid.NewString())
	require.NoError(t, err)
	again, err := s.CommitOnce(ctx, id, page, "Site v2", "holdco agent", call)
	require.NoError(t, err)
	assert.Equal(t, c1, again, "the call's commit")
	head, err := s.Head(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, other, head, "main did not move")

	plain, err := s.Commit(ctx, id, page, "Site v2", "holdco agent")
	require.NoError(t, err)
	assert.NotEqual(t, c1, plain, "a commit without a key is one of its own")
}
