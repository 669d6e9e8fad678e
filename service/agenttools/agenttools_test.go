package agenttools_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/llm/scripted"
	"holdco/service/agenttools"
	"holdco/service/companies"
	"holdco/service/servicetest"
	"holdco/service/tasks"
	"holdco/service/usecases"
)

var update = flag.Bool("update", false, "rewrite testdata/*.json with the generated schemas")

func catalogOf(e *servicetest.Env) *agenttools.Catalog {
	return e.Svc.Tools
}

// world is an owner with a company and the company's agent (its key).
type world struct {
	e       *servicetest.Env
	cat     *agenttools.Catalog
	owner   context.Context
	agent   context.Context
	company string
}

func newWorld(t *testing.T, opts usecases.Options) world {
	t.Helper()
	e := servicetest.NewWith(t, opts)
	owner, cong := e.User(t, "ada@example.com")
	co, err := e.Svc.CreateCompany(owner, cong, companies.CompanyInput{Name: "Ada Tools"})
	require.NoError(t, err)
	key, err := e.Svc.CompanyAPIKey(owner, co.ID)
	require.NoError(t, err)
	return world{e: e, cat: catalogOf(e), owner: owner, agent: e.As(t, key.Key), company: co.ID}
}

// fund grants the company's account credits (billable tools hold their
// price before they run).
func (w world) fund(t *testing.T, credits int64) {
	t.Helper()
	c, err := w.e.Svc.GetCompany(w.owner, w.company)
	require.NoError(t, err)
	_, err = w.e.Svc.GrantCredits(context.Background(), w.e.Store.SystemConglomerateScope(c.ConglomerateID), models.EntryAdminAdjustment, credits, "test credits")
	require.NoError(t, err)
}

// call runs a tool as the agent and decodes its result into out.
func (w world) call(t *testing.T, name string, args any, out any) {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := w.cat.Call(w.agent, w.company, name, raw)
	require.NoError(t, err, "%s: %s", name, agenttools.ErrorJSON(err))
	if out != nil {
		require.NoError(t, json.Unmarshal(res, out), string(res))
	}
}

func domainErr(t *testing.T, err error) *models.Error {
	t.Helper()
	var de *models.Error
	require.ErrorAs(t, err, &de)
	return de
}

func TestSchemasMatchGoldenFiles(t *testing.T) {
	cat := catalogOf(servicetest.New(t))
	specs := cat.Specs()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
		var pretty map[string]any
		require.NoError(t, json.Unmarshal(s.InputSchema, &pretty))
		got, err := json.MarshalIndent(map[string]any{"name": s.Name, "description": s.Description, "input_schema": pretty}, "", "  ")
		require.NoError(t, err)
		got = append(got, '\n')
		path := filepath.Join("testdata", s.Name+".json")
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(path, got, 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		require.NoError(t, err, "run with -update to write %s", path)
		assert.Equal(t, string(want), string(got), "schema of %s changed (run with -update if meant)", s.Name)
	}
	assert.IsIncreasing(t, names, "Specs are sorted by name")
	assert.Equal(t, []string{"add_prospect", "ask_question", "commit_repository_files", "create_payment_link", "create_product", "create_task",
		"delete_document", "generate_image", "get_ad_panel", "get_analytics", "get_revenue", "list_activity", "list_documents", "list_emails", "list_files", "list_payments",
		"list_products", "list_prospects", "list_repository_files", "list_subscriptions", "list_tasks", "query_database", "read_document", "read_email",
		"read_file", "read_repository_file", "regenerate_ad", "search_domains", "send_email", "set_ad_daily_cap", "update_prospect", "update_task", "web_research", "write_document", "write_file"}, names)
	// Every input refuses unknown properties.
	for _, s := range specs {
		var sch struct {
			Type                 string `json:"type"`
			AdditionalProperties any    `json:"additionalProperties"`
		}
		require.NoError(t, json.Unmarshal(s.InputSchema, &sch))
		assert.Equal(t, "object", sch.Type, s.Name)
		assert.Equal(t, false, sch.AdditionalProperties, s.Name)
	}
}

