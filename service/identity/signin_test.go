package identity_test

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
	"holdco/service/identity"
	"holdco/service/servicetest"
	"holdco/service/usecases"
)

func TestWebLoginCreatesAccountOnceAndSignsIn(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()

	start, err := e.Svc.BeginWebLogin(ctx, "/companies", "spring", "sign-up")
	require.NoError(t, err)
	u, _ := url.Parse(start.URL)
	assert.Equal(t, "http://holdco.test/auth/callback", u.Query().Get("redirect_uri"))
	assert.Equal(t, "sign-up", u.Query().Get("screen_hint"))
	state := u.Query().Get("state")

	res, err := e.Svc.CompleteWebLogin(ctx, e.IdP.Approve(state, "Ada@Example.com", "ada"), state, start.Binding)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(res.RedirectURL, "http://app.test/companies?login_code="), res.RedirectURL)
	assert.NotContains(t, res.RedirectURL, res.Cookie, "no session token in a URL")
	assert.NotContains(t, res.RedirectURL, "#", "nor in a fragment")

	ws, err := e.Svc.ExchangeLoginCode(ctx, loginCodeOf(t, res.RedirectURL), res.Cookie)
	require.NoError(t, err)
	me, err := e.Svc.Me(e.As(t, ws.Token))
	require.NoError(t, err)
	assert.Equal(t, service.CredentialWebSession, me.Principal.Credential)
	assert.Equal(t, "Ada@Example.com", me.User.Email)
	require.NotNil(t, me.Conglomerate)
	assert.WithinDuration(t, e.Clock.Now(), me.Conglomerate.TrialStartedAt, 2*time.Second, "the trial starts at sign-up")

	// Signing in again reuses the account.
	again := e.WebLogin(t, "ada@example.com", "ada")
	me2, err := e.Svc.Me(e.As(t, again))
	require.NoError(t, err)
	assert.Equal(t, me.User.ID, me2.User.ID)
	assert.Equal(t, me.Conglomerate.ID, me2.Conglomerate.ID)
}

func TestWebLoginRefusesBadStateAndOpenRedirects(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	_, err := e.Svc.BeginWebLogin(ctx, "https://evil.example/steal", "", "")
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))
	_, err = e.Svc.BeginWebLogin(ctx, "//evil.example/x", "", "")
	assert.True(t, models.IsCode(err, models.CodeInvalidArgument))

	start, err := e.Svc.BeginWebLogin(ctx, "http://holdco.test/auth/cli/device", "", "")
	require.NoError(t, err, "holdco's own pages are a valid target")
	state := servicetest.StateOf(t, start.URL)
	code := e.IdP.Approve(state, "ada@example.com", "ada")
	_, err = e.Svc.CompleteWebLogin(ctx, code, state+"x", start.Binding)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "tampered state")

	e.Clock.Advance(11 * time.Minute)
	_, err = e.Svc.CompleteWebLogin(ctx, code, state, start.Binding)
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
	e := servicetest.New(t)
	ctx := context.Background()
	login := func() (code, cookie string) {
		start, err := e.Svc.BeginWebLogin(ctx, "/companies?tab=all", "", "")
		require.NoError(t, err)
		res, err := e.Svc.CompleteWebLogin(ctx, e.IdP.Approve(start.State, "ada@example.com", "ada"), start.State, start.Binding)
		require.NoError(t, err)
		assert.Equal(t, "all", mustQuery(t, res.RedirectURL).Get("tab"), "the frontend's own query is kept")
		return loginCodeOf(t, res.RedirectURL), res.Cookie
	}
	code, cookie := login()
	// The code is bound to the browser that signed in (login CSRF): an
	// attacker's code opened in another browser, which has no SSO cookie
	// or another one, signs nobody in, and stays its own browser's.
	_, other := login()
	for _, wrong := range []string{"", other, "holdco_page_guessed"} {
		_, err := e.Svc.ExchangeLoginCode(ctx, code, wrong)
		assert.True(t, models.IsCode(err, models.CodeBadRequest), "cookie %q", wrong)
	}
	ws, err := e.Svc.ExchangeLoginCode(ctx, code, cookie)
	require.NoError(t, err)
	assert.Equal(t, e.Clock.Now().Add(identity.WebSessionTTL), ws.ExpiresAt)
	me, err := e.Svc.Me(e.As(t, ws.Token))
	require.NoError(t, err)
	assert.Equal(t, "ada@example.com", me.User.Email)

	_, err = e.Svc.ExchangeLoginCode(ctx, code, cookie)
	assert.True(t, models.IsCode(err, models.CodeBadRequest), "single use")
	_, err = e.Svc.ExchangeLoginCode(ctx, "guessed", cookie)
	assert.True(t, models.IsCode(err, models.CodeBadRequest))

	late, lateCookie := login()
	e.Clock.Advance(identity.LoginCodeTTL + time.Second)
	_, err = e.Svc.ExchangeLoginCode(ctx, late, lateCookie)
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
	cfg := servicetest.Config
	cfg.SitesURL = "http://sites.test"
	e := servicetest.New(t)
	all, err := usecases.New(ctx, cfg, e.Store, e.IdP, slog.New(slog.DiscardHandler), usecases.Options{Clock: e.Clock.Now})
	require.NoError(t, err)
	svc := all.Identity
	for _, bad := range []string{"/sites/attacker/", "/sites", "http://holdco.test/sites/attacker/", "http://app.test/sites/attacker/x.html",
		"http://sites.test/attacker/", "http://sites.test:80/attacker/", "https://evil.example/", "//evil.example/", "http://holdco.test@evil.example/",
		// What a browser opens as /sites/…: dot segments, '\' as '/'.
		"/./sites/attacker/", "/x/../sites/attacker/", "/%2e/sites/attacker/", "/.\\sites/attacker/", "http://holdco.test/a/../sites/x"} {
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
	all, err = usecases.New(ctx, cfg, e.Store, e.IdP, slog.New(slog.DiscardHandler), usecases.Options{Clock: e.Clock.Now})
	require.NoError(t, err)
	svc = all.Identity
	for _, bad := range []string{"", "/companies", "http://app.test/x"} {
		_, err := svc.BeginWebLogin(ctx, bad, "", "")
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%q", bad)
	}
}

