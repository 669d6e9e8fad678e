package service_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
)

func TestDeviceFlow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	start, err := e.svc.StartDevice(ctx)
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`), start.UserCode)
	assert.Equal(t, "http://holdco.test/auth/cli/device", start.VerificationURI)
	assert.Equal(t, start.VerificationURI+"?user_code="+start.UserCode, start.VerificationURIComplete)
	assert.Equal(t, 5, start.Interval)

	poll := func() service.DevicePoll {
		t.Helper()
		p, err := e.svc.PollDevice(ctx, start.DeviceCode)
		require.NoError(t, err)
		return p
	}
	assert.Equal(t, service.DeviceAuthorizationPending, poll().Status)
	// Polling faster than the interval: slow_down, and the interval grows.
	e.clock.Advance(time.Second)
	p := poll()
	assert.Equal(t, service.DeviceSlowDown, p.Status)
	assert.Equal(t, 10, p.Interval)
	e.clock.Advance(6 * time.Second)
	assert.Equal(t, service.DeviceSlowDown, poll().Status, "the new interval (10 s) applies")
	e.clock.Advance(16 * time.Second)
	assert.Equal(t, service.DeviceAuthorizationPending, poll().Status)

	// The user approves in the browser (typed in lower case without dash).
	ada := e.webLogin(t, "ada@example.com", "ada")
	adaCtx := e.as(t, ada)
	p0, _ := service.PrincipalFrom(adaCtx)
	lower := []rune(start.UserCode)
	req, err := e.svc.LookupDevice(ctx, string(lower[:4])+" "+string(lower[5:]))
	require.NoError(t, err)
	assert.Equal(t, models.DevicePending, req.Status)
	require.NoError(t, e.svc.DecideDevice(adaCtx, p0, start.UserCode, true))
	assert.True(t, models.IsCode(e.svc.DecideDevice(adaCtx, p0, start.UserCode, false), models.CodeConflict), "decided once")

	e.clock.Advance(30 * time.Second)
	done := poll()
	require.Equal(t, service.DeviceComplete, done.Status)
	require.NotNil(t, done.Grant)
	assert.Equal(t, "ada@example.com", done.Grant.User.Email)
	me, err := e.svc.Me(e.as(t, done.Grant.Token))
	require.NoError(t, err)
	assert.Equal(t, service.CredentialSessionKey, me.Principal.Credential)

	e.clock.Advance(30 * time.Second)
	_, err = e.svc.PollDevice(ctx, start.DeviceCode)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "the device code is spent")
}

func TestDeviceDeniedAndExpired(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	denied, err := e.svc.StartDevice(ctx)
	require.NoError(t, err)
	expiring, err := e.svc.StartDevice(ctx)
	require.NoError(t, err)
	ada := e.as(t, e.webLogin(t, "ada@example.com", "ada"))
	p, _ := service.PrincipalFrom(ada)
	require.NoError(t, e.svc.DecideDevice(ada, p, denied.UserCode, false))
	got, err := e.svc.PollDevice(ctx, denied.DeviceCode)
	require.NoError(t, err)
	assert.Equal(t, service.DeviceAccessDenied, got.Status)
	// The denial is told once; the code is then spent.
	e.clock.Advance(time.Minute)
	_, err = e.svc.PollDevice(ctx, denied.DeviceCode)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "a denied code is spent after its first poll: %v", err)

	e.clock.Advance(11 * time.Minute)
	got, err = e.svc.PollDevice(ctx, expiring.DeviceCode)
	require.NoError(t, err)
	assert.Equal(t, service.DeviceExpiredToken, got.Status)
	assert.True(t, models.IsCode(e.svc.DecideDevice(ada, p, expiring.UserCode, true), models.CodeUnauthenticated) ||
		models.IsCode(e.svc.DecideDevice(ada, p, expiring.UserCode, true), models.CodeConflict), "an expired request cannot be approved")

	_, err = e.svc.PollDevice(ctx, "unknown")
	assert.True(t, models.IsCode(err, models.CodeBadRequest))
	csrf := e.svc.DeviceCSRFToken(p, expiring.UserCode)
	assert.True(t, e.svc.CheckDeviceCSRF(p, expiring.UserCode, csrf))
	assert.False(t, e.svc.CheckDeviceCSRF(p, denied.UserCode, csrf), "bound to the user code")
}
