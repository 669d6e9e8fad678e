package devoidc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/providers/devoidc"
	"holdco/providers/oidcrp"
	"holdco/service"
	"holdco/store"
	"holdco/testenv"
)

const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

type fixture struct {
	srv      *httptest.Server
	rp       *oidcrp.Client
	callback string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	issuer := srv.URL + "/dev-idp"
	callback := srv.URL + "/cb"
	p, err := devoidc.New(context.Background(), devoidc.Options{
		Issuer:  issuer,
		Clients: []devoidc.Client{{ID: "holdco", Secret: "s3cret", RedirectURIs: []string{callback}}},
		Users:   devoidc.NewMemoryUsers(),
	})
	require.NoError(t, err)
	mux.Handle(p.Prefix()+"/", p.Handler())
	rp := oidcrp.New(oidcrp.Options{Issuer: issuer, ClientID: "holdco", ClientSecret: "s3cret", RedirectURIs: []string{callback}})
	return &fixture{srv: srv, rp: rp, callback: callback}
}

func (f *fixture) signIn(t *testing.T, state, email, password string) (*url.URL, error) {
	t.Helper()
	authURL, err := f.rp.AuthURL(context.Background(), f.callback, state, service.PKCEChallenge(verifier), map[string]string{"screen_hint": "sign-up"})
	require.NoError(t, err)
	return devoidc.SignIn(context.Background(), authURL, email, password)
}

func TestSignUpThenSignIn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	back, err := f.signIn(t, "state-1", "Ada@Example.com", "correct horse")
	require.NoError(t, err)
	assert.Equal(t, f.callback, back.Scheme+"://"+back.Host+back.Path)
	assert.Equal(t, "state-1", back.Query().Get("state"))
	code := back.Query().Get("code")
	require.NotEmpty(t, code)

	id, err := f.rp.Exchange(ctx, f.callback, code, verifier)
	require.NoError(t, err)
	assert.Equal(t, f.srv.URL+"/dev-idp", id.Issuer)
	assert.Equal(t, "ada@example.com", id.Email)
	assert.True(t, id.EmailVerified)
	assert.Equal(t, "ada", id.Name)
	assert.NotEmpty(t, id.Subject)

	_, err = f.rp.Exchange(ctx, f.callback, code, verifier)
	assert.Error(t, err, "a code works once")

	back, err = f.signIn(t, "state-2", "ada@example.com", "correct horse")
	require.NoError(t, err)
	again, err := f.rp.Exchange(ctx, f.callback, back.Query().Get("code"), verifier)
	require.NoError(t, err)
	assert.Equal(t, id.Subject, again.Subject, "the same user signs in again")
}

func TestWrongPasswordAndWrongVerifier(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.signIn(t, "s", "ada@example.com", "correct horse")
	require.NoError(t, err)
	_, err = f.signIn(t, "s", "ada@example.com", "wrong password")
	require.ErrorContains(t, err, "401", "the form is shown again and no code is issued")
	_, err = f.signIn(t, "s", "bob@example.com", "short")
	require.ErrorContains(t, err, "8 characters")

	back, err := f.signIn(t, "s", "ada@example.com", "correct horse")
	require.NoError(t, err)
	_, err = f.rp.Exchange(ctx, f.callback, back.Query().Get("code"), strings.Repeat("x", 43))
	assert.Error(t, err, "PKCE: a wrong verifier is refused")
}

func TestUnknownClientAndDiscovery(t *testing.T) {
	f := newFixture(t)
	other := oidcrp.New(oidcrp.Options{Issuer: f.srv.URL + "/dev-idp", ClientID: "intruder", ClientSecret: "x", RedirectURIs: []string{f.callback}})
	authURL, err := other.AuthURL(context.Background(), f.callback, "s", service.PKCEChallenge(verifier), nil)
	require.NoError(t, err)
	_, err = devoidc.SignIn(context.Background(), authURL, "ada@example.com", "correct horse")
	assert.Error(t, err, "an unknown client never reaches the login form")

	resp, err := http.Get(f.srv.URL + "/dev-idp/.well-known/openid-configuration")
	require.NoError(t, err)
	defer resp.Body.Close()
	var doc map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	assert.Equal(t, f.srv.URL+"/dev-idp", doc["issuer"])
	assert.True(t, strings.HasPrefix(doc["authorization_endpoint"].(string), f.srv.URL+"/dev-idp/"))
	assert.Contains(t, doc["code_challenge_methods_supported"], "S256")
	assert.NotEmpty(t, doc["end_session_endpoint"])
}

