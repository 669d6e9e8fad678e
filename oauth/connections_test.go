package oauth_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
)

// The account's connected assistants: listed, disconnected by their
// owner only; disconnecting revokes the tokens at once on this replica,
// within the cache lifetime on others, and asks for consent again.
func TestConnections(t *testing.T) {
	w := newWorld(t, nil, nil)
	self := w.registerClient("https://self.example/cb")
	c := w.browser()
	q := authParams(self, "https://self.example/cb")
	status, m := w.token(tokenForm(self, "https://self.example/cb", w.approveFlow(c, q, "fay@example.com")), false)
	require.Equal(t, http.StatusOK, status, m)
	access := m["access_token"].(string)

	fay, _ := w.env.User(t, "fay@example.com")
	gus, _ := w.env.User(t, "gus@example.com")
	conns, err := w.svc.ListConnections(fay)
	require.NoError(t, err)
	require.Len(t, conns, 1)
	assert.Equal(t, "Test Assistant", conns[0].ClientName)
	assert.Equal(t, self, conns[0].ClientID)
	assert.False(t, conns[0].Verified)
	assert.EqualValues(t, 1, conns[0].LiveTokens)
	others, err := w.svc.ListConnections(gus)
	require.NoError(t, err)
	assert.Empty(t, others)

	assert.True(t, models.IsCode(w.svc.Disconnect(gus, conns[0].ID), models.CodeForbidden))
	assert.True(t, models.IsCode(w.svc.Disconnect(fay, "5b0f3c1e-8a7d-4c2b-9e6f-1d2a3b4c5d6e"), models.CodeNotFound))
	assert.True(t, models.IsCode(w.svc.Disconnect(context.Background(), conns[0].ID), models.CodeUnauthenticated))

	// Another replica has the token cached.
	replica := w.env.Replica(t).OAuth
	_, err = replica.Introspect(context.Background(), access)
	require.NoError(t, err)

	require.NoError(t, w.svc.Disconnect(fay, conns[0].ID))
	_, err = w.svc.Introspect(context.Background(), access)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
	_, err = replica.Introspect(context.Background(), access)
	assert.NoError(t, err, "still cached on the other replica")
	w.env.Clock.Advance(service.CredentialCacheTTL + time.Second)
	_, err = replica.Introspect(context.Background(), access)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "a revocation reaches every replica within the cache's lifetime")

	conns, err = w.svc.ListConnections(fay)
	require.NoError(t, err)
	assert.Empty(t, conns)
	assert.Equal(t, http.StatusOK, w.authorize(c, q).StatusCode, "consent is asked again")
}

// A deleted account's tokens stop working: at once on the replica that
// deleted it, though the token was cached there, and within the credential
// cache's lifetime on another replica that had it cached.
func TestDeletedUserToken(t *testing.T) {
	w := newWorld(t, nil, nil)
	self := w.registerClient("https://self.example/cb")
	c := w.browser()
	_, m := w.token(tokenForm(self, "https://self.example/cb", w.approveFlow(c, authParams(self, "https://self.example/cb"), "hal@example.com")), false)
	access := m["access_token"].(string)
	p, err := w.svc.Introspect(context.Background(), access)
	require.NoError(t, err)
	require.NotNil(t, p.User, "the user's row comes with the token")
	require.NotNil(t, p.Account, "and the account's")
	replica := w.env.Replica(t).OAuth
	_, err = replica.Introspect(context.Background(), access)
	require.NoError(t, err)

	hal, _ := w.env.User(t, "hal@example.com")
	require.NoError(t, w.env.Svc.DeleteAccount(hal))
	_, err = w.svc.Introspect(context.Background(), access)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "refused at once where the account was deleted")

	w.env.Clock.Advance(service.CredentialCacheTTL + time.Second)
	_, err = replica.Introspect(context.Background(), access)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "refused on every replica within the cache's lifetime")
}