func TestLogoutRevokesEverySessionOfTheUser(t *testing.T) {
	e := servicetest.New(t)
	e.IdP.EndSession = "https://idp.test/logout"
	first := e.WebLogin(t, "ada@example.com", "ada")
	second := e.WebLogin(t, "ada@example.com", "ada")
	bob := e.WebLogin(t, "bob@example.com", "bob")
	// Each is signed in at the authorization server too (its SSO cookie,
	// which approves assistants without asking again).
	asSession := func(token string) string {
		me, err := e.Svc.Me(e.As(t, token))
		require.NoError(t, err)
		raw, hash := service.NewCredential("hco_as_v1_")
		require.NoError(t, e.Store.OAuth().CreateOAuthSession(context.Background(), &models.OAuthSession{TokenHash: hash, UserID: me.User.ID,
			CreatedAt: e.Clock.Now(), ExpiresAt: e.Clock.Now().Add(time.Hour)}))
		_, err = e.Svc.OAuth.SessionFromCookie(context.Background(), raw)
		require.NoError(t, err)
		return raw
	}
	adaAS, bobAS := asSession(first), asSession(bob)

	to := e.Svc.Logout(context.Background(), first)
	assert.Equal(t, "https://idp.test/logout?post_logout_redirect_uri="+url.QueryEscape("http://app.test/login"), to)
	for _, tok := range []string{first, second} {
		_, err := e.Svc.Authenticate(context.Background(), tok)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
	}
	_, err := e.Svc.OAuth.SessionFromCookie(context.Background(), adaAS)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "the authorization server's sign-in ends too: %v", err)
	_, err = e.Svc.Authenticate(context.Background(), bob)
	assert.NoError(t, err, "other users keep their sessions")
	_, err = e.Svc.OAuth.SessionFromCookie(context.Background(), bobAS)
	assert.NoError(t, err, "and their authorization server sign-in")
	assert.Equal(t, "http://app.test/login", e.Svc.Logout(context.Background(), "garbage"), "a bad token still lands on login")
}

