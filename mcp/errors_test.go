package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service"
	"holdco/service/companies"
)

func TestUnauthenticatedAnswers401WithTheResourceMetadata(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	want := `Bearer resource_metadata="` + w.url + `/.well-known/oauth-protected-resource"`
	// A web session (JWT), a CLI session key and a company key are not
	// the authorization server's: refused like no token at all.
	w.tokens.issue("web-jwt", service.Principal{Credential: service.CredentialWebSession, UserID: "u1", ConglomerateID: w.cong})
	for _, token := range []string{"", "svc_u_v1_not-an-oauth-token", "svc_c_v1_company-key", "web-jwt", "unknown"} {
		status, header, _ := w.rpc(t, rpcCall{token: token, method: "tools/list"})
		assert.Equal(t, http.StatusUnauthorized, status, "token %q", token)
		assert.Equal(t, want, header.Get("WWW-Authenticate"), "token %q", token)
	}

	resp, err := http.Get(w.url + "/.well-known/oauth-protected-resource")
	require.NoError(t, err)
	defer resp.Body.Close()
	var meta map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&meta))
	assert.Equal(t, w.url, meta["resource"])
	assert.Equal(t, []any{"http://auth.test"}, meta["authorization_servers"])
	assert.Equal(t, []any{"nanocorp"}, meta["scopes_supported"])
}

func TestProtocolRevisionsOtherThan20260728AreRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for name, c := range map[string]rpcCall{
		"legacy initialize": {method: "initialize", noMeta: true, params: map[string]any{"protocolVersion": "2025-06-18",
			"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "old", "version": "1"}},
			headers: map[string]string{"Mcp-Protocol-Version": "", "Mcp-Method": ""}},
		"neither header nor _meta": {method: "tools/list", noMeta: true, headers: map[string]string{"Mcp-Protocol-Version": ""}},
		"old version header":       {method: "tools/list", noMeta: true, headers: map[string]string{"Mcp-Protocol-Version": "2025-11-25"}},
		"unknown newer revision":   {method: "tools/list", headers: map[string]string{"Mcp-Protocol-Version": "2027-01-01"}},
	} {
		c.token = w.token
		status, _, body := w.rpc(t, c)
		e := rpcError(body)
		require.NotNil(t, e, "%s: %v", name, body)
		assert.EqualValues(t, -32022, e["code"], name)
		data := e["data"].(map[string]any)
		assert.Equal(t, []any{"2026-07-28"}, data["supported"], name)
		assert.NotEmpty(t, data["requested"], name)
		if name == "legacy initialize" {
			assert.Equal(t, 200, status, name)
			assert.Equal(t, "2025-06-18", data["requested"])
		} else {
			assert.Equal(t, 400, status, name)
		}
	}
}

func TestHeaderMismatchIs32020(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for name, h := range map[string]map[string]string{
		"Mcp-Name differs":   {"Mcp-Name": "get_credits"},
		"Mcp-Name missing":   {"Mcp-Name": ""},
		"Mcp-Method differs": {"Mcp-Method": "tools/list"},
	} {
		status, _, body := w.rpc(t, rpcCall{token: w.token, method: "tools/call", params: map[string]any{"name": "list_businesses"}, headers: h})
		assert.Equal(t, 400, status, name)
		assert.EqualValues(t, -32020, rpcError(body)["code"], name)
	}
}

func TestGetAndDeleteAre405(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(m, w.url, nil)
		req.Header.Set("Authorization", "Bearer "+w.token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
		assert.Equal(t, "POST", resp.Header.Get("Allow"))
	}
	resp, err := http.Post(w.url+"/mcp", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "/mcp is not served")
	resp, err = http.Get(w.url + "/health")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode, string(b))
}

