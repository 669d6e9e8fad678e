package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/testenv"
)

func TestCreateUserWithConglomerateRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	before := time.Now().UTC().Add(-time.Second)

	u, c := signUp(t, s, "ada")

	require.NoError(t, uuid.Validate(u.ID))
	require.NoError(t, uuid.Validate(c.ID))
	assert.Equal(t, u.ID, c.OwnerUserID)
	assert.Equal(t, "ada's conglomerate", c.Name)
	assert.Nil(t, c.DailyCreditCap)
	assert.WithinRange(t, c.TrialStartedAt, before, time.Now().UTC().Add(time.Second))
	assert.Equal(t, time.UTC, c.TrialStartedAt.Location())

	got, err := s.Identity().GetUser(ctx, u.ID)
	require.NoError(t, err)
	assert.Equal(t, u.ID, got.ID)
	assert.Equal(t, "ada@Example.com", got.Email)
	assert.Equal(t, "ada@example.com", got.NormalizedEmail)
	assert.Equal(t, *u.Issuer, *got.Issuer)
	assert.Equal(t, *u.Subject, *got.Subject)
	assert.True(t, u.CreatedAt.Equal(got.CreatedAt), "created_at %v != %v", u.CreatedAt, got.CreatedAt)
	assert.Equal(t, time.UTC, got.CreatedAt.Location())

	bySub, err := s.Identity().GetUserBySubject(ctx, *u.Issuer, *u.Subject)
	require.NoError(t, err)
	assert.Equal(t, u.ID, bySub.ID)

	gotC, err := s.Identity().GetConglomerate(ctx, c.ID)
	require.NoError(t, err)
	assert.Equal(t, c, gotC)

	congls, err := s.Identity().ListConglomeratesForUser(ctx, u.ID)
	require.NoError(t, err)
	require.Len(t, congls, 1)
	assert.Equal(t, c.ID, congls[0].ID)

	member, err := s.Identity().IsMember(ctx, c.ID, u.ID)
	require.NoError(t, err)
	assert.True(t, member)
}

func TestUserLookupsReportNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)

	_, err := s.Identity().GetUser(ctx, uuid.NewString())
	assert.ErrorIs(t, err, models.ErrNotFound)
	_, err = s.Identity().GetUserBySubject(ctx, "https://idp.example", "nobody")
	assert.ErrorIs(t, err, models.ErrNotFound)
	_, err = s.Identity().GetConglomerate(ctx, uuid.NewString())
	assert.ErrorIs(t, err, models.ErrNotFound)
}

func TestSameIdentityTwiceIsDuplicateAndLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	u, _ := signUp(t, s, "grace")

	again := models.User{Email: "other@example.com", NormalizedEmail: "other@example.com", Issuer: u.Issuer, Subject: u.Subject}
	_, _, err := s.Identity().CreateUserWithConglomerate(ctx, again, "second")
	require.ErrorIs(t, err, models.ErrDuplicate)
	assert.Contains(t, err.Error(), "store: create user with conglomerate")

	// The same subject at another issuer is another person.
	otherIss := "https://other-idp.example"
	_, _, err = s.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "g@example.com", NormalizedEmail: "g@example.com", Issuer: &otherIss, Subject: u.Subject}, "third")
	require.NoError(t, err)
}

func TestUsersWithoutIdentityDoNotCollide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)

	for range 2 {
		_, _, err := s.Identity().CreateUserWithConglomerate(ctx, models.User{Email: "x@example.com", NormalizedEmail: "x@example.com"}, "x")
		require.NoError(t, err)
	}
}
