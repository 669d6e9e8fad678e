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