func newFixtureWith(t *testing.T, users devoidc.Users) *fixture {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	issuer := srv.URL + "/dev-idp"
	callback := srv.URL + "/cb"
	p, err := devoidc.New(context.Background(), devoidc.Options{
		Issuer:  issuer,
		Clients: []devoidc.Client{{ID: "holdco", Secret: "s3cret", RedirectURIs: []string{callback}}},
		Users:   users,
		Logger:  slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	mux.Handle(p.Prefix()+"/", p.Handler())
	rp := oidcrp.New(oidcrp.Options{Issuer: issuer, ClientID: "holdco", ClientSecret: "s3cret", RedirectURIs: []string{callback}})
	return &fixture{srv: srv, rp: rp, callback: callback}
}

func (f *fixture) signInForm(t *testing.T, fields url.Values) (*url.URL, error) {
	t.Helper()
	authURL, err := f.rp.AuthURL(context.Background(), f.callback, "s", service.PKCEChallenge(verifier), nil)
	require.NoError(t, err)
	return devoidc.SignInForm(context.Background(), authURL, fields)
}

// TestSignInFormRefusesNULAndControlCharacters runs the form against the
// real store (SQLite, or Postgres with TEST_DATABASE_URL), where a NUL used
// to fail the insert and show the raw database error.
func TestSignInFormRefusesNULAndControlCharacters(t *testing.T) {
	users := devoidc.StoredUsers{Rows: testenv.NewStore(t).Identity()}
	f := newFixtureWith(t, users)
	for _, fields := range []url.Values{
		{"email": {"ada@example.com"}, "password": {"correct horse"}, "name": {"Ada\x00Lovelace"}},
		{"email": {"ada\x00@example.com"}, "password": {"correct horse"}},
		{"email": {"ada@example.com"}, "password": {"correct\x00horse"}},
		{"email": {"ada@example.com"}, "password": {"correct horse"}, "name": {"Ada\nLovelace"}},
		{"email": {"ada@example.com"}, "password": {"correct horse"}, "name": {"Ada\u0085Lovelace"}},
		{"email": {"ada@example.com"}, "password": {"correct horse"}, "name": {"\xff"}},
		{"email": {"ada@example.com"}, "password": {"correct horse"}, "name": {strings.Repeat("a", 201)}},
	} {
		_, err := f.signInForm(t, fields)
		require.Error(t, err, "%q", fields)
		assert.Contains(t, err.Error(), "(422)", "%q", fields)
		assert.NotContains(t, err.Error(), "SQL", "%q", fields)
		assert.NotContains(t, err.Error(), "0x00", "%q", fields)
		_, _, err = users.UserByEmail(context.Background(), "ada@example.com")
		require.ErrorIs(t, err, devoidc.ErrUserNotFound, "nothing stored for %q", fields)
	}
	_, err := f.signInForm(t, url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}, "name": {"Ada Lovelace"}})
	require.NoError(t, err)
	u, _, err := users.UserByEmail(context.Background(), "ada@example.com")
	require.NoError(t, err)
	assert.Equal(t, "Ada Lovelace", u.Name)
}

// failingUsers is a user store that is down.
type failingUsers struct{ devoidc.Users }

var errDatabaseDown = errors.New(`pq: password authentication failed for user "holdco_secret_role"`)

func (failingUsers) UserByEmail(context.Context, string) (devoidc.User, []byte, error) {
	return devoidc.User{}, nil, errDatabaseDown
}

func (failingUsers) CreateUser(context.Context, devoidc.User, []byte) (devoidc.User, error) {
	return devoidc.User{}, errDatabaseDown
}

// TestSignInStoreFailureShowsNoRawError: a database failure is a 500 page
// with a sentence, never the database's own message.
func TestSignInStoreFailureShowsNoRawError(t *testing.T) {
	f := newFixtureWith(t, failingUsers{devoidc.NewMemoryUsers()})
	_, err := f.signIn(t, "s", "ada@example.com", "correct horse")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(500)")
	assert.Contains(t, err.Error(), "Sign-in is unavailable")
	assert.NotContains(t, err.Error(), "holdco_secret_role")
}

// loginForm follows the provider's redirects from a fresh authorization
// request to its login form and returns the form's URL.
func (f *fixture) loginForm(t *testing.T) *url.URL {
	t.Helper()
	authURL, err := f.rp.AuthURL(context.Background(), f.callback, "st", service.PKCEChallenge(verifier), nil)
	require.NoError(t, err)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	next, err := url.Parse(authURL)
	require.NoError(t, err)
	for range 10 {
		resp, err := c.Get(next.String())
		require.NoError(t, err)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return next
		}
		loc, err := resp.Location()
		require.NoError(t, err)
		next = loc
	}
	t.Fatal("no login form")
	return nil
}