func TestRefusalsAreToolErrorsWithTheSpecsCases(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cs := w.connect(t, w.token)
	bob, bobCong := w.e.User(t, "bob@example.com")
	bobs, err := w.e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Bob Shop", Handle: "bob-shop", Idea: "Shop"})
	require.NoError(t, err)
	old, err := w.e.Svc.CreateCompany(w.owner, w.cong, companies.CompanyInput{Name: "Old Idea", Handle: "old-idea", Idea: "Gone"})
	require.NoError(t, err)
	require.NoError(t, w.e.Svc.ArchiveCompany(w.owner, old.ID))

	refused := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		out, isErr := call(t, cs, tool, args)
		require.True(t, isErr, "%s %v: %v", tool, args, out)
		require.NotEmpty(t, out["detail"])
		return out
	}
	for _, ref := range []string{"bob-shop", bobs.ID} {
		assert.Equal(t, "forbidden", refused("get_business", map[string]any{"business": ref})["error"], "another account's business")
		assert.Equal(t, "forbidden", refused("list_documents", map[string]any{"business": ref})["error"], "agents' tools too")
	}
	assert.Equal(t, "not_found", refused("get_business", map[string]any{"business": "old-idea"})["error"], "archived")
	assert.Equal(t, "not_found", refused("get_business", map[string]any{"business": old.ID})["error"], "archived")
	assert.Equal(t, "not_found", refused("get_business", map[string]any{"business": "no-such-shop"})["error"])
	bad := refused("get_business", map[string]any{"business": "Not A Handle!"})
	assert.Equal(t, "invalid_argument", bad["error"])
	assert.Equal(t, "business", bad["field"])
	missing := refused("send_message", map[string]any{"business": "ada-bakery"})
	assert.Equal(t, "invalid_argument", missing["error"])
	assert.Equal(t, "message", missing["field"])
	extra := refused("get_credits", map[string]any{"surprise": 1})
	assert.Equal(t, "surprise", extra["field"])

	fresh, err := w.e.Svc.CreateCompany(w.owner, w.cong, companies.CompanyInput{Name: "Fresh", Handle: "fresh-start", Idea: "New"})
	require.NoError(t, err)
	assert.Equal(t, "business_not_active", refused("send_message", map[string]any{"business": fresh.Handle, "message": "Hello"})["error"], "not set up yet")

	off := false
	_, err = w.e.Svc.UpdateCompany(w.owner, w.company.ID, companies.CompanyUpdate{AgentChat: &off})
	require.NoError(t, err)
	chat := refused("send_message", map[string]any{"business": "ada-bakery", "message": "Hello"})
	assert.Equal(t, "forbidden", chat["error"])
	assert.Equal(t, false, chat["agent_chat"])

	big := base64.StdEncoding.EncodeToString(make([]byte, 3<<20+1))
	tooLarge := refused("upload_file", map[string]any{"business": "ada-bakery", "filename": "big.bin", "content_base64": big})
	assert.Equal(t, "too_large", tooLarge["error"])
	up, isErr := call(t, cs, "upload_file", map[string]any{"business": "ada-bakery", "filename": "brief.txt", "content_base64": base64.StdEncoding.EncodeToString([]byte("hello"))})
	require.False(t, isErr, up)
	assert.EqualValues(t, 5, up["size_bytes"])

	noFounding := refused("create_business", map[string]any{"idea": strings.Repeat("x", 20001)})
	assert.Equal(t, "invalid_argument", noFounding["error"])
	assert.Equal(t, "idea", noFounding["field"])
}

func TestInsufficientCreditsCarriesTheNumbersAndLinks(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	poor, _ := w.e.User(t, "poor@example.com")
	co := w.e.SeedCompany(t, poor, companies.CompanyInput{Name: "Poor Shop", Handle: "poor-shop", Idea: "Nothing"})
	w.setReady(t, co.ID)
	cs := w.connect(t, w.issue(t, poor, "oat_poor"))
	out, isErr := call(t, cs, "send_message", map[string]any{"business": "poor-shop", "message": "Hello"})
	require.True(t, isErr, out)
	assert.Equal(t, "insufficient_credits", out["error"])
	assert.Contains(t, out, "balance")
	assert.Contains(t, out, "needed")
	links := out["links"].(map[string]any)
	for _, k := range []string{"top_up", "upgrade", "customer_portal", "dashboard"} {
		assert.Contains(t, links, k)
	}
}

