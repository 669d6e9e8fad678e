package service_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"holdco/providers/oidcrp"
	"holdco/service"
	"holdco/testenv"
)

// fakeIdP is a hand-written identity provider: AuthURL records the PKCE
// challenge of each state; Exchange checks the verifier against it, as a
// real provider would, and answers the identity queued for the code.
type fakeIdP struct {
	mu         sync.Mutex
	challenges map[string]string // state → challenge
	codes      map[string]string // code → state
	identities map[string]oidcrp.Identity
	endSession string
}

func newFakeIdP() *fakeIdP {
	return &fakeIdP{challenges: map[string]string{}, codes: map[string]string{}, identities: map[string]oidcrp.Identity{}}
}

func (f *fakeIdP) Issuer() string { return "https://idp.test" }

func (f *fakeIdP) AuthURL(_ context.Context, redirectURI, state, challenge string, params map[string]string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.challenges[state] = challenge
	q := url.Values{"state": {state}, "redirect_uri": {redirectURI}, "code_challenge": {challenge}}
	for k, v := range params {
		q.Set(k, v)
	}
	return "https://idp.test/authorize?" + q.Encode(), nil
}

// approve is the user signing in at the provider: it returns the code the
// provider would send back with state.
func (f *fakeIdP) approve(state, email, subject string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	code := "code-" + subject + "-" + state[len(state)-8:]
	f.codes[code] = state
	f.identities[code] = oidcrp.Identity{Issuer: f.Issuer(), Subject: subject, Email: email, EmailVerified: true, Name: subject}
	return code
}

func (f *fakeIdP) Exchange(_ context.Context, _, code, verifier string) (oidcrp.Identity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	state, ok := f.codes[code]
	if !ok {
		return oidcrp.Identity{}, errors.New("invalid_grant")
	}
	delete(f.codes, code)
	if service.PKCEChallenge(verifier) != f.challenges[state] {
		return oidcrp.Identity{}, errors.New("invalid_grant: pkce")
	}
	return f.identities[code], nil
}

func (f *fakeIdP) EndSessionURL(_ context.Context, _, postLogoutRedirect string) string {
	if f.endSession == "" {
		return ""
	}
	return f.endSession + "?post_logout_redirect_uri=" + url.QueryEscape(postLogoutRedirect)
}

// clock is an adjustable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type env struct {
	svc   *service.Service
	idp   *fakeIdP
	clock *clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := testenv.NewStore(t)
	idp := newFakeIdP()
	clk := &clock{now: time.Now().UTC().Truncate(time.Second)}
	svc, err := service.New(context.Background(), service.Config{PublicURL: "http://holdco.test", FrontendURL: "http://app.test"},
		st, idp, slog.New(slog.NewTextHandler(io.Discard, nil)), service.Options{Clock: clk.Now})
	require.NoError(t, err)
	return &env{svc: svc, idp: idp, clock: clk}
}

func stateOf(t *testing.T, authURL string) string {
	t.Helper()
	u, err := url.Parse(authURL)
	require.NoError(t, err)
	return u.Query().Get("state")
}

// webLogin signs email in through the browser flow and returns the web JWT.
func (e *env) webLogin(t *testing.T, email, subject string) string {
	t.Helper()
	ctx := context.Background()
	authURL, err := e.svc.BeginWebLogin(ctx, "/dashboard", "", "")
	require.NoError(t, err)
	state := stateOf(t, authURL)
	res, err := e.svc.CompleteWebLogin(ctx, e.idp.approve(state, email, subject), state)
	require.NoError(t, err)
	return res.Token
}

// as authenticates a bearer and returns a context acting as it.
func (e *env) as(t *testing.T, bearer string) context.Context {
	t.Helper()
	p, err := e.svc.Authenticate(context.Background(), bearer)
	require.NoError(t, err)
	return service.WithPrincipal(context.Background(), p)
}