func TestDocumentTasksFilesEmailAndActivityTools(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	w.fund(t, 10) // send_email costs a credit
	e := w.e

	var wd agenttools.WriteDocumentResult
	w.call(t, "write_document", map[string]any{"document_type": "notes", "title": "Notes", "content": "# Notes\n\nhello\n"}, &wd)
	assert.True(t, wd.Created)
	assert.Equal(t, "visible", wd.Document.Visibility, "notes is not an agent_ type")
	doc, err := e.Svc.Documents.Get(w.owner, w.company, "notes")
	require.NoError(t, err)
	assert.Equal(t, "# Notes\n\nhello\n", doc.Content)
	assert.Equal(t, models.ActorAgent, doc.UpdatedBy, "the agent's principal wrote it")

	var rd agenttools.Document
	w.call(t, "read_document", map[string]any{"document_type": "notes"}, &rd)
	assert.Equal(t, doc.Content, rd.Content)
	assert.Equal(t, "Notes", rd.Title)

	var dl agenttools.DocumentList
	w.call(t, "list_documents", map[string]any{}, &dl)
	require.Len(t, dl.Documents, 1)
	assert.Equal(t, "notes", dl.Documents[0].DocumentType)

	var del agenttools.Deleted
	w.call(t, "delete_document", map[string]any{"document_type": "notes"}, &del)
	assert.True(t, del.Deleted)
	_, err = e.Svc.Documents.Get(w.owner, w.company, "notes")
	assert.Equal(t, models.CodeNotFound, domainErr(t, err).Code)

	// Tasks.
	var task agenttools.Task
	w.call(t, "create_task", map[string]any{"title": "Call the baker", "description": "Ask about prices", "priority": "high"}, &task)
	assert.Equal(t, "pending", task.Status)
	assert.Equal(t, "high", task.Priority)
	assert.Equal(t, "agent", task.CreatedBy)
	var up agenttools.Task
	w.call(t, "update_task", map[string]any{"task_id": task.ID, "status": "cancelled", "title": "Call the baker again"}, &up)
	assert.Equal(t, "cancelled", up.Status)
	got, err := e.Svc.Tasks.Get(w.owner, task.ID)
	require.NoError(t, err)
	assert.Equal(t, models.TaskCancelled, got.Status)
	assert.Equal(t, "Call the baker again", got.Title)
	var tl agenttools.TaskList
	w.call(t, "list_tasks", map[string]any{"statuses": []string{"pending"}}, &tl)
	assert.Empty(t, tl.Tasks)
	w.call(t, "list_tasks", map[string]any{}, &tl)
	require.Len(t, tl.Tasks, 1)
	assert.EqualValues(t, 1, tl.Total)
	// A lifecycle move the service refuses passes its error through.
	_, err = w.cat.Call(w.agent, w.company, "update_task", json.RawMessage(`{"task_id":"`+task.ID+`","status":"running"}`))
	assert.Equal(t, models.CodeConflict, domainErr(t, err).Code)

	// Files: text and base64.
	var f agenttools.File
	w.call(t, "write_file", map[string]any{"path": "reports/q1.md", "content": "# Q1\n", "content_type": "text/markdown"}, &f)
	assert.Equal(t, "reports/q1.md", f.Path)
	assert.EqualValues(t, 5, f.SizeBytes)
	assert.Equal(t, "agent", f.Source)
	bin := []byte{0, 1, 2, 0xff, 0xfe}
	w.call(t, "write_file", map[string]any{"path": "img/x.bin", "content": base64.StdEncoding.EncodeToString(bin), "encoding": "base64"}, &f)
	assert.EqualValues(t, len(bin), f.SizeBytes)
	assert.Equal(t, "application/octet-stream", f.ContentType)
	list, err := e.Svc.Files.List(w.owner, w.company)
	require.NoError(t, err)
	require.Len(t, list.Files, 2)
	var fl agenttools.FileList
	w.call(t, "list_files", nil, &fl)
	require.Len(t, fl.Files, 2)
	assert.Equal(t, "img/x.bin", fl.Files[0].Path)
	assert.EqualValues(t, 5+len(bin), fl.UsedBytes)
	// read_file: text back, binary refused, a missing id not_found.
	var fc agenttools.FileContent
	w.call(t, "read_file", map[string]any{"file_id": fl.Files[1].ID}, &fc)
	assert.Equal(t, "# Q1\n", fc.Content)
	assert.Equal(t, "reports/q1.md", fc.File.Path)
	_, err = w.cat.Call(w.agent, w.company, "read_file", json.RawMessage(`{"file_id":"`+fl.Files[0].ID+`"}`))
	assert.Equal(t, "file_id", domainErr(t, err).Field, "a binary file is refused")
	_, err = w.cat.Call(w.agent, w.company, "read_file", json.RawMessage(`{"file_id":"00000000-0000-4000-8000-000000000000"}`))
	assert.Equal(t, models.CodeNotFound, domainErr(t, err).Code)
	var large agenttools.File
	w.call(t, "write_file", map[string]any{"path": "big.txt", "content": strings.Repeat("a", agenttools.MaxReadFileBytes+1)}, &large)
	_, err = w.cat.Call(w.agent, w.company, "read_file", json.RawMessage(`{"file_id":"`+large.ID+`"}`))
	assert.Equal(t, models.CodeTooLarge, domainErr(t, err).Code)
	_, err = w.cat.Call(w.agent, w.company, "write_file", json.RawMessage(`{"path":"a.bin","content":"not base64!","encoding":"base64"}`))
	assert.Equal(t, "content", domainErr(t, err).Field)
	big := base64.StdEncoding.EncodeToString(make([]byte, agenttools.MaxWriteFileBytes+1))
	_, err = w.cat.Call(w.agent, w.company, "write_file", json.RawMessage(`{"path":"big.bin","content":"`+big+`","encoding":"base64"}`))
	assert.Equal(t, models.CodeTooLarge, domainErr(t, err).Code)

	// Email: send, list, read.
	var sent agenttools.Email
	w.call(t, "send_email", map[string]any{"to": "jane@example.com", "subject": "Hello", "text": "Our bakery opens Monday."}, &sent)
	assert.Equal(t, "outbound", sent.Direction)
	var page agenttools.EmailPage
	w.call(t, "list_emails", map[string]any{"limit": 10}, &page)
	require.Len(t, page.Emails, 1)
	assert.Equal(t, sent.ID, page.Emails[0].ID)
	assert.True(t, strings.HasSuffix(page.Address, "@mail.test"))
	var read agenttools.EmailWithBody
	w.call(t, "read_email", map[string]any{"email_id": sent.ID}, &read)
	assert.Contains(t, read.Text, "Our bakery opens Monday.")

	// The activity feed shows what the tools did.
	var act agenttools.ActivityPage
	w.call(t, "list_activity", map[string]any{"limit": 100}, &act)
	kinds := map[string]bool{}
	for _, ev := range act.Events {
		kinds[ev.Kind] = true
	}
	assert.True(t, kinds[string(models.ActivityDocumentUpdated)], "%v", kinds)
	w.call(t, "list_activity", map[string]any{"limit": 1}, &act)
	require.Len(t, act.Events, 1)
	require.NotNil(t, act.NextBefore)
	var next agenttools.ActivityPage
	w.call(t, "list_activity", map[string]any{"limit": 1, "before": act.NextBefore, "before_id": act.NextBeforeID}, &next)
	require.Len(t, next.Events, 1)
	assert.NotEqual(t, act.Events[0].ID, next.Events[0].ID)
}

