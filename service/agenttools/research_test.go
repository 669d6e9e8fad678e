package agenttools_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/imagegen"
	"holdco/providers/research"
	"holdco/service/agenttools"
	"holdco/service/usecases"
	"holdco/service/webtools"
)

// braveTools is the worker's adapter (app/tools.go) in the tests.
type braveTools struct{ b *research.Brave }

func (r braveTools) Search(ctx context.Context, query string, n int) ([]webtools.Result, error) {
	res, err := r.b.Search(ctx, query, n)
	out := make([]webtools.Result, len(res))
	for i, x := range res {
		out[i] = webtools.Result{Title: x.Title, URL: x.URL, Snippet: x.Snippet}
	}
	return out, err
}

// web_research through the Brave adapter, against a local server speaking
// the Brave Search API.
func TestWebResearchSearchesWithTheProvider(t *testing.T) {
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != "brave-key" {
			http.Error(w, `{"error":{"detail":"unknown"}}`, http.StatusUnauthorized)
			return
		}
		asked = r.URL.Query().Get("q") + " count=" + r.URL.Query().Get("count")
		_ = json.NewEncoder(w).Encode(map[string]any{"web": map[string]any{"results": []map[string]any{
			{"title": "Sourdough <strong>suppliers</strong>", "url": "https://example.com/flour", "description": "Flour for bakers"},
		}}})
	}))
	t.Cleanup(srv.Close)
	b, err := research.NewBrave("brave-key", srv.URL+"/res/v1", nil)
	require.NoError(t, err)
	w := newWorld(t, usecases.Options{Research: braveTools{b}})
	w.fund(t, 10) // web_research costs a credit, held before the call

	var res agenttools.WebResearchResult
	w.call(t, "web_research", map[string]any{"query": "sourdough suppliers"}, &res)
	assert.Equal(t, "sourdough suppliers count=5", asked, "5 results by default")
	assert.Equal(t, []webtools.Result{{Title: "Sourdough suppliers", URL: "https://example.com/flour", Snippet: "Flour for bakers"}}, res.Results)

	_, err = w.cat.Call(w.agent, w.company, "web_research", json.RawMessage(`{"query":"  "}`))
	assert.Equal(t, "query", domainErr(t, err).Field)

	// A refused key is the provider's failure, named for the operator.
	bad, err := research.NewBrave("wrong", srv.URL+"/res/v1", nil)
	require.NoError(t, err)
	w = newWorld(t, usecases.Options{Research: braveTools{bad}})
	w.fund(t, 10)
	_, err = w.cat.Call(w.agent, w.company, "web_research", json.RawMessage(`{"query":"bread"}`))
	de := domainErr(t, err)
	assert.Equal(t, models.CodeUpstreamUnavailable, de.Code)
	assert.Contains(t, de.Detail, "HOLDCO_RESEARCH_API_KEY")
}

// generate_image through the OpenAI Images adapter, against a local server
// speaking the Images API: the PNG it made is stored among the company's
// files.
func TestGenerateImageWithTheOpenAIImagesAPI(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR loaf")
	var prompt string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Prompt string `json:"prompt"`
			Size   string `json:"size"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		if r.URL.Path != "/v1/images/generations" || body.Size != "1536x1024" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"unexpected request","type":"invalid_request_error","param":null,"code":null}}`))
			return
		}
		prompt = body.Prompt
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"created": 1, "data": []map[string]any{{"b64_json": base64.StdEncoding.EncodeToString(png)}}})
	}))
	t.Cleanup(srv.Close)
	g, err := imagegen.New(imagegen.Config{APIKey: "sk-images", BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)
	w := newWorld(t, usecases.Options{Images: g})
	w.fund(t, 10) // generate_image costs 3 credits, held before the call

	var out agenttools.GeneratedImage
	w.call(t, "generate_image", map[string]any{"prompt": "a loaf on a table", "size": "1536x1024", "path": "images/loaf.png"}, &out)
	assert.Equal(t, "a loaf on a table", prompt)
	assert.Equal(t, "images/loaf.png", out.File.Path)
	assert.Equal(t, "image/png", out.File.ContentType)
	assert.EqualValues(t, len(png), out.File.SizeBytes)
	_, stored, err := w.e.Svc.Files.Read(w.agent, w.company, out.File.ID, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, png, stored)

	// The service's refusal is the agent's to fix; nothing is stored.
	_, err = w.cat.Call(w.agent, w.company, "generate_image", json.RawMessage(`{"prompt":"a loaf"}`))
	de := domainErr(t, err)
	assert.Equal(t, models.CodeInvalidArgument, de.Code)
	_, err = w.cat.Call(w.agent, w.company, "generate_image", json.RawMessage(`{"prompt":" "}`))
	assert.Equal(t, "prompt", domainErr(t, err).Field)
	list, err := w.e.Svc.Files.List(w.agent, w.company)
	require.NoError(t, err)
	assert.Len(t, list.Files, 1)
}
