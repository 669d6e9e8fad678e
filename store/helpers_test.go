package store_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/store"
)

// signUp creates a user with a fresh identity and their conglomerate.
func signUp(t testing.TB, s *store.Store, name string) (models.User, models.Conglomerate) {
	t.Helper()
	iss, sub := "https://idp.example", uuid.NewString()
	u, c, err := s.Identity().CreateUserWithConglomerate(context.Background(), models.User{
		Email:           name + "@Example.com",
		NormalizedEmail: name + "@example.com",
		Name:            name,
		Issuer:          &iss,
		Subject:         &sub,
	}, name+"'s conglomerate")
	require.NoError(t, err)
	return u, c
}

// handle returns a handle unique to this run, so tests sharing a Postgres
// database never collide on the platform-wide unique index.
func handle(prefix string) string {
	return prefix + "-" + uuid.NewString()[:8]
}

// systemScope is the worker's scope of a company, for tests that read or
// write its rows directly.
func systemScope(t testing.TB, s *store.Store, companyID string) store.CompanyScope {
	t.Helper()
	sc, err := s.SystemCompanyScope(context.Background(), companyID)
	require.NoError(t, err)
	return sc
}
