package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/testenv"
)

// Two tenants side by side: nothing one owns shows up in the other's
// answers.
func TestTenantsAreIsolated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	alice, aliceCo := signUp(t, s, "alice")
	bob, bobCo := signUp(t, s, "bob")

	aliceCompany, err := s.CreateCompany(ctx, aliceCo.ID, models.Company{Name: "A", Handle: handle("alice")})
	require.NoError(t, err)
	bobCompany, err := s.CreateCompany(ctx, bobCo.ID, models.Company{Name: "B", Handle: handle("bob")})
	require.NoError(t, err)

	// The tenant argument decides where a company goes, not the row's field.
	smuggled, err := s.CreateCompany(ctx, aliceCo.ID, models.Company{Name: "S", Handle: handle("smuggled"), ConglomerateID: bobCo.ID})
	require.NoError(t, err)
	assert.Equal(t, aliceCo.ID, smuggled.ConglomerateID)

	list, err := s.ListCompanies(ctx, aliceCo.ID, true)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{aliceCompany.ID, smuggled.ID}, companyIDs(list))
	list, err = s.ListCompanies(ctx, bobCo.ID, true)
	require.NoError(t, err)
	assert.Equal(t, []string{bobCompany.ID}, companyIDs(list))

	for _, tc := range []struct {
		conglomerate, user string
		want               bool
	}{
		{aliceCo.ID, alice.ID, true},
		{bobCo.ID, bob.ID, true},
		{aliceCo.ID, bob.ID, false},
		{bobCo.ID, alice.ID, false},
	} {
		member, err := s.IsMember(ctx, tc.conglomerate, tc.user)
		require.NoError(t, err)
		assert.Equal(t, tc.want, member, "IsMember(%s, %s)", tc.conglomerate, tc.user)
	}

	congls, err := s.ListConglomeratesForUser(ctx, bob.ID)
	require.NoError(t, err)
	require.Len(t, congls, 1)
	assert.Equal(t, bobCo.ID, congls[0].ID)

	// GetCompany finds any company by id; the tenant it reports is what
	// service/ checks membership against.
	got, err := s.GetCompany(ctx, bobCompany.ID)
	require.NoError(t, err)
	member, err := s.IsMember(ctx, got.ConglomerateID, alice.ID)
	require.NoError(t, err)
	assert.False(t, member)
}
