package githubrepo_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/githubrepo"
	"holdco/providers/githubrepo/githubtest"
	"holdco/providers/gitrepo"
)

func newStore(t *testing.T) (*githubrepo.Store, *githubtest.Server) {
	t.Helper()
	srv := githubtest.New(t, "acme", "ghp_test")
	s, err := githubrepo.New(githubrepo.Config{Token: "ghp_test", Owner: "acme", BaseURL: srv.URL})
	require.NoError(t, err)
	return s, srv
}

func TestEnsureSeedsOnceAndRecordsTheFirstCommit(t *testing.T) {
	ctx := context.Background()
	s, srv := newStore(t)
	id := uuid.NewString()

	st, err := s.Status(ctx, id)
	require.NoError(t, err)
	assert.False(t, st.Exists, "GitHub says 404: gone")

	info, err := s.Ensure(ctx, id, "Shop", "sell <things>", true)
	require.NoError(t, err)
	assert.True(t, info.Exists)
	assert.Equal(t, "github:acme/holdco-"+id, info.Home)
	require.NotEmpty(t, info.FirstCommit)
	require.NoError(t, s.Check(ctx, id))
	readme, err := s.ReadFile(ctx, id, "README.md")
	require.NoError(t, err)
	assert.Equal(t, "# Shop\n\nsell <things>\n", string(readme))
	index, err := s.ReadFile(ctx, id, "index.html")
	require.NoError(t, err)
	assert.Contains(t, string(index), "<h1>Shop</h1>")
	_, err = s.ReadFile(ctx, id, "missing.txt")
	assert.ErrorIs(t, err, gitrepo.ErrNotFound)

	again, err := s.Ensure(ctx, id, "Other", "changed", true)
	require.NoError(t, err)
	assert.Equal(t, info, again, "an existing repository is never re-seeded")
	assert.Equal(t, 1, srv.Created())

	require.NoError(t, s.Delete(ctx, id))
	st, err = s.Status(ctx, id)
	require.NoError(t, err)
	assert.False(t, st.Exists)
	_, err = s.Head(ctx, id)
	assert.ErrorIs(t, err, gitrepo.ErrNotFound)
}

func TestCommitsListFilesAndRestore(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	id := uuid.NewString()
	info, err := s.Ensure(ctx, id, "Shop", "x", true)
	require.NoError(t, err)
	first, err := s.Head(ctx, id)
	require.NoError(t, err)

	c1, err := s.Commit(ctx, id, []gitrepo.Change{{Path: "index.html", Content: []byte("<h1>v2</h1>")}, {Path: "assets/app.js", Content: []byte{0, 1, 2}}}, "v2", "agent")
	require.NoError(t, err)
	head, err := s.Head(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, c1, head)
	files, err := s.Files(ctx, id, c1)
	require.NoError(t, err)
	require.Len(t, files, 3)
	assert.Equal(t, "README.md", files[0].Path)
	assert.Equal(t, "assets/app.js", files[1].Path)
	body, err := s.ReadObject(ctx, id, files[1].ID)
	require.NoError(t, err)
	assert.Equal(t, []byte{0, 1, 2}, body)
	list, more, err := s.List(ctx, id, "assets/", 10)
	require.NoError(t, err)
	assert.False(t, more)
	assert.Equal(t, []gitrepo.Entry{{Path: "assets/app.js", Size: 3}}, list)

	_, err = s.Commit(ctx, id, []gitrepo.Change{{Path: "assets/app.js", Delete: true}}, "drop", "agent")
	require.NoError(t, err)
	_, err = s.ReadFile(ctx, id, "assets/app.js")
	assert.ErrorIs(t, err, gitrepo.ErrNotFound)

	// Two workers commit at once: main fast-forwards only, so the loser
	// builds again on the new tip and no commit is lost.
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			_, err := s.Commit(ctx, id, []gitrepo.Change{{Path: "f" + string(rune('a'+i)), Content: []byte("x")}}, "parallel", "agent")
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	for i := range 4 {
		_, err := s.ReadFile(ctx, id, "f"+string(rune('a'+i)))
		assert.NoError(t, err, "commit %d kept", i)
	}

	restored, err := s.Restore(ctx, id, first, "roll back", "holdco")
	require.NoError(t, err)
	page, err := s.ReadFile(ctx, id, "index.html")
	require.NoError(t, err)
	assert.Contains(t, string(page), "Coming soon", "the first tree again")
	head, _ = s.Head(ctx, id)
	assert.Equal(t, restored, head)
	st, err := s.Status(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, info.FirstCommit, st.FirstCommit, "history is kept: the first commit stays")
	_, err = s.Restore(ctx, id, "0123456789012345678901234567890123456789", "x", "holdco")
	assert.ErrorIs(t, err, gitrepo.ErrNotFound)
}

func TestUnseededRepositoryTakesItsFirstCommit(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	id := uuid.NewString()
	info, err := s.Ensure(ctx, id, "Imported", "x", false)
	require.NoError(t, err)
	assert.True(t, info.Exists)
	assert.Empty(t, info.FirstCommit)
	head, err := s.Head(ctx, id)
	require.NoError(t, err)
	assert.Empty(t, head)
	require.NoError(t, s.Check(ctx, id))

	c, err := s.Commit(ctx, id, []gitrepo.Change{{Path: "index.html", Content: []byte("hi")}, {Path: "README.md", Content: []byte("r")}}, "import", "agent")
	require.NoError(t, err)
	st, err := s.Status(ctx, id)
	require.NoError(t, err)
	assert.NotEmpty(t, st.FirstCommit)
	assert.NotEqual(t, c, st.FirstCommit, "the contents API made the first commit, the Git data API the second")
	files, err := s.Files(ctx, id, c)
	require.NoError(t, err)
	assert.Len(t, files, 2)
}

func TestBadCredentialsAreAnError(t *testing.T) {
	srv := githubtest.New(t, "acme", "ghp_test")
	s, err := githubrepo.New(githubrepo.Config{Token: "wrong", Owner: "acme", BaseURL: srv.URL})
	require.NoError(t, err)
	_, err = s.Status(context.Background(), uuid.NewString())
	assert.Error(t, err, "401 is not 'gone'")
	_, err = githubrepo.New(githubrepo.Config{Owner: "acme"})
	assert.Error(t, err)
}
