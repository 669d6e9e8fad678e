package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
	"holdco/testenv"
)

// newCompany makes a company of a fresh account and returns its scope.
func newCompany(t *testing.T, s *store.Store, name string) store.CompanyScope {
	t.Helper()
	_, cong := signUp(t, s, name)
	c, err := s.Companies().CreateCompany(context.Background(), s.SystemConglomerateScope(cong.ID), models.Company{Name: name, Handle: handle(name)})
	require.NoError(t, err)
	return systemScope(t, s, c.ID)
}

// Paging the feed with the returned cursor visits every event exactly
// once, newest first, even when many share one timestamp.
func TestActivityFeedPagesThroughEqualTimestamps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	co := newCompany(t, s, "feed")
	other := newCompany(t, s, "other")
	base := time.Now().UTC().Truncate(time.Second)
	want := []string{}
	for i := range 7 {
		at := base.Add(time.Duration(i/3) * time.Second) // three events per instant
		summary := fmt.Sprintf("event %d", i)
		require.NoError(t, store.RecordActivityAt(s, ctx, co, models.ActivityInput{Kind: models.ActivityDocumentUpdated, Summary: summary}, at))
		want = append([]string{summary}, want...)
	}
	require.NoError(t, s.Companies().RecordActivity(ctx, other, models.ActivityInput{Kind: models.ActivityEmailSent, Summary: "not yours"}))

	got := []string{}
	cur := models.ActivityCursor{}
	for page := 0; page < 10; page++ {
		events, err := s.Companies().ListActivity(ctx, co, cur, 2)
		require.NoError(t, err)
		if len(events) == 0 {
			break
		}
		for _, e := range events {
			got = append(got, e.Summary)
			assert.Equal(t, co.ID(), e.CompanyID)
		}
		last := events[len(events)-1]
		cur = models.ActivityCursor{Before: last.CreatedAt, BeforeID: last.ID}
	}
	assert.Equal(t, want, got)

	// before alone: strictly older than the instant.
	events, err := s.Companies().ListActivity(ctx, co, models.ActivityCursor{Before: base.Add(time.Second)}, 50)
	require.NoError(t, err)
	assert.Len(t, events, 3)
}

// first_dollar is reached once, whatever the concurrency: the primary key
// decides, not a check before the insert.
func TestMilestoneIsReachedOnceUnderConcurrency(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	co := newCompany(t, s, "ms")
	const n = 16
	var wg sync.WaitGroup
	results := make(chan bool, n)
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.Companies().ReachMilestone(ctx, co, models.MilestoneFirstDollar, time.Now())
			results <- ok
			errs <- err
		}()
	}
	wg.Wait()
	close(results)
	close(errs)
	reached := 0
	for ok := range results {
		if ok {
			reached++
		}
	}
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, 1, reached)
	ms, err := s.Companies().ListMilestones(ctx, co)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Nil(t, ms[0].SeenAt)
	events, err := s.Companies().ListActivity(ctx, co, models.ActivityCursor{}, 50)
	require.NoError(t, err)
	assert.Equal(t, 1, countKind(events, models.ActivityMilestoneReached))

	marked, err := s.Companies().MarkMilestonesSeen(ctx, co, time.Now())
	require.NoError(t, err)
	assert.EqualValues(t, 1, marked)
	marked, err = s.Companies().MarkMilestonesSeen(ctx, co, time.Now())
	require.NoError(t, err)
	assert.EqualValues(t, 0, marked, "nothing left unseen")
}

