package research_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"holdco/models"
	"holdco/providers/research"
)

// braveServer speaks the Brave Search API's web search: GET
// /res/v1/web/search with q and count, the key in X-Subscription-Token.
func braveServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(handle))
	t.Cleanup(srv.Close)
	return srv.URL + "/res/v1"
}

func TestBraveSearch(t *testing.T) {
	var got *http.Request
	base := braveServer(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"type":  "search",
			"query": map[string]any{"original": r.URL.Query().Get("q")},
			"web": map[string]any{"type": "search", "results": []map[string]any{
				{"title": "Best <strong>sourdough</strong> suppliers", "url": "https://example.com/a", "description": "Flour &amp; <strong>starters</strong> for bakers", "age": "2 days ago"},
				{"title": "Second", "url": "https://example.com/b", "description": "b"},
				{"title": "Third", "url": "https://example.com/c", "description": "c"},
			}},
		})
	})
	b, err := research.NewBrave("brave-key", base, nil)
	require.NoError(t, err)
	res, err := b.Search(context.Background(), "sourdough suppliers", 2)
	require.NoError(t, err)

	require.NotNil(t, got)
	assert.Equal(t, http.MethodGet, got.Method)
	assert.Equal(t, "/res/v1/web/search", got.URL.Path)
	assert.Equal(t, "sourdough suppliers", got.URL.Query().Get("q"))
	assert.Equal(t, "2", got.URL.Query().Get("count"))
	assert.Equal(t, "brave-key", got.Header.Get("X-Subscription-Token"))
	assert.Equal(t, "application/json", got.Header.Get("Accept"))
	assert.Equal(t, []research.Result{
		{Title: "Best sourdough suppliers", URL: "https://example.com/a", Snippet: "Flour & starters for bakers"},
		{Title: "Second", URL: "https://example.com/b", Snippet: "b"},
	}, res, "at most max results, as plain text")

	// More than Brave's maximum is asked as its maximum.
	_, err = b.Search(context.Background(), "x", 50)
	require.NoError(t, err)
	assert.Equal(t, "20", got.URL.Query().Get("count"))
}

func TestBraveSearchNoResults(t *testing.T) {
	base := braveServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"type":"search","query":{"original":"zzz"}}`))
	})
	b, err := research.NewBrave("k", base, nil)
	require.NoError(t, err)
	res, err := b.Search(context.Background(), "zzz", 5)
	require.NoError(t, err)
	assert.NotNil(t, res)
	assert.Empty(t, res)
}

func TestBraveSearchErrors(t *testing.T) {
	for name, c := range map[string]struct {
		status int
		body   string
		code   models.ErrorCode
		detail string
	}{
		"bad key":    {401, `{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid.","status":401}}`, models.CodeUpstreamUnavailable, "HOLDCO_RESEARCH_API_KEY"},
		"rate limit": {429, `{"type":"ErrorResponse","error":{"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan.","status":429}}`, models.CodeRateLimited, "rate limit exceeded"},
		"bad query":  {422, `{"type":"ErrorResponse","error":{"code":"VALIDATION","detail":"Unable to validate request parameter(s)","status":422}}`, models.CodeInvalidArgument, "Unable to validate"},
		"outage":     {503, `upstream down`, models.CodeUpstreamUnavailable, "HTTP 503"},
		"not json":   {200, `<html>`, models.CodeUpstreamUnavailable, "other than search results"},
	} {
		t.Run(name, func(t *testing.T) {
			base := braveServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			})
			b, err := research.NewBrave("k", base, nil)
			require.NoError(t, err)
			_, err = b.Search(context.Background(), "q", 5)
			var me *models.Error
			require.ErrorAs(t, err, &me)
			assert.Equal(t, c.code, me.Code)
			assert.Contains(t, me.Detail, c.detail)
		})
	}
	_, err := research.NewBrave("", "", nil)
	assert.Error(t, err, "no key")
}
