package identity_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/servicetest"
	"holdco/store"
)

// A resolved credential carries its user's and account's rows, so
// answering who the caller is reads nothing; the cached principal is
// dropped at once on the replica that revokes the credential, deletes the
// account or changes the account's row, and another replica that had it
// cached notices within service.CredentialCacheTTL.
func TestCachedPrincipalIsDroppedOnRevocationDeletionAndAccountChange(t *testing.T) {
	e := servicetest.New(t)
	ada := e.As(t, e.WebLogin(t, "ada@example.com", "ada"))
	replica := e.Replica(t)

	newPAT := func() string {
		tok, err := e.Svc.CreatePersonalToken(ada, "cli", nil)
		require.NoError(t, err)
		return tok.Raw
	}
	authenticated := func(svc interface {
		Authenticate(context.Context, string) (service.Principal, error)
	}, raw string) bool {
		_, err := svc.Authenticate(context.Background(), raw)
		if err != nil {
			require.True(t, models.IsCode(err, models.CodeUnauthenticated), "%v", err)
		}
		return err == nil
	}

	// The rows come with the credential; GET /auth/me's use case reads none.
	raw := newPAT()
	p, err := e.Svc.Authenticate(context.Background(), raw)
	require.NoError(t, err)
	require.NotNil(t, p.User)
	require.NotNil(t, p.Account)
	assert.Equal(t, p.UserID, p.User.ID)
	assert.Equal(t, p.ConglomerateID, p.Account.ID)
	ctx, queries := store.WithQueryCount(service.WithPrincipal(context.Background(), p))
	me, err := e.Svc.Me(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ada@example.com", me.User.Email)
	assert.Zero(t, queries.Load(), "who am I is answered from the cached rows")

	// Revocation: at once here, within the TTL on the replica that cached it.
	require.True(t, authenticated(replica, raw))
	require.NoError(t, e.Svc.RevokePersonalToken(ada, p.CredentialID))
	assert.False(t, authenticated(e.Svc, raw), "revoked: refused at once on this replica")
	assert.True(t, authenticated(replica, raw), "still cached on the other replica")
	e.Clock.Advance(service.CredentialCacheTTL)
	assert.False(t, authenticated(replica, raw), "refused everywhere within the cache's lifetime")

	// An account change (here the plan) is seen at once where it is made.
	raw = newPAT()
	require.True(t, authenticated(e.Svc, raw))
	require.NoError(t, e.Store.Billing().SetSubscription(context.Background(), p.ConglomerateID, "", "sub_1", models.PlanFounder, "active", nil))
	p2, err := e.Svc.Authenticate(context.Background(), raw)
	require.NoError(t, err)
	assert.Equal(t, models.PlanFounder, p2.Account.Billing.Plan, "the account's row is read again after the change")

	// Account deletion: every credential of the user stops at once here.
	require.True(t, authenticated(replica, raw))
	session := e.WebLogin(t, "ada@example.com", "ada")
	require.True(t, authenticated(e.Svc, session))
	require.NoError(t, e.Svc.DeleteAccount(ada))
	assert.False(t, authenticated(e.Svc, raw), "the token stops at once")
	assert.False(t, authenticated(e.Svc, session), "the web session too")
	e.Clock.Advance(service.CredentialCacheTTL)
	assert.False(t, authenticated(replica, raw), "and on the other replica within the cache's lifetime")
}