func TestBadArgumentsAreInvalidArgumentWithField(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	for name, tc := range map[string]struct {
		tool, args, field string
	}{
		"unknown field":         {"write_document", `{"document_type":"notes","content":"x","colour":"red"}`, "colour"},
		"field in another case": {"write_document", `{"Document_Type":"notes","content":"x"}`, "Document_Type"},
		"missing required":      {"write_document", `{"content":"x"}`, "document_type"},
		"wrong type":            {"create_task", `{"title":42}`, "title"},
		"null for a string":     {"create_task", `{"title":null}`, "title"},
		"NUL byte":              {"create_task", `{"title":"a\u0000b"}`, "title"},
		"control character":     {"send_email", `{"to":"a@example.com","subject":"x\u001b","text":"t"}`, "subject"},
		"too long":              {"create_task", `{"title":"` + strings.Repeat("é", 201) + `"}`, "title"},
		"not in the enum":       {"create_task", `{"title":"t","priority":"asap"}`, "priority"},
		"under the minimum":     {"list_emails", `{"limit":0}`, "limit"},
		"not an integer":        {"list_payments", `{"limit":1.5}`, "limit"},
		"bad item in an array":  {"list_tasks", `{"statuses":[1]}`, "statuses"},
		"item not in the enum":  {"list_tasks", `{"statuses":["lost"]}`, "statuses"},
		"not an object":         {"list_tasks", `[1,2]`, ""},
		"not JSON":              {"list_tasks", `{"statuses":`, ""},
		"two values":            {"list_tasks", `{} {}`, ""},
		"unknown tool":          {"launch_rocket", `{}`, "name"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := w.cat.Call(w.agent, w.company, tc.tool, json.RawMessage(tc.args))
			de := domainErr(t, err)
			assert.Equal(t, models.CodeInvalidArgument, de.Code, de.Detail)
			assert.Equal(t, tc.field, de.Field, de.Detail)
			var body map[string]any
			require.NoError(t, json.Unmarshal(agenttools.ErrorJSON(err), &body))
			assert.Equal(t, "invalid_argument", body["error"])
			assert.NotEmpty(t, body["detail"])
			if tc.field != "" {
				assert.Equal(t, tc.field, body["field"])
			}
		})
	}
	// Nothing was stored by the refused calls.
	l, err := w.e.Svc.Tasks.List(w.owner, w.company, tasks.ListInput{})
	require.NoError(t, err)
	assert.Empty(t, l.Tasks)
	// Empty arguments are an empty object.
	_, err = w.cat.Call(w.agent, w.company, "list_tasks", nil)
	require.NoError(t, err)
}

