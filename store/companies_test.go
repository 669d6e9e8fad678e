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

func TestCreateCompanyRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	_, c := signUp(t, s, "owner")

	h := handle("acme")
	created, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{
		Name:    "Acme",
		Handle:  h,
		Idea:    "Rockets, delivered.",
		Mission: "Make delivery boring.",
	})
	require.NoError(t, err)
	require.NoError(t, uuid.Validate(created.ID))
	assert.Equal(t, c.ID, created.ConglomerateID)
	assert.Equal(t, models.CompanyActive, created.Status)
	assert.Nil(t, created.ArchivedAt)

	got, err := s.Companies().GetCompany(ctx, systemScope(t, s, created.ID))
	require.NoError(t, err)
	assert.Equal(t, created, got)
	assert.Equal(t, time.UTC, got.CreatedAt.Location())

	_, err = s.SystemCompanyScope(ctx, uuid.NewString())
	assert.ErrorIs(t, err, models.ErrNotFound)
}

func TestCompanyHandleIsUniqueAcrossThePlatform(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	_, a := signUp(t, s, "a")
	_, b := signUp(t, s, "b")
	h := handle("taken")

	_, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(a.ID), models.Company{Name: "One", Handle: h})
	require.NoError(t, err)

	_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(a.ID), models.Company{Name: "Two", Handle: h})
	require.ErrorIs(t, err, models.ErrDuplicate)
	assert.Contains(t, err.Error(), "store: create company")

	_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(b.ID), models.Company{Name: "Three", Handle: h})
	require.ErrorIs(t, err, models.ErrDuplicate, "another tenant cannot take the handle either")
}

func TestCreateCompanyRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	_, c := signUp(t, s, "owner")

	for _, h := range []string{"", "Upper", "-edge", "edge-", "sp ace", "ümlaut", string(make([]byte, 65))} {
		_, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "x", Handle: h})
		require.Error(t, err, "handle %q", h)
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "handle %q: %v", h, err)
	}

	_, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "x", Handle: handle("ok"), Status: "deleted"})
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%v", err)

	_, err = s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(uuid.NewString()), models.Company{Name: "x", Handle: handle("orphan")})
	assert.ErrorIs(t, err, models.ErrNotFound, "unknown conglomerate")
}

func TestListCompaniesHidesArchivedUnlessAsked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := testenv.NewStore(t)
	_, c := signUp(t, s, "owner")

	active, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Live", Handle: handle("live")})
	require.NoError(t, err)
	paused, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Paused", Handle: handle("paused"), Status: models.CompanyPaused})
	require.NoError(t, err)
	archivedAt := time.Now().UTC().Truncate(time.Microsecond)
	archived, err := s.Companies().CreateCompany(ctx, s.SystemConglomerateScope(c.ID), models.Company{Name: "Gone", Handle: handle("gone"), Status: models.CompanyArchived, ArchivedAt: &archivedAt})
	require.NoError(t, err)

	list, err := s.Companies().ListCompanies(ctx, s.SystemConglomerateScope(c.ID), false)
	require.NoError(t, err)
	assert.Equal(t, []string{active.ID, paused.ID}, companyIDs(list))

	list, err = s.Companies().ListCompanies(ctx, s.SystemConglomerateScope(c.ID), true)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{active.ID, paused.ID, archived.ID}, companyIDs(list))
	for _, co := range list {
		if co.ID == archived.ID {
			require.NotNil(t, co.ArchivedAt)
			assert.True(t, archivedAt.Equal(*co.ArchivedAt))
		}
	}
}

func companyIDs(cs []models.Company) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}