func TestGetBillingLinksIsLimitedPerAccountAcrossReplicas(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cs := w.connect(t, w.token)
	// Another client of the same account, on another replica (its own
	// use cases, the same database).
	other := connectTo(t, w.serve(t, w.e.Replica(t)), w.issue(t, w.owner, "oat_ada_2"))
	for i := range 30 {
		s := cs
		if i%2 == 1 {
			s = other
		}
		out, isErr := call(t, s, "get_billing_links", nil)
		require.False(t, isErr, "call %d: %v", i+1, out)
		assert.Contains(t, out["links"], "dashboard")
	}
	out, isErr := call(t, other, "get_billing_links", nil)
	require.True(t, isErr)
	assert.Equal(t, "rate_limited", out["error"])
	assert.Greater(t, out["retry_after_seconds"], 0.0)

	// Another account has its own counters.
	bob, _ := w.e.User(t, "bob@example.com")
	out, isErr = call(t, w.connect(t, w.issue(t, bob, "oat_bob")), "get_billing_links", nil)
	require.False(t, isErr, out)
}

func TestCreateBusinessAndStartFirstPassMapToFounding(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cs := w.connect(t, w.token)
	out, isErr := call(t, cs, "create_business", map[string]any{"idea": "Plants by mail", "name": "Green", "handle": "green", "paused": true})
	require.False(t, isErr, out)
	assert.Equal(t, true, out["welcome_credits_granted"])
	assert.Equal(t, "provisioning", out["first_pass"].(map[string]any)["status"])
	assert.Equal(t, "ada-bakery", out["business"].(map[string]any)["handle"])
	require.Len(t, w.founding.created, 1)
	got := w.founding.created[0]
	assert.Equal(t, "Plants by mail", got.Idea)
	assert.Equal(t, "Green", got.Name)
	assert.Equal(t, "green", got.Handle)
	assert.True(t, got.Paused)

	w.founding.create = func(context.Context, foundingInput) (foundingResult, error) {
		return foundingResult{}, models.Errorf(models.CodeHandleTaken, "The handle green is taken.").With("suggested_handle", "green-2")
	}
	taken, isErr := call(t, cs, "create_business", map[string]any{"idea": "Plants", "name": "Green", "handle": "green"})
	require.True(t, isErr)
	assert.Equal(t, "handle_taken", taken["error"])
	assert.Equal(t, "green-2", taken["suggested_handle"])

	w.founding.firstRun.Status = "started"
	w.founding.firstRun.TurnID = "turn-1"
	fp, isErr := call(t, cs, "start_first_pass", map[string]any{"business": "ada-bakery"})
	require.False(t, isErr, fp)
	assert.Equal(t, "started", fp["first_pass"].(map[string]any)["status"])
	assert.Equal(t, []string{w.company.ID}, w.founding.started)
}

func TestLinkOnlyToolsAnswerAPageAndChangeNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cs := w.connect(t, w.token)
	out, isErr := call(t, cs, "archive_business", map[string]any{"business": "ada-bakery"})
	require.False(t, isErr, out)
	assert.Equal(t, "open", out["action"])
	assert.Contains(t, out["url"], "company_id="+w.company.ID)
	assert.Contains(t, out["url"], "action=archive_business")
	assert.NotEmpty(t, out["note"])
	c, err := w.e.Svc.GetCompany(w.owner, w.company.ID)
	require.NoError(t, err)
	assert.Equal(t, models.CompanyActive, c.Status, "nothing archived")

	acct, isErr := call(t, cs, "delete_account", nil)
	require.False(t, isErr, acct)
	assert.Contains(t, acct["url"], "conglomerate_id="+w.cong)
}

// TestAPublicNameBehindALoopbackProxyIsServed: the SDK's DNS-rebinding
// check (a loopback listener reached under another Host) stays only for a
// connector published on loopback; one published under a public name is
// reached through a proxy on loopback with that name as Host.
func TestAPublicNameBehindALoopbackProxyIsServed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	proxied := w.serveAs(t, w.e.Svc, "https://mcp.example")
	for _, c := range []struct {
		url, host string
		status    int
	}{{proxied, "mcp.example", http.StatusOK}, {w.url, "evil.example", http.StatusForbidden}} {
		w2 := *w
		w2.url = c.url
		status, _, body := w2.rpc(t, rpcCall{token: w.token, method: "tools/list", headers: map[string]string{"Host": c.host}})
		assert.Equal(t, c.status, status, "%s as %s: %v", c.url, c.host, body)
	}
}