// A whole number written with a fraction or an exponent is an integer to
// JSON Schema, so the check passes it: the tool gets it as that integer
// (FuzzToolArguments found `{"limit":1e0}` passing the check, then failing
// the tool's decode).
func TestWholeNumbersWrittenAsDecimalsAreIntegers(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	for _, args := range []string{`{"limit":1e0}`, `{"limit":2.0}`, `{"limit":1E1}`, `{"limit":100.000}`} {
		_, err := w.cat.Call(w.agent, w.company, "list_activity", json.RawMessage(args))
		require.NoError(t, err, args)
	}
	var act struct {
		Events []json.RawMessage `json:"events"`
	}
	for range 3 {
		w.call(t, "create_task", map[string]any{"title": "t"}, nil)
	}
	out, err := w.cat.Call(w.agent, w.company, "list_activity", json.RawMessage(`{"limit":2e0}`))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(out, &act))
	assert.Len(t, act.Events, 2, "limit 2e0 is limit 2")
	// Not whole, or beyond the schema's bounds, stays refused.
	for _, args := range []string{`{"limit":1.5}`, `{"limit":1e3}`, `{"limit":1e400}`} {
		_, err := w.cat.Call(w.agent, w.company, "list_activity", json.RawMessage(args))
		assert.True(t, models.IsCode(err, models.CodeInvalidArgument), "%s: %v", args, err)
	}
}

func TestAskQuestionIsAControlTool(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	assert.True(t, w.cat.IsControl("ask_question"))
	assert.False(t, w.cat.IsControl("create_task"))
	_, err := w.cat.Call(w.agent, w.company, "ask_question", json.RawMessage(`{"question":"Why?"}`))
	de := domainErr(t, err)
	assert.Equal(t, models.CodeInvalidArgument, de.Code)
	assert.Contains(t, de.Detail, "turn")
}

// TestQuickToolsAreHoldcosOwnRows: the tools a turn runs as local
// activities touch only holdco's rows; whatever calls a provider, blob
// storage or the company's database stays an activity.
func TestQuickToolsAreHoldcosOwnRows(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	for _, name := range []string{"ask_question", "write_document", "read_document", "create_task", "update_task", "list_activity", "add_prospect"} {
		assert.True(t, w.cat.IsQuick(name), name)
	}
	for _, name := range []string{"send_email", "write_file", "query_database", "get_analytics", "web_research", "create_payment_link",
		"commit_repository_files", "search_domains", "made_up"} {
		assert.False(t, w.cat.IsQuick(name), name)
	}
}

func TestAnotherTenantsCompanyIsForbidden(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	bob, bobCong := w.e.User(t, "bob@example.com")
	bobCo, err := w.e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Bob Bakes"})
	require.NoError(t, err)
	for _, tc := range []struct{ tool, args string }{
		{"list_documents", `{}`},
		{"write_document", `{"document_type":"notes","content":"x"}`},
		{"create_task", `{"title":"t"}`},
		{"list_files", `{}`},
		{"read_file", `{"file_id":"00000000-0000-4000-8000-000000000000"}`},
		{"write_file", `{"path":"a.txt","content":"x"}`},
		{"send_email", `{"to":"a@example.com","subject":"s","text":"t"}`},
		{"list_emails", `{}`},
		{"list_activity", `{}`},
		{"get_revenue", `{}`},
	} {
		// Ada's agent on Bob's company, and Bob on Ada's.
		_, err := w.cat.Call(w.agent, bobCo.ID, tc.tool, json.RawMessage(tc.args))
		assert.Equal(t, models.CodeForbidden, domainErr(t, err).Code, "agent: %s", tc.tool)
		_, err = w.cat.Call(bob, w.company, tc.tool, json.RawMessage(tc.args))
		assert.Equal(t, models.CodeForbidden, domainErr(t, err).Code, "user: %s", tc.tool)
	}
	// A task of another company of the same owner is not this company's.
	other, err := w.e.Svc.CreateCompany(w.owner, mustCong(t, w), companies.CompanyInput{Name: "Ada Two"})
	require.NoError(t, err)
	res, err := w.cat.Call(w.owner, other.ID, "create_task", json.RawMessage(`{"title":"theirs"}`))
	require.NoError(t, err)
	var tk agenttools.Task
	require.NoError(t, json.Unmarshal(res, &tk))
	_, err = w.cat.Call(w.owner, w.company, "update_task", json.RawMessage(`{"task_id":"`+tk.ID+`","status":"cancelled"}`))
	assert.Equal(t, models.CodeNotFound, domainErr(t, err).Code)
}

