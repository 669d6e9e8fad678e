package agenttools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/service/agenttools"
	"holdco/service/companies"
	"holdco/service/prospects"
	"holdco/service/usecases"
	"holdco/service/webtools"
)

func TestProspectTools(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	var p agenttools.Prospect
	w.call(t, "add_prospect", map[string]any{"name": "Jane Baker", "email": "Jane@Example.com", "organization": "Bakery Co", "source": "https://example.com"}, &p)
	assert.Equal(t, "new", p.Status)
	assert.Equal(t, "Jane@Example.com", p.Email)

	// One prospect per address, whatever its case.
	_, err := w.cat.Call(w.agent, w.company, "add_prospect", json.RawMessage(`{"name":"Again","email":"jane@example.com"}`))
	de := domainErr(t, err)
	assert.Equal(t, models.CodeConflict, de.Code)
	assert.Equal(t, "email", de.Field)
	_, err = w.cat.Call(w.agent, w.company, "add_prospect", json.RawMessage(`{"name":"X","email":"not an address"}`))
	assert.Equal(t, "email", domainErr(t, err).Field)
	_, err = w.cat.Call(w.agent, w.company, "add_prospect", json.RawMessage(`{"name":"X","status":"hot"}`))
	assert.Equal(t, "status", domainErr(t, err).Field)

	var up agenttools.Prospect
	w.call(t, "update_prospect", map[string]any{"prospect_id": p.ID, "status": "contacted", "notes": "Emailed on Monday."}, &up)
	assert.Equal(t, "contacted", up.Status)
	assert.Equal(t, "Emailed on Monday.", up.Notes)
	assert.Equal(t, "Jane Baker", up.Name, "fields left out stay")
	w.call(t, "add_prospect", map[string]any{"name": "Ben"}, nil)

	var list agenttools.ProspectList
	w.call(t, "list_prospects", map[string]any{"statuses": []string{"contacted"}}, &list)
	require.Len(t, list.Prospects, 1)
	assert.Equal(t, p.ID, list.Prospects[0].ID)
	w.call(t, "list_prospects", map[string]any{"limit": 1}, &list)
	require.Len(t, list.Prospects, 1)
	assert.Equal(t, "Ben", list.Prospects[0].Name, "newest first")
	require.NotEmpty(t, list.Next)
	var last agenttools.ProspectList
	w.call(t, "list_prospects", map[string]any{"limit": 1, "before": list.Next}, &last)
	assert.Equal(t, "Jane Baker", last.Prospects[0].Name)
	assert.Empty(t, last.Next)

	// Another tenant's prospect is not reachable through this company.
	e := w.e
	bob, bobCong := e.User(t, "bob@example.com")
	co, err := e.Svc.CreateCompany(bob, bobCong, companies.CompanyInput{Name: "Bob Tools"})
	require.NoError(t, err)
	theirs, err := e.Svc.Prospects.Add(bob, co.ID, prospects.Input{Name: new("Theirs")})
	require.NoError(t, err)
	_, err = w.cat.Call(w.agent, w.company, "update_prospect", json.RawMessage(`{"prospect_id":"`+theirs.ID+`","status":"won"}`))
	assert.Equal(t, models.CodeNotFound, domainErr(t, err).Code)
	_, err = e.Svc.Prospects.List(w.agent, co.ID, prospects.ListInput{})
	assert.Equal(t, models.CodeForbidden, domainErr(t, err).Code)
}

func TestResearchAndImagesAnswerNotConfigured(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	w.fund(t, 10) // both are billable: their price is held before the call
	for name, args := range map[string]string{
		"web_research":   `{"query":"sourdough suppliers"}`,
		"generate_image": `{"prompt":"a loaf of bread"}`,
	} {
		_, err := w.cat.Call(w.agent, w.company, name, json.RawMessage(args))
		de := domainErr(t, err)
		assert.Equal(t, agenttools.CodeNotConfigured, de.Code, name)
		assert.Contains(t, de.Detail, "not configured", name)
		assert.NotEmpty(t, de.Extra["setting"], name)
	}
}

// fakeImages answers a fixed PNG (the tool stores what the provider made).
type fakeImages struct{ prompt string }

func (f *fakeImages) Generate(_ context.Context, prompt, size string) ([]byte, error) {
	f.prompt = prompt
	return []byte("\x89PNG\r\n\x1a\nfake"), nil
}

func TestGenerateImageStoresAFile(t *testing.T) {
	w := newWorld(t, usecases.Options{})
	imgs := &fakeImages{}
	// Without billing: the act alone, unpaid.
	cat := agenttools.New(agenttools.Services{Files: w.e.Svc.Files, Web: webtools.New(w.e.Svc.Files.Core(), nil, w.e.Svc.Files, nil, imgs)})
	res, err := cat.Call(w.agent, w.company, "generate_image", json.RawMessage(`{"prompt":"a loaf","path":"images/loaf.png"}`))
	require.NoError(t, err, string(agenttools.ErrorJSON(err)))
	var out agenttools.GeneratedImage
	require.NoError(t, json.Unmarshal(res, &out))
	assert.Equal(t, "images/loaf.png", out.File.Path)
	assert.Equal(t, "image/png", out.File.ContentType)
	assert.Equal(t, "a loaf", imgs.prompt)
}