func TestDeletedMailboxCannotSignUpAgain(t *testing.T) {
	e := servicetest.New(t)
	tok := e.WebLogin(t, "a.d.a+work@gmail.com", "ada-1")
	key, err := e.Svc.CreatePersonalToken(e.As(t, tok), "ci", nil)
	require.NoError(t, err)
	require.NoError(t, e.Svc.DeleteAccount(e.As(t, tok)))

	for _, cred := range []string{tok, key.Raw} {
		_, err := e.Svc.Authenticate(context.Background(), cred)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "credentials die with the account")
	}
	ctx := context.Background()
	start, err := e.Svc.BeginWebLogin(ctx, "", "", "")
	require.NoError(t, err)
	// Another identity with the same normalized mailbox.
	_, err = e.Svc.CompleteWebLogin(ctx, e.IdP.Approve(start.State, "ADA@googlemail.com", "ada-2"), start.State, start.Binding)
	require.Error(t, err)
	assert.Equal(t, identity.ReasonAccountDeleted, identity.RefusalReason(err))
}

func TestAuthenticateRefusesWrongCredentials(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	for _, bad := range []string{"", "nonsense", "svc_u_v1_unknown", "svc_c_v1_unknown", "svc_a_v1_unknown",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig"} {
		_, err := e.Svc.Authenticate(ctx, bad)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "%q", bad)
	}
	tok := e.WebLogin(t, "ada@example.com", "ada")
	e.Clock.Advance(identity.WebSessionTTL + time.Second)
	_, err := e.Svc.Authenticate(ctx, tok)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "expired web session")
}

// TestWebLoginIsBoundToTheBrowserThatStartedIt: login CSRF (RFC 9700
// §4.7.1). Whoever opens someone else's callback (their code and state)
// without that sign-in's binding cookie is not signed in, and the code is
// not spent: the browser that started the sign-in still finishes it.
func TestWebLoginIsBoundToTheBrowserThatStartedIt(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	attacker, err := e.Svc.BeginWebLogin(ctx, "/companies", "", "")
	require.NoError(t, err)
	victim, err := e.Svc.BeginWebLogin(ctx, "/companies", "", "")
	require.NoError(t, err)
	assert.NotEqual(t, attacker.Binding, victim.Binding)
	assert.NotEqual(t, identity.SignInCookieName(attacker.State, false), identity.SignInCookieName(victim.State, false), "one cookie per sign-in")
	assert.NotContains(t, attacker.URL, attacker.Binding, "the binding never travels in a URL")
	code := e.IdP.Approve(attacker.State, "mallory@example.com", "mallory")

	for name, binding := range map[string]string{"no cookie": "", "another sign-in's cookie": victim.Binding, "a guess": "x"} {
		_, err := e.Svc.CompleteWebLogin(ctx, code, attacker.State, binding)
		require.Error(t, err, name)
		assert.True(t, models.IsCode(err, models.CodeBadRequest), name)
		assert.Equal(t, identity.ReasonOtherBrowser, identity.RefusalReason(err), name)
	}
	res, err := e.Svc.CompleteWebLogin(ctx, code, attacker.State, attacker.Binding)
	require.NoError(t, err, "the code was not spent by the refused callbacks")
	assert.NotEmpty(t, res.Cookie)
}

// TestAuthServerLoginIsBoundToTheBrowser: the authorization server's
// sign-in (its /oidc/callback) has the same binding.
func TestAuthServerLoginIsBoundToTheBrowser(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	const cb = "http://auth.test/oidc/callback"
	start, err := e.Svc.BeginAuthServerLogin(ctx, cb, "/oidc/authorize?x=1", false)
	require.NoError(t, err)
	code := e.IdP.Approve(start.State, "mallory@example.com", "mallory")
	_, _, err = e.Svc.CompleteAuthServerLogin(ctx, cb, code, start.State, "")
	assert.Equal(t, identity.ReasonOtherBrowser, identity.RefusalReason(err))
	user, back, err := e.Svc.CompleteAuthServerLogin(ctx, cb, code, start.State, start.Binding)
	require.NoError(t, err)
	assert.Equal(t, "mallory@example.com", user.Email)
	assert.Equal(t, "/oidc/authorize?x=1", back)
}

