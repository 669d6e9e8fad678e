package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
)

func TestPersonalTokens(t *testing.T) {
	e := newEnv(t)
	ada := e.as(t, e.webLogin(t, "ada@example.com", "ada"))
	bob := e.as(t, e.webLogin(t, "bob@example.com", "bob"))

	days := 1
	tok, err := e.svc.CreatePersonalToken(ada, " deploy ", &days)
	require.NoError(t, err)
	assert.Equal(t, "deploy", tok.Key.Name)
	patCtx := e.as(t, tok.Raw)
	p, _ := service.PrincipalFrom(patCtx)
	assert.Equal(t, service.CredentialPersonal, p.Credential)

	// A CLI session key is not listed; the PAT is.
	code := e.cliLogin(t, "ada@example.com", "ada").Query().Get("code")
	_, err = e.svc.ExchangeCLICode(context.Background(), code, verifier)
	require.NoError(t, err)
	list, err := e.svc.ListPersonalTokens(ada)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, tok.Key.ID, list[0].ID)

	assert.True(t, models.IsCode(e.svc.RevokePersonalToken(bob, tok.Key.ID), models.CodeForbidden), "another user's token")
	assert.True(t, models.IsCode(e.svc.RevokePersonalToken(ada, "00000000-0000-4000-8000-000000000000"), models.CodeNotFound))
	require.NoError(t, e.svc.RevokePersonalToken(ada, tok.Key.ID))
	require.NoError(t, e.svc.RevokePersonalToken(ada, tok.Key.ID), "idempotent")
	_, err = e.svc.Authenticate(context.Background(), tok.Raw)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "revoked at once on this replica")
	list, _ = e.svc.ListPersonalTokens(ada)
	assert.Empty(t, list)

	// Expiry.
	short, err := e.svc.CreatePersonalToken(ada, "short", &days)
	require.NoError(t, err)
	e.clock.Advance(25 * time.Hour)
	_, err = e.svc.Authenticate(context.Background(), short.Raw)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))

	for _, bad := range []int{0, 366} {
		_, err := e.svc.CreatePersonalToken(ada, "x", &bad)
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	}
	_, err = e.svc.CreatePersonalToken(ada, "  ", nil)
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.svc.CreatePersonalToken(context.Background(), "x", nil)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
}

func TestConglomerateOwnership(t *testing.T) {
	e := newEnv(t)
	ada := e.as(t, e.webLogin(t, "ada@example.com", "ada"))
	bob := e.as(t, e.webLogin(t, "bob@example.com", "bob"))
	mine, err := e.svc.MyConglomerates(ada)
	require.NoError(t, err)
	require.Len(t, mine, 1)
	id := mine[0].ID
	assert.Equal(t, models.RoleOwner, mine[0].Role)
	assert.Equal(t, mine[0].TrialStartedAt.Add(72*time.Hour), mine[0].TrialEndsAt())

	_, err = e.svc.GetConglomerate(bob, id)
	assert.True(t, models.IsCode(err, models.CodeForbidden))
	_, err = e.svc.GetConglomerate(ada, "00000000-0000-4000-8000-000000000000")
	assert.True(t, models.IsCode(err, models.CodeNotFound))

	var u service.ConglomerateUpdate
	u.DailyCreditCap.Set = true
	cap := int64(200)
	u.DailyCreditCap.Value = &cap
	v, err := e.svc.UpdateConglomerate(ada, id, u)
	require.NoError(t, err)
	assert.Equal(t, int64(200), *v.DailyCreditCap)
	name := "Acme Holdings"
	v, err = e.svc.UpdateConglomerate(ada, id, service.ConglomerateUpdate{Name: &name})
	require.NoError(t, err)
	assert.Equal(t, int64(200), *v.DailyCreditCap, "an omitted cap stays")
	assert.Equal(t, "Acme Holdings", v.Name)
	u.DailyCreditCap.Value = nil
	v, err = e.svc.UpdateConglomerate(ada, id, u)
	require.NoError(t, err)
	assert.Nil(t, v.DailyCreditCap, "null clears the cap")
	neg := int64(-1)
	u.DailyCreditCap.Value = &neg
	_, err = e.svc.UpdateConglomerate(ada, id, u)
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.svc.UpdateConglomerate(bob, id, service.ConglomerateUpdate{Name: &name})
	assert.True(t, models.IsCode(err, models.CodeForbidden))
}
