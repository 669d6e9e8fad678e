package service_test

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/testenv"
)

func TestWebLoginCreatesAccountOnceAndSignsIn(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	authURL, err := e.svc.BeginWebLogin(ctx, "/companies", "spring", "sign-up")
	require.NoError(t, err)
	u, _ := url.Parse(authURL)
	assert.Equal(t, "http://holdco.test/auth/callback", u.Query().Get("redirect_uri"))
	assert.Equal(t, "sign-up", u.Query().Get("screen_hint"))
	state := u.Query().Get("state")

	res, err := e.svc.CompleteWebLogin(ctx, e.idp.Approve(state, "Ada@Example.com", "ada"), state)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.RedirectURL, "http://app.test/companies?login_code="), res.RedirectURL)
	assert.NotContains(t, res.RedirectURL, res.Token, "no session token in a URL")
	assert.NotContains(t, res.RedirectURL, "#", "nor in a fragment")

	me, err := e.svc.Me(e.as(t, res.Token))
	require.NoError(t, err)
	assert.Equal(t, service.CredentialWebSession, me.Principal.Credential)
	assert.Equal(t, "Ada@Example.com", me.User.Email)
	require.NotNil(t, me.Conglomerate)
	assert.WithinDuration(t, e.clock.Now(), me.Conglomerate.TrialStartedAt, 2*time.Second, "the trial starts at sign-up")

	// Signing in again reuses the account.
	again := e.webLogin(t, "ada@example.com", "ada")
	me2, err := e.svc.Me(e.as(t, again))
	require.NoError(t, err)
	assert.Equal(t, me.User.ID, me2.User.ID)
	assert.Equal(t, me.Conglomerate.ID, me2.Conglomerate.ID)
}

func TestWebLoginRefusesBadStateAndOpenRedirects(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.svc.BeginWebLogin(ctx, "https://evil.example/steal", "", "")
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.svc.BeginWebLogin(ctx, "//evil.example/x", "", "")
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))

	authURL, err := e.svc.BeginWebLogin(ctx, "http://holdco.test/auth/cli/device", "", "")
	require.NoError(t, err, "holdco's own pages are a valid target")
	state := stateOf(t, authURL)
	code := e.idp.Approve(state, "ada@example.com", "ada")
	_, err = e.svc.CompleteWebLogin(ctx, code, state+"x")
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "tampered state")

	e.clock.Advance(11 * time.Minute)
	_, err = e.svc.CompleteWebLogin(ctx, code, state)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "expired state")
}

func loginCodeOf(t *testing.T, redirect string) string {
	t.Helper()
	u, err := url.Parse(redirect)
	require.NoError(t, err)
	code := u.Query().Get("login_code")
	require.NotEmpty(t, code, redirect)
	return code
}

func TestLoginCodeIsExchangedOnceWithinAMinute(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	login := func() string {
		authURL, err := e.svc.BeginWebLogin(ctx, "/companies?tab=all", "", "")
		require.NoError(t, err)
		state := stateOf(t, authURL)
		res, err := e.svc.CompleteWebLogin(ctx, e.idp.Approve(state, "ada@example.com", "ada"), state)
		require.NoError(t, err)
		assert.Equal(t, "all", mustQuery(t, res.RedirectURL).Get("tab"), "the frontend's own query is kept")
		return loginCodeOf(t, res.RedirectURL)
	}
	code := login()
	ws, err := e.svc.ExchangeLoginCode(ctx, code)
	require.NoError(t, err)
	assert.Equal(t, e.clock.Now().Add(service.WebSessionTTL), ws.ExpiresAt)
	me, err := e.svc.Me(e.as(t, ws.Token))
	require.NoError(t, err)
	assert.Equal(t, "ada@example.com", me.User.Email)

	_, err = e.svc.ExchangeLoginCode(ctx, code)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "single use")
	_, err = e.svc.ExchangeLoginCode(ctx, "guessed")
	assert.True(t, models.IsCode(err, models.CodeBadRequest))

	late := login()
	e.clock.Advance(service.LoginCodeTTL + time.Second)
	_, err = e.svc.ExchangeLoginCode(ctx, late)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "expired")
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Query()
}

