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
	"holdco/store"
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
	store *store.Store
}

func newEnv(t testing.TB) *env { return newEnvWith(t, service.Options{}) }

func newEnvWith(t testing.TB, opts service.Options) *env {
	t.Helper()
	e := &env{store: testenv.NewStore(t), idp: testenv.NewIdP(), clock: &clock{now: time.Now().UTC().Truncate(time.Second)}}
	e.svc = e.newService(t, opts)
	return e
}

var envConfig = service.Config{PublicURL: "http://holdco.test", FrontendURL: "http://app.test"}

func (e *env) newService(t testing.TB, opts service.Options) *service.Service {
	t.Helper()
	opts.Clock = e.clock.Now
	svc, err := service.New(context.Background(), envConfig, e.store, e.idp, slog.New(slog.NewTextHandler(io.Discard, nil)), opts)
	require.NoError(t, err)
	return svc
}

// replica is a second service on the same database (another process in a
// scaled-out deployment): its caches are its own.
func (e *env) replica(t testing.TB) *service.Service { return e.newService(t, service.Options{}) }

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
