package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"holdco/app"
	"holdco/models"
	"holdco/service"
	"holdco/service/founding"
	"holdco/workflows"
	"holdco/workflows/contract"
)

func startFoundingApp(t *testing.T) (*app.App, string) {
	t.Helper()
	a := runApp(t, embeddedConfig(t, t.TempDir(), map[string]string{"HOLDCO_LLM_SCRIPTED_STEP_DELAY": "50ms"}), app.AllRoles...)
	return a, "http://" + a.APIAddr()
}

// TestFoundingInterviewEndToEnd runs the web founding on the embedded
// default: the interview over REST (answers as workflow Updates, a bad
// answer refused), the scripted interviewer's questions and proposal, the
// founded company with its welcome credits and founding plan, its
// provisioning and the first pass that starts when it is ready; the live
// history replays against the workflow code.
func TestFoundingInterviewEndToEnd(t *testing.T) {
	t.Parallel()
	a, base := startFoundingApp(t)
	key := cliLogin(t, base, "ada@example.com")
	me := authedJSON(t, "GET", base+"/auth/me", key, "", 200)
	cong := me["conglomerate_id"].(string)
	userID := me["user"].(map[string]any)["id"].(string)

	authedJSON(t, "GET", base+"/founding/current", key, "", 404)
	hc := authedJSON(t, "GET", base+"/founding/handle-check?handle="+url.QueryEscape("Trail Kin"), key, "", 200)
	assert.Equal(t, "trail-kin", hc["normalized"])
	assert.Equal(t, true, hc["available"])
	assert.Equal(t, false, hc["valid"])

	iv := authedJSON(t, "POST", base+"/founding", key, `{"idea":"Guided hiking maps for families"}`, 201)
	assert.Equal(t, "naming", iv["state"])
	assert.Equal(t, true, iv["segment_running"])
	dup := authedJSON(t, "POST", base+"/founding", key, `{"idea":"Another idea entirely here"}`, 409)
	assert.Equal(t, iv["id"], dup["interview_id"])

	wait := func(state string) map[string]any {
		t.Helper()
		var cur map[string]any
		require.Eventually(t, func() bool {
			cur = authedJSON(t, "GET", base+"/founding/current", key, "", 200)
			return cur["state"] == state && cur["segment_running"] == false
		}, 60*time.Second, 50*time.Millisecond, "state %s", state)
		return cur
	}
	cur := wait("naming")
	assert.Contains(t, cur["question"], "What should the business be called?")
	assert.Equal(t, true, cur["open"])

	// Bad answers are refused and change nothing.
	authedJSON(t, "POST", base+"/founding/current/answers", key, `{"answer":"   "}`, 422)
	authedJSON(t, "POST", base+"/founding/current/answers", key, `{"action":"accept"}`, 409)
	authedJSON(t, "POST", base+"/founding/current/answers", key, `{"action":"maybe"}`, 422)
	assert.Len(t, authedJSON(t, "GET", base+"/founding/current", key, "", 200)["transcript"], 2)

	ans := authedJSON(t, "POST", base+"/founding/current/answers", key, `{"answer":"Trail Kin"}`, 200)
	// The answer is in the transcript at once; whether the interviewer is
	// still working on it when the answer returns depends on the machine.
	assert.Contains(t, fmt.Sprint(ans["transcript"]), "Trail Kin", "the answer is recorded")
	cur = wait("shaping")
	assert.Contains(t, cur["question"], "first customers")
	authedJSON(t, "POST", base+"/founding/current/answers", key, `{"answer":"Families who hike on weekends"}`, 200)
	cur = wait("reviewing")
	proposal := cur["proposal"].(map[string]any)
	assert.Equal(t, "Trail Kin", proposal["name"])
	assert.Equal(t, "trail-kin", proposal["handle"])
	assert.Contains(t, proposal["founding_plan"], "# Founding plan: Trail Kin")

	authedJSON(t, "POST", base+"/founding/current/answers", key, `{"action":"accept"}`, 200)
	cur = wait("founded")
	assert.Equal(t, false, cur["open"])
	companyID := cur["company_id"].(string)
	co := authedJSON(t, "GET", base+"/companies/"+companyID, key, "", 200)
	assert.Equal(t, "trail-kin", co["handle"])
	assert.EqualValues(t, 3, co["generation"])
	assert.Contains(t, co["mission"], "Families who hike on weekends")
	doc := authedJSON(t, "GET", base+"/companies/"+companyID+"/documents/founding_plan", key, "", 200)
	assert.Contains(t, doc["content"], "Guided hiking maps for families")
	ledger := authedJSON(t, "GET", base+"/conglomerates/"+cong+"/credit-ledger", key, "", 200)
	assert.Equal(t, 1, welcomeLines(ledger), "welcome credits granted with the founding")

	// Provisioning gets ready; the first pass starts and completes.
	var firstPass map[string]any
	require.Eventually(t, func() bool {
		firstPass, _ = authedJSON(t, "GET", base+"/founding/current", key, "", 200)["first_pass"].(map[string]any)
		return firstPass != nil && firstPass["status"] != "pending"
	}, 90*time.Second, 100*time.Millisecond)
	require.Equal(t, "started", firstPass["status"], "%v", firstPass)
	turnID := firstPass["turn_id"].(string)
	var turn map[string]any
	require.Eventually(t, func() bool {
		turn = authedJSON(t, "GET", base+"/turns/"+turnID, key, "", 200)
		return turn["status"] != "queued" && turn["status"] != "running"
	}, 60*time.Second, 100*time.Millisecond)
	assert.Equal(t, "completed", turn["status"], "%v", turn)
	assert.Equal(t, "first_pass", turn["trigger"])

	hc = authedJSON(t, "GET", base+"/founding/handle-check?handle=trail-kin", key, "", 200)
	assert.Equal(t, false, hc["available"])
	assert.Equal(t, "trail-kin-2", hc["suggestion"])

	// The live history replays against the workflow code.
	ctx := context.Background()
	it := a.Temporal.GetWorkflowHistory(ctx, contract.FoundingWorkflowID(userID), "", false, 0)
	h := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, e)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.Founding, workflow.RegisterOptions{Name: contract.FoundingWorkflowName})
	require.NoError(t, r.ReplayWorkflowHistory(nil, h))

	// A v3 upgrade: a new company is current; an older one switches.
	up := authedJSON(t, "GET", base+"/companies/"+companyID+"/v3-upgrade", key, "", 200)
	assert.Equal(t, false, up["eligible"])
	assert.Equal(t, "current_generation", up["reason"])
	authedJSON(t, "POST", base+"/companies/"+companyID+"/v3-upgrade", key, "", 409)
	// The first pass spent some of the welcome credits: a second business
	// needs 12 again.
	_, err := a.Service.Billing.GrantCredits(ctx, a.Store.SystemConglomerateScope(cong), models.EntryAdminAdjustment, 20, "test credits")
	require.NoError(t, err)
	old := authedJSON(t, "POST", base+"/conglomerates/"+cong+"/companies", key, `{"name":"Old Shop","idea":"Sell old maps to collectors"}`, 201)
	oldID := old["id"].(string)
	scope, err := a.Store.SystemCompanyScope(ctx, oldID)
	require.NoError(t, err)
	require.NoError(t, a.Store.Founding().SetCompanyGeneration(ctx, scope, 2))
	headerJSON(t, "POST", base+"/companies/"+oldID+"/v3-upgrade", key, map[string]string{"X-Client-Mobile": "perhaps"}, 422)
	headerJSON(t, "POST", base+"/companies/"+oldID+"/v3-upgrade", key, map[string]string{"X-Analytics-Session-Id": "has space"}, 422)
	started := headerJSON(t, "POST", base+"/companies/"+oldID+"/v3-upgrade", key, map[string]string{"X-Client-Mobile": "true", "X-Analytics-Session-Id": "sess-1"}, 201)
	assert.Equal(t, "v3_upgrade", started["kind"])
	assert.Equal(t, "naming", started["state"])
	wait("naming")
	authedJSON(t, "POST", base+"/founding/current/answers", key, `{"answer":"yes"}`, 200)
	wait("shaping")
	authedJSON(t, "POST", base+"/founding/current/answers", key, `{"answer":"Map collectors"}`, 200)
	wait("reviewing")
	authedJSON(t, "POST", base+"/founding/current/answers", key, `{"action":"accept"}`, 200)
	wait("founded")
	up = authedJSON(t, "GET", base+"/companies/"+oldID+"/v3-upgrade", key, "", 200)
	assert.EqualValues(t, 3, up["generation"])
	assert.Equal(t, "founded", up["interview"].(map[string]any)["state"])
	assert.Equal(t, "good", up["standing"])

	// The switched company's first pass starts on its new founding plan.
	require.Eventually(t, func() bool {
		firstPass, _ = authedJSON(t, "GET", base+"/founding/current", key, "", 200)["first_pass"].(map[string]any)
		return firstPass != nil && firstPass["status"] != "pending"
	}, 90*time.Second, 100*time.Millisecond)
	require.Equal(t, "started", firstPass["status"], "%v", firstPass)
	require.NotEqual(t, turnID, firstPass["turn_id"], "a turn of its own, not the first founding's")
	upTurnID := firstPass["turn_id"].(string)
	require.Eventually(t, func() bool {
		turn = authedJSON(t, "GET", base+"/turns/"+upTurnID, key, "", 200)
		return turn["status"] != "queued" && turn["status"] != "running"
	}, 60*time.Second, 100*time.Millisecond)
	assert.Equal(t, "completed", turn["status"], "%v", turn)
	assert.Equal(t, "first_pass", turn["trigger"])
	assert.Equal(t, oldID, turn["business_id"])
	assert.Contains(t, turn["message"], "First pass on the new founding plan")
}