// TestSignInNeverLandsOnTenantSites: a redirect_url on a company site
// (the old /sites/ path on holdco's origin, or the sites origin) is
// refused, even when the sites origin was configured equal to the
// frontend's.
func TestSignInNeverLandsOnTenantSites(t *testing.T) {
	ctx := context.Background()
	cfg := envConfig
	cfg.SitesURL = "http://sites.test"
	e := &env{store: testenv.NewStore(t), idp: testenv.NewIdP(), clock: &clock{now: time.Now().UTC()}}
	svc, err := service.New(ctx, cfg, e.store, e.idp, slog.New(slog.DiscardHandler), service.Options{Clock: e.clock.Now})
	require.NoError(t, err)
	for _, bad := range []string{"/sites/attacker/", "/sites", "http://holdco.test/sites/attacker/", "http://app.test/sites/attacker/x.html",
		"http://sites.test/attacker/", "http://sites.test:80/attacker/", "https://evil.example/", "//evil.example/", "http://holdco.test@evil.example/"} {
		_, err := svc.BeginWebLogin(ctx, bad, "", "")
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%q: %v", bad, err)
		var de *models.Error
		require.ErrorAs(t, err, &de)
		assert.Equal(t, "redirect_url", de.Field, bad)
	}
	for _, good := range []string{"", "/companies", "http://app.test/x", "http://holdco.test/auth/cli/device?user_code=ABCD-EFGH"} {
		_, err := svc.BeginWebLogin(ctx, good, "", "")
		assert.NoError(t, err, good)
	}

	cfg.SitesURL = "http://app.test" // misconfigured onto the frontend's origin
	svc, err = service.New(ctx, cfg, e.store, e.idp, slog.New(slog.DiscardHandler), service.Options{Clock: e.clock.Now})
	require.NoError(t, err)
	for _, bad := range []string{"", "/companies", "http://app.test/x"} {
		_, err := svc.BeginWebLogin(ctx, bad, "", "")
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%q", bad)
	}
}

func TestLogoutRevokesEverySessionOfTheUser(t *testing.T) {
	e := newEnv(t)
	e.idp.EndSession = "https://idp.test/logout"
	first := e.webLogin(t, "ada@example.com", "ada")
	second := e.webLogin(t, "ada@example.com", "ada")
	bob := e.webLogin(t, "bob@example.com", "bob")

	to := e.svc.Logout(context.Background(), first)
	assert.Equal(t, "https://idp.test/logout?post_logout_redirect_uri="+url.QueryEscape("http://app.test/login"), to)
	for _, tok := range []string{first, second} {
		_, err := e.svc.Authenticate(context.Background(), tok)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
	}
	_, err := e.svc.Authenticate(context.Background(), bob)
	assert.NoError(t, err, "other users keep their sessions")
	assert.Equal(t, "http://app.test/login", e.svc.Logout(context.Background(), "garbage"), "a bad token still lands on login")
}

func TestDeletedMailboxCannotSignUpAgain(t *testing.T) {
	e := newEnv(t)
	tok := e.webLogin(t, "a.d.a+work@gmail.com", "ada-1")
	key, err := e.svc.CreatePersonalToken(e.as(t, tok), "ci", nil)
	require.NoError(t, err)
	require.NoError(t, e.svc.DeleteAccount(e.as(t, tok)))

	for _, cred := range []string{tok, key.Raw} {
		_, err := e.svc.Authenticate(context.Background(), cred)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "credentials die with the account")
	}
	ctx := context.Background()
	authURL, err := e.svc.BeginWebLogin(ctx, "", "", "")
	require.NoError(t, err)
	state := stateOf(t, authURL)
	// Another identity with the same normalized mailbox.
	_, err = e.svc.CompleteWebLogin(ctx, e.idp.Approve(state, "ADA@googlemail.com", "ada-2"), state)
	require.Error(t, err)
	assert.Equal(t, service.ReasonAccountDeleted, service.RefusalReason(err))
}

func TestAuthenticateRefusesWrongCredentials(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, bad := range []string{"", "nonsense", "svc_u_v1_unknown", "svc_c_v1_unknown", "svc_a_v1_unknown",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig"} {
		_, err := e.svc.Authenticate(ctx, bad)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "%q", bad)
	}
	tok := e.webLogin(t, "ada@example.com", "ada")
	e.clock.Advance(service.WebSessionTTL + time.Second)
	_, err := e.svc.Authenticate(ctx, tok)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "expired web session")
}