func mustCong(t *testing.T, w world) string {
	t.Helper()
	co, err := w.e.Svc.GetCompany(w.owner, w.company)
	require.NoError(t, err)
	return co.ConglomerateID
}

func TestResultsOverOneMegabyteAreTooLarge(t *testing.T) {
	cat := agenttools.NewCatalog()
	type in struct {
		Bytes int `json:"bytes"`
	}
	agenttools.Register(cat, "echo", "answers that many bytes", func(_ context.Context, _ string, x in) (string, error) {
		return strings.Repeat("a", x.Bytes), nil
	})
	res, err := cat.Call(context.Background(), "c", "echo", json.RawMessage(`{"bytes":1000}`))
	require.NoError(t, err)
	assert.Len(t, res, 1002)
	_, err = cat.Call(context.Background(), "c", "echo", json.RawMessage(`{"bytes":1048576}`))
	de := domainErr(t, err)
	assert.Equal(t, models.CodeTooLarge, de.Code)
	var body map[string]any
	require.NoError(t, json.Unmarshal(agenttools.ErrorJSON(err), &body))
	assert.Equal(t, "too_large", body["error"])
	assert.EqualValues(t, agenttools.MaxResultBytes, body["limit_bytes"])

	// A plain error renders as internal_error, its cause not shown.
	body = nil
	require.NoError(t, json.Unmarshal(agenttools.ErrorJSON(assert.AnError), &body))
	assert.Equal(t, "internal_error", body["error"])
	assert.NotContains(t, body["detail"], assert.AnError.Error())
}

// The scripted model's tool calls decode through Call and do what they
// say: the catalog keeps its names and input shapes.
func TestScriptedModelCallsTheCatalog(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	model := scripted.New(0)
	specs := w.cat.Specs()
	msgs := []models.ModelMessage{{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: "Launch a bakery in Lisbon"}}}}
	var called []string
	for range 5 {
		resp, err := model.Complete(context.Background(), models.ModelRequest{Messages: msgs, Tools: specs}, nil)
		require.NoError(t, err)
		msgs = append(msgs, models.ModelMessage{Role: models.RoleAssistant, Content: resp.Content})
		if resp.StopReason == models.StopEndTurn {
			assert.Contains(t, resp.Text(), `I wrote the document "Notes: Launch a bakery in Lisbon".`)
			assert.Contains(t, resp.Text(), `I created the task "Follow up: Launch a bakery in Lisbon".`)
			break
		}
		var results []models.ContentBlock
		for _, c := range resp.ToolCalls() {
			called = append(called, c.ToolName)
			res, err := w.cat.Call(w.agent, w.company, c.ToolName, c.Input)
			require.NoError(t, err, "%s %s: %s", c.ToolName, c.Input, agenttools.ErrorJSON(err))
			results = append(results, models.ContentBlock{Type: models.ContentToolResult, ToolUseID: c.ToolUseID, Text: string(res)})
		}
		msgs = append(msgs, models.ModelMessage{Role: models.RoleUser, Content: results})
	}
	assert.Equal(t, []string{"write_document", "create_task"}, called)
	doc, err := w.e.Svc.Documents.Get(w.owner, w.company, "notes")
	require.NoError(t, err)
	assert.Equal(t, "Notes: Launch a bakery in Lisbon", doc.Title)

	// ask_question's input validates against its declared schema.
	resp, err := model.Complete(context.Background(), models.ModelRequest{Tools: specs, Messages: []models.ModelMessage{
		{Role: models.RoleUser, Content: []models.ContentBlock{{Type: models.ContentText, Text: "Should I open a bakery?"}}}}}, nil)
	require.NoError(t, err)
	calls := resp.ToolCalls()
	require.Len(t, calls, 1)
	require.Equal(t, "ask_question", calls[0].ToolName)
	var q agenttools.AskQuestionInput
	dec := json.NewDecoder(strings.NewReader(string(calls[0].Input)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&q))
	assert.NotEmpty(t, q.Question)
	assert.Equal(t, scripted.ToolAskQuestion, agenttools.ToolAskQuestion)
	assert.Equal(t, scripted.ToolWriteDocument, agenttools.ToolWriteDocument)
	assert.Equal(t, scripted.ToolCreateTask, agenttools.ToolCreateTask)
}