func postLogin(t *testing.T, form *url.URL, email, password string) *http.Response {
	t.Helper()
	v := url.Values{"authRequestID": {form.Query().Get("authRequestID")}, "email": {email}, "password": {password}}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(form.String(), v)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp
}

// TestWrongPasswordsAreRateLimited: sixty wrong passwords in a row for one
// email get WrongPasswordsPerEmail 401s, then 429 with Retry-After (even
// for the right password, until the window ends); counting is in the
// database, so a second provider on the same store (another replica)
// refuses too. One address's attempts are capped per minute whatever the
// email.
func TestWrongPasswordsAreRateLimited(t *testing.T) {
	st := testenv.NewStore(t)
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	newProvider := func() *fixture {
		mux := http.NewServeMux()
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		issuer, callback := srv.URL+"/dev-idp", srv.URL+"/cb"
		p, err := devoidc.New(context.Background(), devoidc.Options{
			Issuer: issuer, Clients: []devoidc.Client{{ID: "holdco", Secret: "s3cret", RedirectURIs: []string{callback}}},
			Users: devoidc.StoredUsers{Rows: st.Identity()}, Attempts: devoidc.StoredAttempts{Rows: storeAttempts{st}, Now: clock},
		})
		require.NoError(t, err)
		mux.Handle(p.Prefix()+"/", p.Handler())
		return &fixture{srv: srv, callback: callback,
			rp: oidcrp.New(oidcrp.Options{Issuer: issuer, ClientID: "holdco", ClientSecret: "s3cret", RedirectURIs: []string{callback}})}
	}
	f, replica := newProvider(), newProvider()
	_, err := f.signIn(t, "s", "ada@example.com", "correct horse")
	require.NoError(t, err)

	form := f.loginForm(t)
	statuses := map[int]int{}
	for range 60 {
		resp := postLogin(t, form, "ada@example.com", "wrong password")
		statuses[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests {
			secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			require.NoError(t, err)
			assert.Positive(t, secs)
			assert.LessOrEqual(t, secs, int(devoidc.WrongPasswordWindow.Seconds()))
		}
	}
	assert.Equal(t, map[int]int{http.StatusUnauthorized: devoidc.WrongPasswordsPerEmail, http.StatusTooManyRequests: 60 - devoidc.WrongPasswordsPerEmail}, statuses)
	assert.Equal(t, http.StatusTooManyRequests, postLogin(t, form, "ada@example.com", "correct horse").StatusCode, "locked until the window ends")
	assert.Equal(t, http.StatusTooManyRequests, postLogin(t, replica.loginForm(t), "ada@example.com", "correct horse").StatusCode, "on every replica")

	now = now.Add(devoidc.WrongPasswordWindow)
	_, err = replica.signIn(t, "s", "ada@example.com", "correct horse")
	require.NoError(t, err, "the next window lets the right password in")

	// Per address: at most AttemptsPerAddressPerMinute a minute, any email.
	now = now.Add(devoidc.WrongPasswordWindow)
	form = f.loginForm(t)
	limited := 0
	for i := range devoidc.AttemptsPerAddressPerMinute + 5 {
		if postLogin(t, form, fmt.Sprintf("user%d@example.com", i), "wrong").StatusCode == http.StatusTooManyRequests {
			limited++
		}
	}
	assert.Equal(t, 5, limited)
}

// storeAttempts is the app's adapter of holdco's attempt counters (the
// provider links no store), so the test counts where production does.
type storeAttempts struct{ st *store.Store }

func (r storeAttempts) Count(ctx context.Context, key string, at time.Time, w devoidc.Window) (time.Duration, bool, error) {
	wait, err := r.st.Identity().CountAttempt(ctx, key, at, store.AttemptWindow{Name: w.Name, Every: w.Every, Limit: w.Limit})
	if errors.Is(err, store.ErrRateLimited) {
		return wait, true, nil
	}
	return wait, false, err
}

func (r storeAttempts) Full(ctx context.Context, key string, at time.Time, w devoidc.Window) (time.Duration, bool, error) {
	return r.st.Identity().AttemptsFull(ctx, key, at, store.AttemptWindow{Name: w.Name, Every: w.Every, Limit: w.Limit})
}
