package app_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/app"
	"holdco/models"
	"holdco/usercli"
	"holdco/workflows/contract"
)

// TestAgentTurnEndToEnd runs the embedded default as a user would: a
// provisioned company gets its schedule of runs, a message starts a turn
// of the scripted model that writes a document and a task, the turn's text
// and answer are read over REST, the dashboard shows it, and the operator
// reads its trace.
func TestAgentTurnEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := t.Context()
	a := runApp(t, embeddedConfig(t, dir, nil), app.AllRoles...)
	base := "http://" + a.APIAddr()
	key := cliLogin(t, base, "ada@example.com")
	me := authedJSON(t, "GET", base+"/auth/me", key, "", 200)
	cong := me["conglomerate_id"].(string)
	_, err := a.Service.Billing.GrantCredits(ctx, a.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 50, "test")
	require.NoError(t, err)

	co := authedJSON(t, "POST", base+"/conglomerates/"+cong+"/companies", key, `{"name":"Ada Maps","idea":"Sell maps"}`, 201)
	id := co["id"].(string)
	assert.Equal(t, true, co["agent_chat"])
	require.Eventually(t, func() bool {
		return authedJSON(t, "GET", base+"/companies/"+id+"/resources", key, "", 200)["ready"] == true
	}, 60*time.Second, 200*time.Millisecond)
	require.Eventually(t, func() bool {
		_, err := a.Temporal.ScheduleClient().GetHandle(ctx, contract.AgentScheduleID(id)).Describe(ctx)
		return err == nil
	}, 30*time.Second, 200*time.Millisecond, "provisioning made the company's schedule of runs")

	sent := authedJSON(t, "POST", base+"/companies/"+id+"/messages", key, `{"message":"Plan the first map"}`, 202)
	turnID := sent["turn_id"].(string)
	assert.Equal(t, id, sent["business_id"])
	conflict := authedJSON(t, "POST", base+"/companies/"+id+"/messages", key, `{"message":"and another"}`, 409)
	assert.Equal(t, turnID, conflict["turn_id"])

	var turn map[string]any
	require.Eventually(t, func() bool {
		turn = authedJSON(t, "GET", base+"/turns/"+turnID, key, "", 200)
		return turn["status"] != "queued" && turn["status"] != "running"
	}, 60*time.Second, 100*time.Millisecond)
	require.Equal(t, "completed", turn["status"], "%v", turn)
	assert.Contains(t, turn["answer"], "I wrote the document")
	assert.Contains(t, turn["text"], "I'll write down notes first.")
	assert.Greater(t, turn["credits_cost"], 0.0)
	assert.Nil(t, turn["question"])

	dash := authedJSON(t, "GET", base+"/companies/"+id+"/dashboard", key, "", 200)
	assert.Equal(t, turnID, dash["last_turn"].(map[string]any)["turn_id"])
	doc := authedJSON(t, "GET", base+"/companies/"+id+"/documents/notes", key, "", 200)
	assert.Contains(t, doc["content"], "Plan the first map")

	admin, err := a.Service.Identity.CreateAdminToken(ctx, "ops")
	require.NoError(t, err)
	req, _ := http.NewRequest("GET", base+"/admin/runs/"+turnID+"/trace", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, string(body))
	assert.Contains(t, string(body), `"type":"turn_ended"`)
	assert.NotContains(t, string(body), key, "no credential in a trace")
	assert.Equal(t, 3, strings.Count(string(body), `"type":"usage"`))

	// The CLI: holdco send <handle> "message" streams the turn to its end.
	cliDir := t.TempDir()
	env, out := cliEnv(t, base, cliDir)
	env.OpenBrowser = loopbackBrowser(t, "ada@example.com")
	require.NoError(t, usercli.Login(ctx, env, []string{"--env", "test"}))
	out.Reset()
	require.NoError(t, usercli.Send(ctx, env, []string{co["handle"].(string), "Plan the second map"}))
	assert.Contains(t, out.String(), "I'll write down notes first.")
	assert.Contains(t, out.String(), "I created the task")
	err = usercli.Send(ctx, env, []string{"no-such-business", "hi"})
	assert.ErrorContains(t, err, `no business "no-such-business"`)
	// Ctrl-C: the turn is interrupted and the command exits 130.
	cctx, stop := context.WithCancel(ctx)
	env.Sleep = func(ctx context.Context, d time.Duration) error { stop(); <-ctx.Done(); return ctx.Err() }
	err = usercli.Send(cctx, env, []string{id, "Plan a third map"})
	var exit *usercli.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 130, exit.Code)

	// The interrupt of an ended turn is a no-op; another account's is 403.
	same := authedJSON(t, "POST", base+"/turns/"+turnID+"/interrupt", key, "", 200)
	assert.Equal(t, "completed", same["status"])
	bob := cliLogin(t, base, "bob@example.com")
	authedJSON(t, "GET", base+"/turns/"+turnID, bob, "", 403)
	authedJSON(t, "POST", base+"/turns/"+turnID+"/interrupt", bob, "", 403)
}
