package identity_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/identity"
	"holdco/service/servicetest"
)

func TestDeviceFlow(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	start, err := e.Svc.StartDevice(ctx, "192.0.2.1")
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`), start.UserCode)
	assert.Equal(t, "http://holdco.test/auth/cli/device", start.VerificationURI)
	assert.Equal(t, start.VerificationURI+"?user_code="+start.UserCode, start.VerificationURIComplete)
	assert.Equal(t, 5, start.Interval)

	poll := func() identity.DevicePoll {
		t.Helper()
		p, err := e.Svc.PollDevice(ctx, start.DeviceCode)
		require.NoError(t, err)
		return p
	}
	assert.Equal(t, identity.DeviceAuthorizationPending, poll().Status)
	// Polling faster than the interval: slow_down, and the interval grows.
	e.Clock.Advance(time.Second)
	p := poll()
	assert.Equal(t, identity.DeviceSlowDown, p.Status)
	assert.Equal(t, 10, p.Interval)
	e.Clock.Advance(6 * time.Second)
	assert.Equal(t, identity.DeviceSlowDown, poll().Status, "the new interval (10 s) applies")
	e.Clock.Advance(16 * time.Second)
	assert.Equal(t, identity.DeviceAuthorizationPending, poll().Status)

	// The user approves in the browser (typed in lower case without dash).
	ada := e.WebLogin(t, "ada@example.com", "ada")
	adaCtx := e.As(t, ada)
	p0, _ := service.PrincipalFrom(adaCtx)
	lower := []rune(start.UserCode)
	req, err := e.Svc.LookupDevice(ctx, string(lower[:4])+" "+string(lower[5:]))
	require.NoError(t, err)
	assert.Equal(t, models.DevicePending, req.Status)
	require.NoError(t, e.Svc.DecideDevice(adaCtx, p0, start.UserCode, true))
	assert.True(t, models.IsCode(e.Svc.DecideDevice(adaCtx, p0, start.UserCode, false), models.CodeConflict), "decided once")

	e.Clock.Advance(30 * time.Second)
	done := poll()
	require.Equal(t, identity.DeviceComplete, done.Status)
	require.NotNil(t, done.Grant)
	assert.Equal(t, "ada@example.com", done.Grant.User.Email)
	me, err := e.Svc.Me(e.As(t, done.Grant.Token))
	require.NoError(t, err)
	assert.Equal(t, service.CredentialSessionKey, me.Principal.Credential)

	e.Clock.Advance(30 * time.Second)
	_, err = e.Svc.PollDevice(ctx, start.DeviceCode)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "the device code is spent")
}

func TestDeviceDeniedAndExpired(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	denied, err := e.Svc.StartDevice(ctx, "192.0.2.1")
	require.NoError(t, err)
	expiring, err := e.Svc.StartDevice(ctx, "192.0.2.1")
	require.NoError(t, err)
	ada := e.As(t, e.WebLogin(t, "ada@example.com", "ada"))
	p, _ := service.PrincipalFrom(ada)
	require.NoError(t, e.Svc.DecideDevice(ada, p, denied.UserCode, false))
	got, err := e.Svc.PollDevice(ctx, denied.DeviceCode)
	require.NoError(t, err)
	assert.Equal(t, identity.DeviceAccessDenied, got.Status)
	// The denial is told once; the code is then spent.
	e.Clock.Advance(time.Minute)
	_, err = e.Svc.PollDevice(ctx, denied.DeviceCode)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "a denied code is spent after its first poll: %v", err)

	e.Clock.Advance(11 * time.Minute)
	got, err = e.Svc.PollDevice(ctx, expiring.DeviceCode)
	require.NoError(t, err)
	assert.Equal(t, identity.DeviceExpiredToken, got.Status)
	assert.True(t, models.IsCode(e.Svc.DecideDevice(ada, p, expiring.UserCode, true), models.CodeUnauthenticated) ||
		models.IsCode(e.Svc.DecideDevice(ada, p, expiring.UserCode, true), models.CodeConflict), "an expired request cannot be approved")

	_, err = e.Svc.PollDevice(ctx, "unknown")
	assert.True(t, models.IsCode(err, models.CodeBadRequest))
	csrf := e.Svc.DeviceCSRFToken(p, expiring.UserCode)
	assert.True(t, e.Svc.CheckDeviceCSRF(p, expiring.UserCode, csrf))
	assert.False(t, e.Svc.CheckDeviceCSRF(p, denied.UserCode, csrf), "bound to the user code")
}

// TestDeviceStartIsRateLimitedPerAddressOnEveryReplica: starts are counted
// in the database per client address, so two replicas together allow
// DeviceStartsPerMinute a minute; more are rate_limited with a retry hint,
// another address is unaffected, and the next minute allows starts again.
func TestDeviceStartIsRateLimitedPerAddressOnEveryReplica(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	other := e.Replica(t)
	for i := range identity.DeviceStartsPerMinute {
		svc := e.Svc.IdentityUseCases
		if i%2 == 1 {
			svc = other.IdentityUseCases
		}
		_, err := svc.StartDevice(ctx, "198.51.100.7")
		require.NoError(t, err, "start %d", i+1)
	}
	for _, svc := range []*identity.Service{e.Svc.IdentityUseCases, other.IdentityUseCases} {
		_, err := svc.StartDevice(ctx, "198.51.100.7")
		require.True(t, models.IsCode(err, models.CodeRateLimited), "%v", err)
		var de *models.Error
		require.ErrorAs(t, err, &de)
		secs, _ := de.Extra["retry_after_seconds"].(int64)
		assert.Positive(t, secs)
		assert.LessOrEqual(t, secs, int64(60))
	}
	_, err := e.Svc.StartDevice(ctx, "198.51.100.8")
	require.NoError(t, err, "another address has its own count")

	e.Clock.Advance(time.Minute)
	_, err = other.StartDevice(ctx, "198.51.100.7")
	require.NoError(t, err, "a new minute")
}