func welcomeLines(ledger map[string]any) int {
	n := 0
	for _, l := range ledger["lines"].([]any) {
		if line := l.(map[string]any); line["type"] == "GRANT_WELCOME" && line["credits"] == 15.0 {
			n++
		}
	}
	return n
}

func headerJSON(t *testing.T, method, u, bearer string, headers map[string]string, want int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, u, nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	require.Equal(t, want, resp.StatusCode, "%s %s: %s", method, u, raw)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// TestCreateBusinessEndToEnd is the connector's path on the embedded
// default: create_business answers provisioning, a retry answers the same
// business, start_first_pass once ready starts the first turn, which
// writes the founding plan; then the first pass is skipped.
func TestCreateBusinessEndToEnd(t *testing.T) {
	t.Parallel()
	a, base := startFoundingApp(t)
	key := cliLogin(t, base, "ada@example.com")
	p, err := a.Service.Identity.Authenticate(context.Background(), key)
	require.NoError(t, err)
	p.Credential, p.ClientID = service.CredentialOAuthAccess, "assistant-1"
	ctx := service.WithPrincipal(context.Background(), p)

	res, err := a.Service.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Cargo bike deliveries for bakeries"})
	require.NoError(t, err)
	assert.True(t, res.WelcomeCreditsGranted)
	assert.Equal(t, founding.FirstPassProvisioning, res.FirstPass.Status)
	again, err := a.Service.Founding.CreateBusiness(ctx, founding.CreateBusinessInput{Idea: "Cargo bike deliveries for bakeries"})
	require.NoError(t, err)
	assert.Equal(t, res.Business.ID, again.Business.ID)
	assert.False(t, again.WelcomeCreditsGranted)

	var fp founding.FirstPass
	require.Eventually(t, func() bool {
		fp, err = a.Service.Founding.StartFirstPass(ctx, res.Business.ID)
		require.NoError(t, err)
		return fp.Status != founding.FirstPassProvisioning
	}, 90*time.Second, 200*time.Millisecond)
	require.Equal(t, founding.FirstPassStarted, fp.Status, "%+v", fp)
	require.NotEmpty(t, fp.TurnID)
	// While it runs, another start is a conflict naming it (or, once it
	// wrote the plan, skipped).
	second, err := a.Service.Founding.StartFirstPass(ctx, res.Business.ID)
	require.NoError(t, err)
	if second.Status == founding.FirstPassNotStarted {
		assert.Equal(t, models.CodeConflict, second.Error)
		assert.Equal(t, fp.TurnID, second.TurnID)
	} else {
		assert.Equal(t, founding.FirstPassSkipped, second.Status)
	}
	require.Eventually(t, func() bool {
		v, err := a.Service.Turns.GetTurn(ctx, fp.TurnID)
		require.NoError(t, err)
		return !v.Status.Active()
	}, 60*time.Second, 100*time.Millisecond)
	v, err := a.Service.Turns.GetTurn(ctx, fp.TurnID)
	require.NoError(t, err)
	assert.Equal(t, models.TurnCompleted, v.Status)
	assert.Contains(t, v.Answer, `I wrote the document "Founding plan"`)
	fp, err = a.Service.Founding.StartFirstPass(ctx, res.Business.ID)
	require.NoError(t, err)
	assert.Equal(t, founding.FirstPassSkipped, fp.Status)
}