func countKind(events []models.ActivityEvent, kind models.ActivityKind) int {
	n := 0
	for _, e := range events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func TestDocumentsArePutReplacedAndDeletedWithTheirEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	co := newCompany(t, s, "docs")
	other := newCompany(t, s, "docs-other")
	ev := models.ActivityInput{Kind: models.ActivityDocumentUpdated, Summary: "updated"}

	d, created, err := s.Companies().PutDocument(ctx, co, models.Document{DocumentType: "strategy", Title: "Strategy", Content: "v1", Visibility: models.DocumentVisible, UpdatedBy: models.ActorUser}, ev)
	require.NoError(t, err)
	assert.True(t, created)
	assert.EqualValues(t, 1, d.Revision)
	d, created, err = s.Companies().PutDocument(ctx, co, models.Document{DocumentType: "strategy", Title: "Strategy", Content: "version two", Visibility: models.DocumentVisible, UpdatedBy: models.ActorAgent}, ev)
	require.NoError(t, err)
	assert.False(t, created)
	assert.EqualValues(t, 2, d.Revision)
	_, _, err = s.Companies().PutDocument(ctx, co, models.Document{DocumentType: "agent_memory", Title: "Memory", Content: "x", Visibility: models.DocumentInternal, UpdatedBy: models.ActorAgent}, ev)
	require.NoError(t, err)

	got, err := s.Companies().GetDocument(ctx, co, "strategy")
	require.NoError(t, err)
	assert.Equal(t, "version two", got.Content)
	assert.EqualValues(t, len("version two"), got.SizeBytes)
	assert.EqualValues(t, 2, got.Revision)
	assert.Equal(t, models.ActorAgent, got.UpdatedBy)

	visible, err := s.Companies().ListDocuments(ctx, co, false)
	require.NoError(t, err)
	require.Len(t, visible, 1)
	assert.Equal(t, "strategy", visible[0].DocumentType)
	all, err := s.Companies().ListDocuments(ctx, co, true)
	require.NoError(t, err)
	assert.Len(t, all, 2)

	// Another company sees none of it.
	_, err = s.Companies().GetDocument(ctx, other, "strategy")
	require.ErrorIs(t, err, models.ErrNotFound)
	require.ErrorIs(t, s.Companies().DeleteDocument(ctx, other, "strategy", ev), models.ErrNotFound)

	require.NoError(t, s.Companies().DeleteDocument(ctx, co, "strategy", models.ActivityInput{Kind: models.ActivityDocumentDeleted}))
	_, err = s.Companies().GetDocument(ctx, co, "strategy")
	require.ErrorIs(t, err, models.ErrNotFound)

	events, err := s.Companies().ListActivity(ctx, co, models.ActivityCursor{}, 50)
	require.NoError(t, err)
	assert.Equal(t, 3, countKind(events, models.ActivityDocumentUpdated))
	assert.Equal(t, 1, countKind(events, models.ActivityDocumentDeleted))
	assert.Equal(t, models.ActivityDocumentDeleted, events[0].Kind, "newest first")
	assert.Contains(t, events[len(events)-1].Data, `"created":true`)
}

// The feed says a company is provisioned when its last resource turns
// ready, once per transition.
func TestProvisionedEventOnTheLastReadyResource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	co := newCompany(t, s, "prov")
	provisioned := func() int {
		events, err := s.Companies().ListActivity(ctx, co, models.ActivityCursor{}, 100)
		require.NoError(t, err)
		return countKind(events, models.ActivityCompanyProvisioned)
	}
	for _, k := range models.ResourceKinds {
		require.NoError(t, s.Companies().SaveResource(ctx, co, models.CompanyResource{Kind: k, Status: models.ResourceProvisioning}))
	}
	for i, k := range models.ResourceKinds {
		assert.Equal(t, 0, provisioned(), "not before resource %d", i)
		require.NoError(t, s.Companies().SaveResource(ctx, co, models.CompanyResource{Kind: k, Status: models.ResourceReady, Ref: "r"}))
	}
	assert.Equal(t, 1, provisioned())
	require.NoError(t, s.Companies().SaveResource(ctx, co, models.CompanyResource{Kind: models.ResourceHosting, Status: models.ResourceReady, Ref: "r"}))
	assert.Equal(t, 1, provisioned(), "saving a ready resource again is no transition")
	require.NoError(t, s.Companies().SaveResource(ctx, co, models.CompanyResource{Kind: models.ResourceHosting, Status: models.ResourceFailed}))
	require.NoError(t, s.Companies().SaveResource(ctx, co, models.CompanyResource{Kind: models.ResourceHosting, Status: models.ResourceReady, Ref: "r"}))
	assert.Equal(t, 2, provisioned(), "ready again after a heal")
}

// Provisioning a ready company again ensures each resource again
// (provisioning, then ready): that is no transition, so the feed gets no
// new company_provisioned (it got three before), and the company stays
// ready throughout.
func TestReprovisioningAReadyCompanyIsNoNewProvisionedEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	co := newCompany(t, s, "reprov")
	provisioned := func() int {
		events, err := s.Companies().ListActivity(ctx, co, models.ActivityCursor{}, 100)
		require.NoError(t, err)
		return countKind(events, models.ActivityCompanyProvisioned)
	}
	for _, k := range models.ResourceKinds {
		require.NoError(t, s.Companies().SaveResource(ctx, co, models.CompanyResource{Kind: k, Status: models.ResourceReady, Ref: "r-" + string(k)}))
	}
	require.Equal(t, 1, provisioned())
	for _, k := range models.ResourceKinds {
		require.NoError(t, s.Companies().SaveResource(ctx, co, models.CompanyResource{Kind: k, Status: models.ResourceProvisioning}))
		ready, err := s.Turns().CompanyReady(ctx, co)
		require.NoError(t, err)
		assert.True(t, ready, "still ready while %s is ensured again", k)
		require.NoError(t, s.Companies().SaveResource(ctx, co, models.CompanyResource{Kind: k, Status: models.ResourceReady, Ref: "r-" + string(k)}))
	}
	assert.Equal(t, 1, provisioned(), "no new transition")
	rs, err := s.Companies().ListResources(ctx, co)
	require.NoError(t, err)
	for _, r := range rs {
		assert.Equal(t, "r-"+string(r.Kind), r.Ref)
		assert.Equal(t, 1, r.Attempts, "the ensure is counted")
	}
}
