package identity_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
	"holdco/service/servicetest"
)

func TestPersonalTokens(t *testing.T) {
	e := servicetest.New(t)
	ada := e.As(t, e.WebLogin(t, "ada@example.com", "ada"))
	bob := e.As(t, e.WebLogin(t, "bob@example.com", "bob"))

	days := 1
	tok, err := e.Svc.CreatePersonalToken(ada, " deploy ", &days)
	require.NoError(t, err)
	assert.Equal(t, "deploy", tok.Key.Name)
	patCtx := e.As(t, tok.Raw)
	p, _ := service.PrincipalFrom(patCtx)
	assert.Equal(t, service.CredentialPersonal, p.Credential)

	// A CLI session key is not listed; the PAT is.
	code := cliLogin(t, e, "ada@example.com", "ada").Query().Get("code")
	_, err = e.Svc.ExchangeCLICode(context.Background(), code, verifier)
	require.NoError(t, err)
	list, err := e.Svc.ListPersonalTokens(ada)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, tok.Key.ID, list[0].ID)

	assert.True(t, models.IsCode(e.Svc.RevokePersonalToken(bob, tok.Key.ID), models.CodeForbidden), "another user's token")
	assert.True(t, models.IsCode(e.Svc.RevokePersonalToken(ada, "00000000-0000-4000-8000-000000000000"), models.CodeNotFound))
	require.NoError(t, e.Svc.RevokePersonalToken(ada, tok.Key.ID))
	require.NoError(t, e.Svc.RevokePersonalToken(ada, tok.Key.ID), "idempotent")
	_, err = e.Svc.Authenticate(context.Background(), tok.Raw)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "revoked at once on this replica")
	list, _ = e.Svc.ListPersonalTokens(ada)
	assert.Empty(t, list)

	// Expiry.
	short, err := e.Svc.CreatePersonalToken(ada, "short", &days)
	require.NoError(t, err)
	e.Clock.Advance(25 * time.Hour)
	_, err = e.Svc.Authenticate(context.Background(), short.Raw)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))

	for _, bad := range []int{0, 366} {
		_, err := e.Svc.CreatePersonalToken(ada, "x", &bad)
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	}
	_, err = e.Svc.CreatePersonalToken(ada, "  ", nil)
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.Svc.CreatePersonalToken(context.Background(), "x", nil)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
}

func TestConglomerateOwnership(t *testing.T) {
	e := servicetest.New(t)
	ada := e.As(t, e.WebLogin(t, "ada@example.com", "ada"))
	bob := e.As(t, e.WebLogin(t, "bob@example.com", "bob"))
	mine, err := e.Svc.MyConglomerates(ada)
	require.NoError(t, err)
	require.Len(t, mine, 1)
	id := mine[0].ID
	assert.Equal(t, models.RoleOwner, mine[0].Role)
	assert.Equal(t, mine[0].TrialStartedAt.Add(72*time.Hour), mine[0].TrialEndsAt())

	_, err = e.Svc.GetConglomerate(bob, id)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.Svc.GetConglomerate(ada, "00000000-0000-4000-8000-000000000000")
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	var u companies.ConglomerateUpdate
	u.DailyCreditCap.Set = true
	cap := int64(200)
	u.DailyCreditCap.Value = &cap
	v, err := e.Svc.UpdateConglomerate(ada, id, u)
	require.NoError(t, err)
	assert.Equal(t, int64(200), *v.DailyCreditCap)
	name := "Acme Holdings"
	v, err = e.Svc.UpdateConglomerate(ada, id, companies.ConglomerateUpdate{Name: &name})
	require.NoError(t, err)
	assert.Equal(t, int64(200), *v.DailyCreditCap, "an omitted cap stays")
	assert.Equal(t, "Acme Holdings", v.Name)
	u.DailyCreditCap.Value = nil
	v, err = e.Svc.UpdateConglomerate(ada, id, u)
	require.NoError(t, err)
	assert.Nil(t, v.DailyCreditCap, "null clears the cap")
	neg := int64(-1)
	u.DailyCreditCap.Value = &neg
	_, err = e.Svc.UpdateConglomerate(ada, id, u)
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.Svc.UpdateConglomerate(bob, id, companies.ConglomerateUpdate{Name: &name})
	assert.True(t, models.IsCode(err, models.CodeForbidden))
}
