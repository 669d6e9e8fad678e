package service_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"holdco/service"
	"holdco/testenv"
)

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
	idp   *testenv.IdP
	clock *clock
}

func newEnv(t testing.TB) *env {
	t.Helper()
	st := testenv.NewStore(t)
	idp := testenv.NewIdP()
	clk := &clock{now: time.Now().UTC().Truncate(time.Second)}
	svc, err := service.New(context.Background(), service.Config{PublicURL: "http://holdco.test", FrontendURL: "http://app.test"},
		st, idp, slog.New(slog.NewTextHandler(io.Discard, nil)), service.Options{Clock: clk.Now})
	require.NoError(t, err)
	return &env{svc: svc, idp: idp, clock: clk}
}

func stateOf(t testing.TB, authURL string) string { return testenv.StateOf(t, authURL) }

// webLogin signs email in through the browser flow and returns the web JWT.
func (e *env) webLogin(t testing.TB, email, subject string) string {
	t.Helper()
	ctx := context.Background()
	authURL, err := e.svc.BeginWebLogin(ctx, "/dashboard", "", "")
	require.NoError(t, err)
	state := stateOf(t, authURL)
	res, err := e.svc.CompleteWebLogin(ctx, e.idp.Approve(state, email, subject), state)
	require.NoError(t, err)
	return res.Token
}

// as authenticates a bearer and returns a context acting as it.
func (e *env) as(t testing.TB, bearer string) context.Context {
	t.Helper()
	p, err := e.svc.Authenticate(context.Background(), bearer)
	require.NoError(t, err)
	return service.WithPrincipal(context.Background(), p)
}
