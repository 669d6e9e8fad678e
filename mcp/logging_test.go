package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/mcp"
	"holdco/service"
	"holdco/service/connector"
	"holdco/service/servicetest"
	"holdco/testenv"
)

// logLines are the JSON log lines written to b so far.
func logLines(t *testing.T, b *testenv.LogBuffer) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// slowTokens is the introspection of a database that answers only when
// the request's context ends (as a query does): "oat_log" is ada's token,
// anything else waits.
type slowTokens struct {
	p       service.Principal
	waiting chan struct{}
}

func (s *slowTokens) Introspect(ctx context.Context, raw string) (service.Principal, error) {
	if raw == "oat_log" {
		return s.p, nil
	}
	s.waiting <- struct{}{}
	<-ctx.Done()
	return service.Principal{}, fmt.Errorf("store: read token: %w", ctx.Err())
}

// loggedConnector serves the connector with a DEBUG logger into logs.
func loggedConnector(t *testing.T, logs *testenv.LogBuffer) (string, *slowTokens) {
	t.Helper()
	e := servicetest.New(t)
	owner, cong := e.User(t, "ada@example.com")
	p, ok := service.PrincipalFrom(owner)
	require.True(t, ok)
	tokens := &slowTokens{p: service.Principal{Credential: service.CredentialOAuthAccess, CredentialID: "tok-log", UserID: p.UserID,
		ConglomerateID: cong, ClientID: "client-1"}, waiting: make(chan struct{}, 1)}
	conn := connector.New(connector.Deps{Core: e.Svc.Files.Core(), Companies: e.Svc.CompaniesUseCases, Billing: e.Svc.BillingUseCases,
		Turns: e.Svc.Turns, Files: e.Svc.Files, Sales: e.Svc.SalesUseCases, Tools: e.Svc.Tools, Founding: &fakeFounding{}})
	srv := httptest.NewUnstartedServer(nil) // the handler is set before any connection comes
	srv.Config.Handler = mcp.New(mcp.Deps{Connector: conn, Tokens: tokens, PublicURL: "http://" + srv.Listener.Addr().String(), AuthorizationServer: "http://auth.test",
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Version: "test"})
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, tokens
}

// postRPC sends one 2026-07-28 JSON-RPC request with ctx.
func postRPC(ctx context.Context, url, token, method string, params map[string]any) (*http.Response, error) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{sdk.MetaKeyProtocolVersion: mcp.ProtocolVersion, sdk.MetaKeyClientCapabilities: map[string]any{},
		sdk.MetaKeyClientInfo: map[string]any{"name": "log-test", "version": "1"}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return http.DefaultClient.Do(req)
}

// TestConnectorLogsOneDebugLinePerRequest: a stateless request is one
// DEBUG line (not the SDK's three INFO lines about its throwaway session),
// and a client that hangs up mid-request is no ERROR.
func TestConnectorLogsOneDebugLinePerRequest(t *testing.T) {
	logs := &testenv.LogBuffer{}
	url, tokens := loggedConnector(t, logs)

	const requests = 3
	for range requests {
		resp, err := postRPC(context.Background(), url, "oat_log", "tools/list", nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		resp.Body.Close()
	}
	require.Eventually(t, func() bool { return len(logLines(t, logs)) >= requests }, 60*time.Second, 20*time.Millisecond)
	lines := logLines(t, logs)
	assert.Len(t, lines, requests, "one line per request: %v", lines)
	for _, l := range lines {
		assert.Equal(t, "DEBUG", l["level"], "%v", l)
		assert.Equal(t, "connector request", l["msg"], "%v", l)
		assert.Equal(t, "tools/list", l["mcp_method"], "%v", l)
		assert.EqualValues(t, http.StatusOK, l["status"], "%v", l)
	}

	// The client hangs up while its token is being checked.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		resp, err := postRPC(ctx, url, "oat_slow", "tools/list", nil)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-tokens.waiting:
	case <-time.After(60 * time.Second):
		t.Fatal("the token was never checked")
	}
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Eventually(t, func() bool { return len(logLines(t, logs)) >= requests+2 }, 60*time.Second, 20*time.Millisecond,
		"the failed check and the request's line")
	for _, l := range logLines(t, logs)[requests:] {
		assert.Equal(t, "DEBUG", l["level"], "a client hanging up is no error: %v", l)
	}
}
