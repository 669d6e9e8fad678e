package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"holdco/activities"
	"holdco/mcp"
	"holdco/models"
	"holdco/providers/llm/scripted"
	"holdco/service"
	"holdco/service/companies"
	"holdco/service/connector"
	"holdco/service/founding"
	"holdco/service/servicetest"
	"holdco/service/turns"
	"holdco/service/usecases"
	"holdco/testenv"
	"holdco/workflows"
	"holdco/workflows/contract"
)

// fakeTokens is the authorization server's introspection: tokens it
// issued, by raw value.
type fakeTokens struct {
	mu     sync.Mutex
	tokens map[string]service.Principal
}

func (f *fakeTokens) Introspect(_ context.Context, raw string) (service.Principal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.tokens[raw]
	if !ok {
		return service.Principal{}, models.Errorf(models.CodeUnauthenticated, "Unknown token.")
	}
	return p, nil
}

func (f *fakeTokens) issue(raw string, p service.Principal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[raw] = p
}

// fakeFounding records what the connector asks founding for.
type fakeFounding struct {
	mu       sync.Mutex
	created  []founding.CreateBusinessInput
	started  []string
	create   func(ctx context.Context, in founding.CreateBusinessInput) (founding.CreateBusinessResult, error)
	firstRun founding.FirstPass
}

func (f *fakeFounding) CreateBusiness(ctx context.Context, in founding.CreateBusinessInput) (founding.CreateBusinessResult, error) {
	f.mu.Lock()
	f.created = append(f.created, in)
	f.mu.Unlock()
	return f.create(ctx, in)
}

func (f *fakeFounding) StartFirstPass(_ context.Context, companyID string) (founding.FirstPass, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, companyID)
	return f.firstRun, nil
}

// slowOnRequest is the scripted model, taking a minute per step when the
// conversation asks to be slow (so an interrupt meets a running turn).
type slowOnRequest struct{ fast, slow *scripted.Model }

func (m slowOnRequest) Complete(ctx context.Context, req models.ModelRequest, onText func(string)) (models.ModelResponse, error) {
	for _, msg := range req.Messages {
		for _, b := range msg.Content {
			if strings.Contains(b.Text, "take your time") {
				return m.slow.Complete(ctx, req, onText)
			}
		}
	}
	return m.fast.Complete(ctx, req, onText)
}

// world is a user with a ready business and credits, a Temporal test
// server with a worker running turns, and the connector on an httptest
// server with the fake introspector.
type world struct {
	e        *servicetest.Env
	tokens   *fakeTokens
	founding *fakeFounding
	url      string
	owner    context.Context
	cong     string
	company  models.Company
	token    string
}

func newWorld(t testing.TB) *world {
	t.Helper()
	tmp := testenv.NewTemporal(t, nil)
	e := servicetest.NewWith(t, usecases.Options{Temporal: tmp.Client, AgentRunEvery: time.Hour})
	w := &world{e: e, tokens: &fakeTokens{tokens: map[string]service.Principal{}}, founding: &fakeFounding{}}
	w.owner, w.cong = e.User(t, "ada@example.com")
	co := e.SeedCompany(t, w.owner, companies.CompanyInput{Name: "Ada Bakery", Handle: "ada-bakery", Idea: "Bread by subscription"})
	w.company = co
	w.setReady(t, co.ID)
	_, err := e.Svc.GrantCredits(context.Background(), e.Store.SystemConglomerateScope(w.cong), models.EntryAdminAdjustment, 100, "test credits")
	require.NoError(t, err)
	w.token = w.issue(t, w.owner, "oat_ada")

	acts := &activities.Turns{Store: e.Store, Engine: &turns.Engine{Store: e.Store, Billing: e.Svc.BillingUseCases, Tools: e.Svc.Tools,
		Model: slowOnRequest{fast: scripted.New(0), slow: scripted.New(time.Minute)}, Traces: e.Svc.TraceWriter, Scheduled: e.Svc.Turns,
		Logger: quiet(), TextEvery: 20 * time.Millisecond}, HeartbeatEvery: 100 * time.Millisecond}
	tmp.Server.NewWorkerWithOptions(contract.TaskQueue, func(r worker.Registry) { workflows.RegisterTurns(r, acts) },
		worker.Options{MaxHeartbeatThrottleInterval: workflows.MaxHeartbeatThrottle()})

	w.founding.create = func(ctx context.Context, in founding.CreateBusinessInput) (founding.CreateBusinessResult, error) {
		return founding.CreateBusinessResult{Business: w.company, WelcomeCreditsGranted: true,
			FirstPass: founding.FirstPass{Status: founding.FirstPassProvisioning, Detail: "Being set up."}}, nil
	}
	w.url = w.serve(t, e.Svc)
	return w
}

