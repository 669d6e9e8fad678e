package identity_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/identity"
	"holdco/service/servicetest"
)

// TestExpiredSignInCodesAreDeleted: login codes, CLI loopback codes and
// device-flow grants are deleted once expired for CodeRetention, used or
// not; live ones and those within the retention stay and keep their
// answers.
func TestExpiredSignInCodesAreDeleted(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	sw := &identity.CodeSweeper{Store: e.Store, Now: e.Clock.Now}
	loginCode := func() (code, cookie string) {
		start, err := e.Svc.BeginWebLogin(ctx, "/companies", "", "")
		require.NoError(t, err)
		res, err := e.Svc.CompleteWebLogin(ctx, e.IdP.Approve(start.State, "ada@example.com", "ada"), start.State, start.Binding)
		require.NoError(t, err)
		return loginCodeOf(t, res.RedirectURL), res.Cookie
	}
	cliCode := func() {
		st, err := e.Svc.BeginCLILogin(ctx, 5000, service.PKCEChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "", "")
		require.NoError(t, err)
		state := servicetest.StateOf(t, st.AuthorizationURL)
		to, err := e.Svc.CompleteCLILogin(ctx, state, e.IdP.Approve(state, "ada@example.com", "ada"), "")
		require.NoError(t, err)
		u, _ := url.Parse(to)
		require.NotEmpty(t, u.Query().Get("code"), to)
	}
	used, usedCookie := loginCode()
	_, err := e.Svc.ExchangeLoginCode(ctx, used, usedCookie)
	require.NoError(t, err)
	loginCode() // never exchanged
	cliCode()
	oldDevice, err := e.Svc.StartDevice(ctx, "192.0.2.9")
	require.NoError(t, err)

	n, err := sw.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing has expired yet")

	// Every one has expired (the device grant, the longest, after 10
	// minutes), but only just: kept, and a late poll still hears
	// expired_token.
	e.Clock.Advance(11 * time.Minute)
	n, err = sw.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "within the retention")
	p, err := e.Svc.PollDevice(ctx, oldDevice.DeviceCode)
	require.NoError(t, err)
	assert.Equal(t, identity.DeviceExpiredToken, p.Status)

	e.Clock.Advance(identity.CodeRetention)
	live, liveCookie := loginCode()
	liveDevice, err := e.Svc.StartDevice(ctx, "192.0.2.9")
	require.NoError(t, err)
	n, err = sw.Sweep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(4), n, "two login codes, one CLI code, one device grant")
	_, err = e.Svc.PollDevice(ctx, oldDevice.DeviceCode)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "the old grant is gone")
	p, err = e.Svc.PollDevice(ctx, liveDevice.DeviceCode)
	require.NoError(t, err)
	assert.Equal(t, identity.DeviceAuthorizationPending, p.Status, "a live grant stays")
	_, err = e.Svc.ExchangeLoginCode(ctx, live, liveCookie)
	assert.NoError(t, err, "a live login code stays")
	n, err = sw.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n)
}
