package connector_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/connector"
	"holdco/service/servicetest"
	"holdco/store"
)

// get_credits reads the account's row and its balance in one statement
// for a principal resolved from a credential (its membership was checked
// then), and the balance is the database's at the call, never a cached
// one.
func TestGetCreditsReadsTheAccountOnce(t *testing.T) {
	e := servicetest.New(t)
	ada, cong := e.User(t, "ada@example.com")
	conn := connector.New(connector.Deps{Core: e.Svc.Files.Core(), Companies: e.Svc.CompaniesUseCases, Billing: e.Svc.BillingUseCases,
		Turns: e.Svc.Turns, Files: e.Svc.Files, Sales: e.Svc.SalesUseCases, Tools: e.Svc.Tools})
	// ada's web sign-in resolved her credential with her account's row.
	p, ok := service.PrincipalFrom(ada)
	require.True(t, ok)
	require.NotNil(t, p.Account)
	resolved := ada

	credits := func(ctx context.Context) (connector.Credits, int64) {
		t.Helper()
		ctx, n := store.WithQueryCount(ctx)
		c, err := conn.GetCredits(ctx)
		require.NoError(t, err)
		return c, n.Load()
	}
	before, n := credits(resolved)
	assert.Equal(t, int64(1), n, "the account's row and its balance in one statement")
	bare := p
	bare.Account = nil
	_, n = credits(service.WithPrincipal(context.Background(), bare))
	assert.Equal(t, int64(2), n, "and the membership for a principal not resolved from a credential")

	_, err := e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 25, "test grant")
	require.NoError(t, err)
	after, _ := credits(resolved)
	assert.Equal(t, before.Balance+25, after.Balance, "the balance is read fresh")
	assert.Equal(t, before.Plan, after.Plan)
	assert.Equal(t, connector.Credits{Balance: after.Balance, SpentToday: 0, MinToStartTurn: before.MinToStartTurn,
		MinToStartBusiness: before.MinToStartBusiness, Plan: before.Plan}, after)

	other, _ := e.User(t, "bob@example.com")
	po, _ := service.PrincipalFrom(other)
	po.ConglomerateID = cong
	_, err = conn.GetCredits(service.WithPrincipal(context.Background(), po))
	assert.True(t, models.IsCode(err, models.CodeForbidden), "another user's account: %v", err)
}