// serve starts the connector on svc (the environment's use cases, or a
// replica's) and returns its address.
func (w *world) serve(t testing.TB, svc servicetest.Services) string { return w.serveAs(t, svc, "") }

// serveAs is serve with a public URL of its own ("": the listener's).
func (w *world) serveAs(t testing.TB, svc servicetest.Services, publicURL string) string {
	return w.serveWith(t, svc, publicURL, mcp.New)
}

// serveWith is serveAs with the connector made by build.
func (w *world) serveWith(t testing.TB, svc servicetest.Services, publicURL string, build func(mcp.Deps) http.Handler) string {
	conn := connector.New(connector.Deps{Core: svc.Files.Core(), Companies: svc.CompaniesUseCases, Billing: svc.BillingUseCases,
		Turns: svc.Turns, Files: svc.Files, Sales: svc.SalesUseCases, Tools: svc.Tools, Founding: w.founding})
	// The handler is set before the server starts: a connection that
	// arrives at once (a client of an earlier test retrying on a reused
	// port) must not race with it.
	srv := httptest.NewUnstartedServer(nil)
	if publicURL == "" {
		publicURL = "http://" + srv.Listener.Addr().String()
	}
	srv.Config.Handler = build(mcp.Deps{Connector: conn, Tokens: w.tokens, PublicURL: publicURL, AuthorizationServer: "http://auth.test",
		Logger: quiet(), Version: "test", Health: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"status":"ok"}`) })})
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

// issue makes an access token of the authorization server for the user
// acting in ctx.
func (w *world) issue(t testing.TB, ctx context.Context, raw string) string {
	p, ok := service.PrincipalFrom(ctx)
	require.True(t, ok)
	// As the authorization server's introspection resolves one: with the
	// user's and the account's rows.
	w.tokens.issue(raw, service.Principal{Credential: service.CredentialOAuthAccess, CredentialID: "tok-" + raw, UserID: p.UserID,
		ConglomerateID: p.ConglomerateID, ClientID: "client-1", User: p.User, Account: p.Account})
	return raw
}

func (w *world) setReady(t testing.TB, companyID string) {
	ctx := context.Background()
	scope, err := w.e.Store.SystemCompanyScope(ctx, companyID)
	require.NoError(t, err)
	for _, k := range models.ResourceKinds {
		require.NoError(t, w.e.Store.Companies().SaveResource(ctx, scope, models.CompanyResource{CompanyID: companyID, Kind: k, Status: models.ResourceReady, Ref: "ref"}))
	}
}

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a session of the go-sdk client (2026-07-28) with token.
func (w *world) connect(t *testing.T, token string) *sdk.ClientSession {
	t.Helper()
	return connectTo(t, w.url, token)
}

func connectTo(t *testing.T, url, token string) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "holdco-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func quiet() *slog.Logger {
	if testing.Verbose() {
		return slog.Default()
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// rpcCall is one raw JSON-RPC request as a 2026-07-28 client sends it.
type rpcCall struct {
	token   string
	method  string
	params  map[string]any
	tasks   bool              // declare the tasks extension
	headers map[string]string // overrides ("" deletes)
	noMeta  bool
}

// rpc posts c and answers the HTTP status, headers and decoded body.
func (w *world) rpc(t *testing.T, c rpcCall) (int, http.Header, map[string]any) {
	t.Helper()
	params := map[string]any{}
	for k, v := range c.params {
		params[k] = v
	}
	if !c.noMeta {
		caps := map[string]any{}
		if c.tasks {
			caps["extensions"] = map[string]any{mcp.TasksExtension: map[string]any{}}
		}
		params["_meta"] = map[string]any{sdk.MetaKeyProtocolVersion: mcp.ProtocolVersion, sdk.MetaKeyClientCapabilities: caps,
			sdk.MetaKeyClientInfo: map[string]any{"name": "raw-test", "version": "1"}}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": c.method, "params": params})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, w.url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion)
	req.Header.Set("Mcp-Method", c.method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, resp.Header, out
}

// rpcError is the JSON-RPC error of a response (nil when none).
func rpcError(body map[string]any) map[string]any {
	e, _ := body["error"].(map[string]any)
	return e
}

// rpcResult is the JSON-RPC result of a response.
func rpcResult(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r, ok := body["result"].(map[string]any)
	require.True(t, ok, "no result in %v", body)
	return r
}

type (
	foundingInput  = founding.CreateBusinessInput
	foundingResult = founding.CreateBusinessResult
)
