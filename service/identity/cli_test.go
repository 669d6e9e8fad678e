package identity_test

import (
	"context"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
	"holdco/service/servicetest"
)

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

// cliLogin runs the loopback flow up to the one-time code.
func cliLogin(t *testing.T, e *servicetest.Env, email, subject string) (loopback *url.URL) {
	t.Helper()
	ctx := context.Background()
	st, err := e.Svc.BeginCLILogin(ctx, 5123, service.PKCEChallenge(verifier), "prod", "sign-in")
	require.NoError(t, err)
	state := servicetest.StateOf(t, st.AuthorizationURL)
	to, err := e.Svc.CompleteCLILogin(ctx, state, e.IdP.Approve(state, email, subject), "")
	require.NoError(t, err)
	u, err := url.Parse(to)
	require.NoError(t, err)
	return u
}

func TestCLILoopbackLogin(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	lb := cliLogin(t, e, "ada@example.com", "ada")
	assert.Equal(t, "127.0.0.1:5123", lb.Host)
	assert.Equal(t, "/callback", lb.Path)
	code := lb.Query().Get("code")
	require.NotEmpty(t, code)

	g, err := e.Svc.ExchangeCLICode(ctx, code, verifier)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(g.Token, "svc_u_v1_"))
	assert.Equal(t, "ada@example.com", g.User.Email)
	me, err := e.Svc.Me(e.As(t, g.Token))
	require.NoError(t, err)
	assert.Equal(t, service.CredentialSessionKey, me.Principal.Credential)
	assert.Equal(t, g.ConglomerateID, me.Conglomerate.ID)

	_, err = e.Svc.ExchangeCLICode(ctx, code, verifier)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "a replayed code is refused")

	// Logout revokes the key, and is idempotent.
	require.NoError(t, e.Svc.CLILogout(ctx, g.Token))
	require.NoError(t, e.Svc.CLILogout(ctx, g.Token))
	_, err = e.Svc.Authenticate(ctx, g.Token)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
	web := e.WebLogin(t, "ada@example.com", "ada")
	require.NoError(t, e.Svc.CLILogout(ctx, web), "a web JWT is left alone")
	_, err = e.Svc.Authenticate(ctx, web)
	assert.NoError(t, err)
}

func TestCLIWrongVerifierBurnsTheCode(t *testing.T) {
	e := servicetest.New(t)
	code := cliLogin(t, e, "ada@example.com", "ada").Query().Get("code")
	_, err := e.Svc.ExchangeCLICode(context.Background(), code, strings.Repeat("x", 43))
	assert.True(t, models.IsCode(err, models.CodeBadRequest))
	_, err = e.Svc.ExchangeCLICode(context.Background(), code, verifier)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "the right verifier after a wrong one is refused too")
}

func TestCLIFailuresGoToTheLoopbackWithError(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	st, err := e.Svc.BeginCLILogin(ctx, 40000, service.PKCEChallenge(verifier), "", "")
	require.NoError(t, err)
	state := servicetest.StateOf(t, st.AuthorizationURL)

	errorOf := func(to string) string {
		u, err := url.Parse(to)
		require.NoError(t, err)
		assert.Equal(t, "127.0.0.1:40000", u.Host)
		assert.Empty(t, u.Query().Get("code"))
		return u.Query().Get("error")
	}
	// Tampered: change the challenge inside the payload, keep the MAC.
	payload, mac, _ := strings.Cut(state, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	require.NoError(t, err)
	forged := strings.Replace(string(raw), service.PKCEChallenge(verifier), service.PKCEChallenge(strings.Repeat("z", 43)), 1)
	require.NotEqual(t, string(raw), forged)
	tampered := base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + mac
	to, err := e.Svc.CompleteCLILogin(ctx, tampered, "code", "")
	require.NoError(t, err)
	assert.Equal(t, "invalid_state", errorOf(to))

	to, err = e.Svc.CompleteCLILogin(ctx, state, "", "access_denied")
	require.NoError(t, err)
	assert.Equal(t, "access_denied", errorOf(to))

	to, err = e.Svc.CompleteCLILogin(ctx, state, "no-such-code", "")
	require.NoError(t, err)
	assert.Equal(t, "exchange_failed", errorOf(to))

	e.Clock.Advance(11 * time.Minute)
	to, err = e.Svc.CompleteCLILogin(ctx, state, e.IdP.Approve(state, "a@example.com", "a"), "")
	require.NoError(t, err)
	assert.Equal(t, "expired", errorOf(to))

	_, err = e.Svc.CompleteCLILogin(ctx, "garbage", "code", "")
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "no readable port: nowhere to redirect")
}

func TestCLIStartValidation(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	for _, port := range []int{0, 80, 1023, 65536} {
		_, err := e.Svc.BeginCLILogin(ctx, port, service.PKCEChallenge(verifier), "", "")
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "port %d", port)
	}
	_, err := e.Svc.BeginCLILogin(ctx, 5000, "short", "", "")
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	st, err := e.Svc.BeginCLILogin(ctx, 5000, service.PKCEChallenge(verifier), "", "bogus")
	require.NoError(t, err, "an unknown screen_hint is ignored")
	assert.NotContains(t, st.AuthorizationURL, "screen_hint")
}

func TestCodeExpires(t *testing.T) {
	e := servicetest.New(t)
	code := cliLogin(t, e, "ada@example.com", "ada").Query().Get("code")
	e.Clock.Advance(6 * time.Minute)
	_, err := e.Svc.ExchangeCLICode(context.Background(), code, verifier)
	assert.True(t, models.IsCode(err, models.CodeBadRequest))
}

// TestCLILogoutRefusesCompanyAndAdminCredentials: a company key and the
// admin credential are not sessions; logout refuses them (403) and they
// keep working.
func TestCLILogoutRefusesCompanyAndAdminCredentials(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	web := e.WebLogin(t, "ada@example.com", "ada")
	adaCtx := e.As(t, web)
	me, err := e.Svc.Me(adaCtx)
	require.NoError(t, err)
	co, err := e.Svc.CreateCompany(adaCtx, me.Conglomerate.ID, companies.CompanyInput{Name: "Ada Shop"})
	require.NoError(t, err)
	key, err := e.Svc.CompanyAPIKey(adaCtx, co.ID)
	require.NoError(t, err)
	adminToken, err := e.Svc.CreateAdminToken(ctx, "ops")
	require.NoError(t, err)

	for _, bearer := range []string{key.Key, adminToken} {
		err := e.Svc.CLILogout(ctx, bearer)
		assert.True(t, models.IsCode(err, models.CodeForbidden), "%v", err)
		_, err = e.Svc.Authenticate(ctx, bearer)
		assert.NoError(t, err, "still valid")
	}
	for _, wrong := range []string{service.PrefixCompanyKey + "nope", service.PrefixAdminToken + "nope", service.PrefixUserKey + "nope", "garbage"} {
		assert.True(t, models.IsCode(e.Svc.CLILogout(ctx, wrong), models.CodeUnauthenticated), wrong)
	}
}