// TestLoginCodeOnlyWhereAPageExchangesIt: a sign-in that lands on one of
// holdco's own pages that use the SSO cookie (device approval, an action
// page) gets no login_code in its address; the frontend and holdco's landing page get one.
func TestLoginCodeOnlyWhereAPageExchangesIt(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	land := func(target string) string {
		start, err := e.Svc.BeginWebLogin(ctx, target, "", "")
		require.NoError(t, err)
		res, err := e.Svc.CompleteWebLogin(ctx, e.IdP.Approve(start.State, "ada@example.com", "ada"), start.State, start.Binding)
		require.NoError(t, err)
		assert.NotEmpty(t, res.Cookie, "the SSO cookie's session")
		return res.RedirectURL
	}
	for _, target := range []string{"http://holdco.test/auth/cli/device?user_code=BCDF-GHJK", "http://holdco.test/dashboard?action=buy_credits&conglomerate_id=x"} {
		to := land(target)
		assert.Equal(t, target, to)
		assert.Empty(t, mustQuery(t, to).Get("login_code"), target)
	}
	for _, target := range []string{"/companies", "http://holdco.test/", "http://holdco.test/login", "http://holdco.test/dashboard"} {
		assert.NotEmpty(t, mustQuery(t, land(target)).Get("login_code"), target)
	}
}

// TestSSOCookieIsAPageSessionNotABearer: the cookie of holdco's own pages
// is an opaque session id that REST refuses as a bearer (a cookie that
// reaches another listener of the host is no API credential), a bearer is
// no page session, and logout or account deletion ends the cookie on every
// replica at once.
func TestSSOCookieIsAPageSessionNotABearer(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	signIn := func() (cookie, bearer string) {
		start, err := e.Svc.BeginWebLogin(ctx, "/companies", "", "")
		require.NoError(t, err)
		state := start.State
		res, err := e.Svc.CompleteWebLogin(ctx, e.IdP.Approve(state, "ada@example.com", "ada"), state, start.Binding)
		require.NoError(t, err)
		ws, err := e.Svc.ExchangeLoginCode(ctx, loginCodeOf(t, res.RedirectURL), res.Cookie)
		require.NoError(t, err)
		return res.Cookie, ws.Token
	}
	cookie, bearer := signIn()
	require.NotEmpty(t, cookie)

	_, err := e.Svc.Authenticate(ctx, cookie)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "the SSO cookie is no REST bearer: %v", err)
	_, err = e.Svc.SessionFromCookie(ctx, bearer)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "a REST bearer is no page session: %v", err)

	other := e.Replica(t)
	for _, svc := range []*identity.Service{e.Svc.IdentityUseCases, other.IdentityUseCases} {
		p, err := svc.SessionFromCookie(ctx, cookie)
		require.NoError(t, err)
		me, err := svc.Me(service.WithPrincipal(ctx, p))
		require.NoError(t, err)
		assert.Equal(t, "ada@example.com", me.User.Email)
	}

	// Logout (with the frontend's bearer) ends the cookie on every replica.
	e.Svc.Logout(ctx, bearer)
	for _, svc := range []*identity.Service{e.Svc.IdentityUseCases, other.IdentityUseCases} {
		_, err = svc.SessionFromCookie(ctx, cookie)
		assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "ended at logout: %v", err)
	}

	// So does account deletion.
	cookie, bearer = signIn()
	_, err = other.SessionFromCookie(ctx, cookie)
	require.NoError(t, err)
	require.NoError(t, e.Svc.DeleteAccount(e.As(t, bearer)))
	_, err = other.SessionFromCookie(ctx, cookie)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated), "ended with the account: %v", err)

	_, err = e.Svc.SessionFromCookie(ctx, "holdco_page_guessed")
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
}

func TestSSOCookieExpires(t *testing.T) {
	e := servicetest.New(t)
	ctx := context.Background()
	start, err := e.Svc.BeginWebLogin(ctx, "", "", "")
	require.NoError(t, err)
	state := start.State
	res, err := e.Svc.CompleteWebLogin(ctx, e.IdP.Approve(state, "ada@example.com", "ada"), state, start.Binding)
	require.NoError(t, err)
	_, err = e.Svc.SessionFromCookie(ctx, res.Cookie)
	require.NoError(t, err)
	e.Clock.Advance(identity.WebSessionTTL + time.Second)
	_, err = e.Svc.SessionFromCookie(ctx, res.Cookie)
	assert.True(t, models.IsCode(err, models.CodeUnauthenticated))
}
